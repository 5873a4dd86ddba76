#!/usr/bin/env bash
# Installs the Debian 12 packages kbench builds with, if any are missing.
# Uses sudo when not root. CUDA 13 is expected at /usr/local/cuda.
set -euo pipefail
packages=(
  cmake g++ make pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  libcpp-httplib-dev libsqlite3-dev libssl-dev libgtest-dev libgmock-dev
  clang-format systemd
)
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
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "deps: CUDA 13 is expected at /usr/local/cuda (nvcc, NVRTC, cuBLAS)." >&2
  exit 1
fi
