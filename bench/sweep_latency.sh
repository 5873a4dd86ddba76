#!/usr/bin/env bash
# Per-submit latency over both problem suites: `kbctl sweep --serial` (each
# wall time is one submit's) with a fresh kbd, local worker and data dir
# per round, so nothing is served from a cache. With a second kbrunner, an
# A/B: rounds alternate between the bundle's kbrunner and that one, all
# else the same. Run from the repository root on a GPU host:
#   bench/sweep_latency.sh BUNDLE OUT_DIR [OTHER_KBRUNNER] [ROUNDS]
# OUT_DIR gets sweeps.txt (the tables, with "wall per job: p50 ...") and
# runner-ROUND-SIDE.txt (the runner's "correctness in .. ms, timing in ..
# ms" lines).
set -uo pipefail
bundle=$(cd "$1" && pwd)
out=$2
other=${3:-}
rounds=${4:-2}
mkdir -p "$out"
work=$(mktemp -d)
trap 'cp "$work/kbrunner.a" "$bundle/bin/.kbrunner.next" 2>/dev/null &&
  mv -f "$bundle/bin/.kbrunner.next" "$bundle/bin/kbrunner"; rm -rf "$work"' EXIT
export KBENCH_SOURCE_DIR=${KBENCH_SOURCE_DIR:-$PWD}
mkdir -p "$work/k"
for d in kernels/problems/*/; do
  [ -f "$d/example.cu" ] && cp "$d/example.cu" "$work/k/$(basename "$d").cu"
done
cp kernels/examples/gather_linear_naive.cu \
  kernels/examples/gather_linear_naive_bf16.cu "$work/k/"
cp "$bundle/bin/kbrunner" "$work/kbrunner.a"
sides=a
if [ -n "$other" ]; then cp "$other" "$work/kbrunner.b"; sides="a b"; fi
for round in $(seq "$rounds"); do
  for side in $sides; do
    # Replaced by a rename, not written in place: the last round's runner
    # may still be exiting, and writing an executing file fails (ETXTBSY),
    # which left the other side running the same kbrunner (H200,
    # 2026-12-05). The digest in sweeps.txt says which one ran.
    if ! { cp "$work/kbrunner.$side" "$bundle/bin/.kbrunner.next" &&
           mv -f "$bundle/bin/.kbrunner.next" "$bundle/bin/kbrunner"; }; then
      echo "cannot install kbrunner $side" >&2
      exit 1
    fi
    dd=$work/data-$side-$round
    mkdir -p "$dd"
    "$bundle/bin/kbd" --listen 127.0.0.1:0 --port-file "$dd/port" \
      --data-dir "$dd" --local-worker=1 --http-listen off \
      --problems-dir kernels/problems </dev/null >/dev/null 2>"$dd/kbd.log" &
    pid=$!
    for _ in $(seq 300); do [ -s "$dd/port" ] && break; sleep 0.1; done
    for suite in core collectives; do
      echo "== kbrunner $side ($(sha256sum < "$bundle/bin/kbrunner" | cut -c1-12)), round $round, --suite $suite" >> "$out/sweeps.txt"
      timeout 300 "$bundle/bin/kbctl" --server "127.0.0.1:$(cat "$dd/port")" \
        sweep --serial --suite "$suite" "$work/k" >> "$out/sweeps.txt" 2>&1
    done
    kill "$pid"
    wait "$pid" 2>/dev/null
    grep "correctness in" "$dd/kbd.log" > "$out/runner-$round-$side.txt"
  done
done
grep -E "^==|wall per job" "$out/sweeps.txt"
