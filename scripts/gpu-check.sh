#!/usr/bin/env bash
# Everything that needs a GPU, run from a bundle (make bundle) on a GPU host:
#   1. the gpu-labelled ctest suite;
#   2. the demo (kbd + a local worker per GPU, then `kbctl submit`);
#   3. bench/tool_latency, bench/agent_session and bench/timing_truth (with
#      an ncu run of the same kernel) against the demo's warm kbd.
# Usage (from the repository root):
#   scripts/gpu-check.sh BUNDLE OUT_DIR [all|tests|bench] [extra ctest args]
# ("tests": step 1 only; "bench": steps 2 and 3). Logs and figures land in
# OUT_DIR.
set -uo pipefail
bundle=$(cd "${1:-bundle}" && pwd)
out=${2:-/tmp/kbench-gpu-check}
what=${3:-all}
shift $(( $# < 3 ? $# : 3 ))
mkdir -p "$out"
export KBENCH_SOURCE_DIR=$PWD
[ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv | tee "$out/gpu.txt"

if [ "$what" != bench ]; then
  echo "== ctest -L gpu"
  start=$(date +%s)
  timeout 540 "$bundle/run-gpu-tests.sh" "$@" 2>&1 | tee "$out/ctest-gpu.log"
  echo "ctest exit ${PIPESTATUS[0]} in $(( $(date +%s) - start )) s"
  cp "$bundle/Testing/Temporary/LastTest.log" "$out/ctest-gpu-full.log" 2>/dev/null
  [ "$what" = tests ] && exit 0
fi

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

echo "== bench/timing_truth: ncu's gpu__time_duration of the naive kernel at the medium shape"
# A second kbd, under ncu, profiles every launch of gather_linear (kernel
# replay, caches flushed as ours are); its log is compared below with the
# medians the service reports without ncu.
ncu_dir=$(mktemp -d)
if command -v ncu > /dev/null; then
  ncu --target-processes all -k regex:'^gather_linear$' \
    --metrics gpu__time_duration.sum --clock-control none --csv \
    --log-file "$out/ncu-medium.csv" \
    "$bundle/bin/kbd" --listen 127.0.0.1:50061 --http-listen off \
    --local-worker=1 --data-dir "$ncu_dir" > "$out/ncu-kbd.log" 2>&1 &
  ncu_pid=$!
  for _ in $(seq 60); do
    "$bundle/bin/kbctl" --server 127.0.0.1:50061 specs > /dev/null 2>&1 && break
    sleep 1
  done
  timeout 300 "$bundle/bin/kbctl" --server 127.0.0.1:50061 submit \
    kernels/examples/gather_linear_naive.cu --shapes medium --trials 1 \
    > "$out/ncu-submit.log" 2>&1
  pkill -TERM -f 'kbd --listen 127.0.0.1:50061'
  wait "$ncu_pid"
fi
echo "== bench/timing_truth (10 submits at the default and medium shapes)"
timeout 300 "$bundle/bin/timing_truth" --server 127.0.0.1:50051 \
  --kernel kernels/examples/gather_linear_naive.cu --submits 10 --checks 30 \
  --json "$out/truth-default.json" | tee "$out/truth.md"
timeout 300 "$bundle/bin/timing_truth" --server 127.0.0.1:50051 \
  --kernel kernels/examples/gather_linear_naive.cu --shapes medium \
  --submits 10 --checks 0 --ncu-csv "$out/ncu-medium.csv" \
  --ncu-grid "(256, 4, 1)" --json "$out/truth-medium.json" | tee -a "$out/truth.md"

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
