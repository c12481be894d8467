#!/usr/bin/env bash
# gRPC answers left unread: the demo model "tokens" (ids [N,T] INT64 ->
# embeddings [N,T,4] FP32 and their mean) with an SLO of 20 s is sent, on
# one gRPC connection whose client reads nothing (a 64 KiB window), CALLS
# calls at once (default 64) of IDS ids each (default 1 000 000: 8 MB
# messages, answers of 16 MB), left unread for HOLD (default 12s), then,
# with READ=1, read. Every 2 s it prints the daemon's resident memory and
# what the budget of what requests hold beside their bodies holds; then
# the answers abandoned, the daemon's log line if it closed the
# connection, and its peak memory (VmHWM; the executor's is apart).
# BODY_TIMEOUT sets limits.body_timeout (default 30s). BIN picks the build
# (default bin/gpuletd).
#
#   scripts/bench/unread-grpc-answers.sh; BODY_TIMEOUT=5s scripts/bench/unread-grpc-answers.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
(cd "$root" && go build -o "$work/unread" ./scripts/bench/unread-grpc-answers)
demo_env tokens
set_slo tokens 20s
export GPULETD_LIMITS_BODY_TIMEOUT=${BODY_TIMEOUT:-30s}
serve_ready
metric() { curl -s -H 'Host: 127.0.0.1' "$url/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
hold=${HOLD:-12s}
"$work/unread" -addr "127.0.0.1:$((port + 1))" -calls "${CALLS:-64}" -ids "${IDS:-1000000}" -hold "$hold" ${READ:+-read} &
client=$!
for i in $(seq 1 $((${hold%s} / 2))); do
  sleep 2
  printf '%3ds: resident %s, beside the bodies %s\n' $((2 * i)) \
    "$(awk '/VmRSS/{printf "%d MB", $2/1024}' "/proc/$daemon/status")" \
    "$(metric gpuletd_http_inflight_beside_bytes | awk '{printf "%d MB", $1/1e6}')"
done
wait "$client"
sleep 1
echo "answers abandoned: $(metric 'gpuletd_grpc_answers_abandoned_total{model="tokens"}' || true)"
grep -o '"msg":"closing a gRPC connection[^}]*' "$work/serve.log" || true
echo "the daemon's peak memory: $(awk '/VmHWM/{printf "%d MB", $2/1024}' "/proc/$daemon/status")"
kill "$daemon"
wait "$daemon" || true
