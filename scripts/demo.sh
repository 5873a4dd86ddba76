#!/usr/bin/env bash
# The kbench demo: starts kbd (embedded SQLite store; a local kbworker per
# GPU when there is one), submits the example kernel, prints the report.
# Usage: scripts/demo.sh [BIN_DIR]   (default build/bin; in a bundle: bin/)
# Env: KBENCH_DEMO_ADDR (default 127.0.0.1:50051), KBENCH_DEMO_DIR (state),
#      KBENCH_DEMO_STOP=1 to stop kbd at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-}
if [ -z "$bin" ]; then
  if [ -x "$here/kbd" ]; then bin=$here; else bin=$here/../build/bin; fi
fi
bin=$(cd "$bin" && pwd)
root=$(cd "$bin/.." && pwd)
kernel=$root/share/kbench/examples/gather_linear_naive.cu
[ -f "$kernel" ] || kernel=$here/../kernels/examples/gather_linear_naive.cu
addr=${KBENCH_DEMO_ADDR:-127.0.0.1:50051}
state=${KBENCH_DEMO_DIR:-$PWD/.kbench/demo}
mkdir -p "$state"
export KBENCH_SERVER=$addr

# One demo server at a time: stop the previous one.
if [ -f "$state/kbd.pid" ] && kill -0 "$(cat "$state/kbd.pid")" 2>/dev/null; then
  kill "$(cat "$state/kbd.pid")" && sleep 1
fi
rm -f "$state/port" "$state/http_port"
# kbd and its workers must not hold this script's stdout: a caller piping
# the demo (| tee) would never see the end of it.
"$bin/kbd" --listen "$addr" --data-dir "$state" --local-worker=auto \
  --http-listen "${KBENCH_DEMO_HTTP:-127.0.0.1:0}" --http-port-file "$state/http_port" \
  --port-file "$state/port" </dev/null >/dev/null 2>"$state/kbd.log" &
echo $! > "$state/kbd.pid"
for _ in $(seq 100); do [ -s "$state/port" ] && break; sleep 0.1; done
if [ ! -s "$state/port" ]; then
  echo "demo: kbd did not start; its log:" >&2
  tail -20 "$state/kbd.log" >&2
  exit 2
fi
http="127.0.0.1:$(cat "$state/http_port" 2>/dev/null)"
echo "== kbd is serving gRPC on $addr, HTTP tools on http://$http/v1/tools and the dashboard on http://$http/"
echo "   (store: $state/kbench.db, log: $state/kbd.log)"

gpus=0
if "$bin/kbctl" specs >/dev/null 2>&1; then gpus=1; fi
if grep -q "starting [1-9][0-9]* local worker" "$state/kbd.log"; then
  # Local workers are starting: wait for the first to connect.
  for _ in $(seq 120); do
    if "$bin/kbctl" specs >/dev/null 2>&1; then gpus=1; break; fi
    sleep 0.5
  done
fi

status=0
if [ "$gpus" = 1 ]; then
  echo "== GPU"
  "$bin/kbctl" specs
  echo
  echo "== kbctl submit $(basename "$kernel")   (correctness on every public shape, then timing against the reference)"
  "$bin/kbctl" submit "$kernel" || status=$?
else
  echo "== No NVIDIA GPU here: correctness, timing and profiling need an NVIDIA GPU"
  echo "   (run this demo on a GPU host, or connect a kbworker to $addr)."
  echo "   The compile path works without one:"
  echo
  echo "== kbctl compile $(basename "$kernel")"
  "$bin/kbctl" compile "$kernel" || status=$?
fi

cat <<EOT

== Where to look next
  kbctl list                        jobs so far (KBENCH_SERVER=$addr)
  kbctl status <job id>             one job's full report; add --json for scripts
  kbctl problems --verbose          the problems and their shape sets
  kbctl check|profile|submit FILE   your own kernel; the contract: docs/kernel-contract.md
  kbctl mcp                         the tools for an agent, over MCP (stdio)
  curl -H 'Content-Type: application/json' -d '{}' http://$http/v1/tools/get_problem
                                    the same tools over HTTP/JSON
  http://$http/                     the dashboard: sessions, jobs, workers (open it in a browser)
  kbd log:                          $state/kbd.log
EOT
if [ "${KBENCH_DEMO_STOP:-0}" = 1 ]; then
  kill "$(cat "$state/kbd.pid")" 2>/dev/null || true
  echo "  (kbd stopped)"
else
  echo "  kbd is still running (pid $(cat "$state/kbd.pid")); stop it with: kill $(cat "$state/kbd.pid")"
fi
exit $status
