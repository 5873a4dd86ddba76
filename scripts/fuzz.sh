#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, see
# tests/fuzz/CMakeLists.txt) and runs each for a bounded time, starting from
# a copy of its seed corpus (the repository is never written). Before
# fuzzing, every reproducer under tests/fuzz/crashes/<target>/ is run once,
# so a finding that was fixed stays fixed.
#
#   scripts/fuzz.sh [BUILD_DIR] [TARGET...]
#
# BUILD_DIR defaults to build-fuzz (relative to the repository root); it
# may be left out before a TARGET (any name ending in _fuzz is a target).
# The TARGETs (e.g. mcp_server_fuzz) default to every tests/fuzz/*_fuzz.cc.
#
# Environment:
#   FUZZ_SECONDS     fuzzing time per target, in seconds (default 30); 0
#                    runs the seeds and reproducers once, without fuzzing
#   FUZZ_TIMEOUT     seconds one input may take before it is a finding (10)
#   FUZZ_RSS_MB      memory limit per target, MiB (2048)
#   FUZZ_JOBS        parallel build jobs (nproc)
#   FUZZ_BUILD=0     do not configure or build (use what BUILD_DIR holds)
#   FUZZ_BUILD_LOCK  a file to flock around configure and build (shared hosts)
#   FUZZ_REGRESSION=0  skip the tests/fuzz/crashes/ reproducers
#   FUZZ_KEEP_CORPUS=DIR  keep each target's grown corpus in DIR/<target>
#
# Exit status: 0 when every target ran clean; 1 when any target found a
# crash, leak, UBSan report, timeout or out-of-memory (its reproducer path
# is printed, with the command that replays it); 2 for a usage or build
# problem. Logs are in BUILD_DIR/fuzz-logs/, reproducers in
# BUILD_DIR/fuzz-artifacts/<target>/.
#
# One target by hand, without this script or ctest:
#   cmake --build build-fuzz --target launch_plan_fuzz
#   build-fuzz/bin/launch_plan_fuzz -max_total_time=60 -max_len=8192 \
#     -dict=tests/fuzz/dicts/launch_plan_fuzz.dict $(mktemp -d) \
#     tests/fuzz/corpus/launch_plan_fuzz
#   build-fuzz/bin/launch_plan_fuzz path/to/crash-file   # replay one input
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="build-fuzz"
# The first argument is the build dir unless it looks like a target name.
if [ $# -gt 0 ] && [[ "$1" != *_fuzz ]]; then
  build="$1"
  shift
fi
case "$build" in /*) ;; *) build="$root/$build" ;; esac
seconds="${FUZZ_SECONDS:-30}"
timeout="${FUZZ_TIMEOUT:-10}"
rss_mb="${FUZZ_RSS_MB:-2048}"
jobs="${FUZZ_JOBS:-$(nproc)}"
fuzz_dir="$root/tests/fuzz"

# Largest input per target, in bytes: big enough for what the parser sees in
# practice, small enough to keep each execution fast.
max_len_of() {
  case "$1" in
    expr_fuzz) echo 512 ;;
    untrusted_input_fuzz) echo 1024 ;;
    launch_plan_fuzz) echo 8192 ;;
    *) echo 16384 ;;
  esac
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for src in "$fuzz_dir"/*_fuzz.cc; do targets+=("$(basename "$src" .cc)"); done
fi
for t in "${targets[@]}"; do
  if [ ! -f "$fuzz_dir/$t.cc" ]; then
    echo "fuzz: no target '$t' (tests/fuzz/$t.cc); targets are:" \
      $(cd "$fuzz_dir" && ls *_fuzz.cc | sed 's/\.cc$//') >&2
    exit 2
  fi
done

# Runs "$@" holding FUZZ_BUILD_LOCK, if set; the wait is added to $waited.
waited=0
locked() {
  [ -n "${FUZZ_BUILD_LOCK:-}" ] || { "$@"; return; }
  local fd t0=$SECONDS rc
  exec {fd}>>"$FUZZ_BUILD_LOCK"
  flock "$fd"
  waited=$((waited + SECONDS - t0))
  "$@"
  rc=$?
  exec {fd}>&-
  return $rc
}

if [ "${FUZZ_BUILD:-1}" != 0 ]; then
  for tool in clang clang++ cmake; do
    if ! command -v "$tool" >/dev/null; then
      echo "fuzz: $tool is missing; scripts/deps.sh installs it" >&2
      exit 2
    fi
  done
  start=$SECONDS
  if ! grep -qs '^KBENCH_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    echo "fuzz: configuring $build (clang, KBENCH_FUZZ=ON)" >&2
    mkdir -p "$build"
    generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    if ! locked cmake -S "$root" -B "$build" "${generator[@]}" \
        -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_BUILD_TYPE=Debug -DKBENCH_FUZZ=ON -DBUILD_TESTING=OFF \
        >"$build/fuzz-configure.log" 2>&1; then
      cat "$build/fuzz-configure.log" >&2
      echo "fuzz: configure failed" >&2
      exit 2
    fi
  fi
  echo "fuzz: building ${targets[*]}" >&2
  if ! locked cmake --build "$build" -j "$jobs" --target "${targets[@]}" >&2; then
    echo "fuzz: build failed" >&2
    exit 2
  fi
  echo "fuzz: configure and build took $((SECONDS - start - waited)) s" \
    "${FUZZ_BUILD_LOCK:+(plus $waited s waiting for the lock)}" >&2
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
logs="$build/fuzz-logs"
mkdir -p "$logs"
work="$(mktemp -d "${TMPDIR:-/tmp}/kbench-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The lines of a libFuzzer log that say what went wrong.
report() {
  grep -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|fuzz invariant broken|^  detail:|^SUMMARY:' \
    "$1" | head -20 >&2
}

passed=0
failed=0
failures=()
for t in "${targets[@]}"; do
  bin="$build/bin/$t"
  if [ ! -x "$bin" ]; then
    echo "fuzz: $bin is not built (run without FUZZ_BUILD=0)" >&2
    exit 2
  fi
  artifacts="$build/fuzz-artifacts/$t/"
  mkdir -p "$artifacts"
  log="$logs/$t.log"
  : >"$log"
  status=ok

  # Findings kept in the tree: each must now run clean.
  if [ "${FUZZ_REGRESSION:-1}" != 0 ] && [ -d "$fuzz_dir/crashes/$t" ]; then
    for f in "$fuzz_dir/crashes/$t"/*; do
      [ -f "$f" ] || continue
      if ! "$bin" -rss_limit_mb="$rss_mb" -timeout="$timeout" "$f" \
          >"$log.one" 2>&1; then
        echo "fuzz: $t: FAILED on the kept reproducer $f:" >&2
        report "$log.one"
        echo "fuzz:   replay: $bin $f" >&2
        status=failed
      fi
      cat "$log.one" >>"$log"
      rm -f "$log.one"
    done
  fi

  if [ "$status" = ok ]; then
    corpus="$work/$t"
    mkdir -p "$corpus"
    [ -d "$fuzz_dir/corpus/$t" ] && cp -R "$fuzz_dir/corpus/$t/." "$corpus/"
    dict=()
    [ -f "$fuzz_dir/dicts/$t.dict" ] && dict=(-dict="$fuzz_dir/dicts/$t.dict")
    if [ "$seconds" -gt 0 ]; then
      echo "fuzz: $t for ${seconds} s (max_len $(max_len_of "$t"))" >&2
      limit=(-max_total_time="$seconds")
    else
      echo "fuzz: $t: seeds only" >&2
      limit=(-runs=0)
    fi
    "$bin" "${limit[@]}" -max_len="$(max_len_of "$t")" \
      -rss_limit_mb="$rss_mb" -timeout="$timeout" -print_final_stats=1 \
      -artifact_prefix="$artifacts" "${dict[@]}" "$corpus" >>"$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
      status=failed
      reproducer="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
      echo "fuzz: $t: FINDING (exit $rc); the report:" >&2
      report "$log"
      echo "fuzz:   log: $log" >&2
      if [ -n "$reproducer" ]; then
        echo "fuzz:   reproducer: $reproducer" >&2
        echo "fuzz:   replay: $bin $reproducer" >&2
      fi
    else
      stats="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')"
      echo "fuzz: $t: ok, ${stats:-?} inputs run" >&2
    fi
    if [ -n "${FUZZ_KEEP_CORPUS:-}" ]; then
      mkdir -p "$FUZZ_KEEP_CORPUS/$t"
      cp -R "$corpus/." "$FUZZ_KEEP_CORPUS/$t/"
    fi
  fi
  if [ "$status" = ok ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$t")
  fi
done

echo "fuzz: $passed passed, $failed failed"
if [ $failed -ne 0 ]; then
  echo "fuzz: findings in ${failures[*]}; see above and $logs" >&2
  exit 1
fi
exit 0
