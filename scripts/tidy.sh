#!/usr/bin/env bash
# clang-tidy (.clang-tidy) on the C++ sources a change adds or modifies
# (renames alone are skipped), against TIDY_BASE (default: the parent
# commit). Usage: scripts/tidy.sh BUILD_DIR   (needs compile_commands.json)
set -euo pipefail
build=${1:-build}
base=${TIDY_BASE:-HEAD~1}
cd "$(dirname "$0")/.."
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  echo "tidy: no commit $base here (a shallow clone?); nothing to compare" >&2
  exit 0
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy: $build/compile_commands.json is missing; configure first" >&2
  exit 2
fi
mapfile -t files < <(git diff --name-only -M --diff-filter=AM "$base" -- '*.cc' |
  grep -v '^tests/fuzz/' || true)
if [ ${#files[@]} -eq 0 ]; then
  echo "tidy: no C++ sources changed against $base" >&2
  exit 0
fi
echo "tidy: ${#files[@]} file(s) changed against $base" >&2
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet
