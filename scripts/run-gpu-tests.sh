#!/usr/bin/env bash
# Runs the gpu-labelled tests of a bundle on a GPU host:
#   ./run-gpu-tests.sh [extra ctest args]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec ctest --test-dir "$here" -L gpu --output-on-failure "$@"
