#!/usr/bin/env bash
# The throughput scaling table of issue 17: one-GPU submits on 1, 2, 4 ...
# GPUs of this host, each count with a fresh kbd (--local-worker N: GPUs 0
# to N-1) and data dir, so nothing is served from a cache. Run from the
# repository root on a GPU host:
#   bench/scaling.sh BUNDLE OUT_DIR [GPU_COUNTS] [JOBS_PER_GPU]
# GPU_COUNTS defaults to every power of two up to the GPUs nvidia-smi
# lists ("1 2 4 8" on eight). OUT_DIR gets scaling-N.json and
# scaling.md: one row per count, and each count's rate against N times the
# one-GPU rate (the target is >= 0.95).
set -uo pipefail
bundle=$(cd "$1" && pwd)
out=$2
jobs_per_gpu=${4:-16}
if [ -n "${3:-}" ]; then
  counts=$3
else
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  counts=""
  for n in 1 2 4 8; do [ "$n" -le "$gpus" ] && counts="$counts $n"; done
fi
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KBENCH_SOURCE_DIR=${KBENCH_SOURCE_DIR:-$PWD}
kernel=kernels/examples/gather_linear_naive.cu
base=""
: > "$out/scaling.md"
for n in $counts; do
  dd=$work/data-$n
  mkdir -p "$dd"
  "$bundle/bin/kbd" --listen 127.0.0.1:0 --port-file "$dd/port" \
    --data-dir "$dd" --local-worker="$n" --http-listen off \
    --problems-dir kernels/problems </dev/null >/dev/null 2>"$dd/kbd.log" &
  pid=$!
  for _ in $(seq 300); do [ -s "$dd/port" ] && break; sleep 0.1; done
  addr=127.0.0.1:$(cat "$dd/port")
  # Every worker connected (its runner up) before the clock starts.
  timeout 1200 "$bundle/bin/scaling" --server "$addr" --kernel "$kernel" \
    --wait-gpus "$n" \
    --jobs-per-gpu "$jobs_per_gpu" --json "$out/scaling-$n.json" \
    > "$dd/row.md" 2> "$dd/scaling.err"
  rc=$?
  kill "$pid"
  wait "$pid" 2>/dev/null
  [ -s "$out/scaling.md" ] || head -2 "$dd/row.md" >> "$out/scaling.md"
  tail -1 "$dd/row.md" >> "$out/scaling.md"
  [ $rc -ne 0 ] && { echo "N=$n: scaling exit $rc: $(cat "$dd/scaling.err")" >&2; }
  rate=$(python3 -c "import json;print(json.load(open('$out/scaling-$n.json'))['jobs_per_s'])" 2>/dev/null)
  [ -z "$base" ] && [ "$n" = 1 ] && base=$rate
  if [ -n "$base" ] && [ -n "$rate" ]; then
    python3 -c "print('N=$n: %.2f jobs/s = %.3f x N x the one-GPU rate (target >= 0.95)' % ($rate, $rate / ($n * $base)))" >> "$out/scaling.txt"
  fi
done
cat "$out/scaling.md"
cat "$out/scaling.txt" 2>/dev/null
