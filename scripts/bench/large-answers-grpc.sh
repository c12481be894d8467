#!/usr/bin/env bash
# Large answers over gRPC: the demo model "tokens" (ids [N,T] INT64 ->
# embeddings [N,T,4] FP32 and their mean) with an SLO of 20 s is sent, over
# the gRPC listener in raw_input_contents, a closed loop of CONCURRENCY
# requests (default 8) of T ids each (default 1 000 000: an 8 MB message,
# an answer of 16 MB of floats) for DURATION (default 10s) by gpuletd load;
# it prints the load's report and the daemon's peak memory (VmHWM; the
# executor's is apart). BIN picks the build (default bin/gpuletd).
#
#   scripts/bench/large-answers-grpc.sh; CONCURRENCY=32 scripts/bench/large-answers-grpc.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
demo_env tokens
set_slo tokens 20s
serve_ready
"$root/bin/gpuletd" load tokens --url "$url" --grpc "127.0.0.1:$((port + 1))" --shape "ids:${T:-1000000}" \
  --arrival closed --concurrency "${CONCURRENCY:-8}" --duration "${DURATION:-10s}" 2>&1 |
  grep -E '^(arrivals|requests|failed|latency)'
echo "the daemon's peak memory: $(awk '/VmHWM/{printf "%d MB", $2/1024}' "/proc/$daemon/status")"
kill "$daemon"
wait "$daemon" || true
