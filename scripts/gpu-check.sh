#!/usr/bin/env bash
# Everything that needs a GPU, run from a bundle (make bundle) on a GPU host:
#   1. the gpu-labelled ctest suite;
#   2. the demo (kbd + a local worker per GPU, then `kbctl submit`);
#   3. bench/tool_latency and bench/agent_session against the demo's warm kbd.
# Usage (from the repository root): scripts/gpu-check.sh BUNDLE OUT_DIR
# Logs and figures land in OUT_DIR.
set -uo pipefail
bundle=$(cd "${1:-bundle}" && pwd)
out=${2:-/tmp/kbench-gpu-check}
mkdir -p "$out"
export KBENCH_SOURCE_DIR=$PWD
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv | tee "$out/gpu.txt"

echo "== ctest -L gpu"
start=$(date +%s)
timeout 300 "$bundle/run-gpu-tests.sh" "$@" 2>&1 | tee "$out/ctest-gpu.log"
echo "ctest exit ${PIPESTATUS[0]} in $(( $(date +%s) - start )) s"
cp "$bundle/Testing/Temporary/LastTest.log" "$out/ctest-gpu-full.log" 2>/dev/null

echo "== demo"
KBENCH_DEMO_DIR=$out/demo KBENCH_DEMO_ADDR=127.0.0.1:50051 \
  timeout 60 "$bundle/bin/kbench-demo" "$bundle/bin" 2>&1 | tee "$out/demo.log"

echo "== bench/tool_latency"
timeout 180 "$bundle/bin/tool_latency" --server 127.0.0.1:50051 \
  --kernel kernels/examples/gather_linear_naive.cu --iterations 30 \
  --json "$out/latency.json" | tee "$out/latency.md"
echo "== bench/agent_session (a scripted agent over MCP: 14 tool calls)"
if [ -x "$bundle/bin/agent_session" ]; then
  timeout 120 "$bundle/bin/agent_session" --server 127.0.0.1:50051 \
    --kbctl "$bundle/bin/kbctl" --source-dir "$PWD" | tee "$out/agent_session.md"
fi

echo "== more submits: bf16, and the two-stage plan on the large shape"
for args in "kernels/examples/gather_linear_naive_bf16.cu" \
            "kernels/examples/gather_linear_two_stage.cu --shapes large --trials 1"; do
  echo "-- kbctl submit $args"
  # shellcheck disable=SC2086
  timeout 120 "$bundle/bin/kbctl" --server 127.0.0.1:50051 submit $args
done 2>&1 | tee "$out/submits.log"
kill "$(cat "$out/demo/kbd.pid")" 2>/dev/null
sleep 1
cp "$out/demo/kbd.log" "$out/kbd.log" 2>/dev/null
