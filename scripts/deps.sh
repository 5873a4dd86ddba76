#!/usr/bin/env bash
# Installs the Debian 12 packages kbench builds with, if any are missing.
# Uses sudo when not root. CUDA 13 is expected at /usr/local/cuda.
# The browser test of the dashboard needs Debian's chromium, Node.js and
# tests/browser/node_modules (playwright-core, pinned by its lockfile).
set -euo pipefail
packages=(
  cmake g++ make pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  libcpp-httplib-dev libsqlite3-dev libssl-dev libgtest-dev libgmock-dev
  clang-format clang-tidy ccache ninja-build lld systemd
  clang libclang-rt-14-dev  # scripts/fuzz.sh: clang's libFuzzer, ASan, UBSan
  chromium fonts-dejavu-core
)
# Node.js (and its npm) unless a node is already installed, e.g. NodeSource's
# nodejs, which bundles npm and conflicts with Debian's npm package.
if ! command -v node >/dev/null 2>&1; then packages+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then packages+=(npm); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -d "$root/tests/browser/node_modules" ]; then
  echo "deps: npm ci --prefix tests/browser (playwright-core)" >&2
  npm ci --prefix "$root/tests/browser" --no-audit --no-fund >&2
fi
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "deps: CUDA 13 is expected at /usr/local/cuda (nvcc, NVRTC, cuBLAS)." >&2
  exit 1
fi
