#!/usr/bin/env bash
# Health checks in a connection storm: one daemon on the CPU device, a
# client with 4096 connections in flight against lenet5 at 20 000 req/s
# (far over what the node serves, so that the daemon's connection cap fills
# and refused clients reconnect at once), and meanwhile, ROUNDS times a
# second apart, GET /v2/health/live, /v2/health/ready, /metrics and
# /api/v1/status on fresh connections, as Kubernetes' probes (which dial
# anew for each) and a scrape make them. Prints how many were
# answered 200. Needs bin/gpuletd (BIN= another build), the ONNX Runtime
# library (make deps) and curl.
#
#   scripts/soak/checks-in-a-storm.sh [ROUNDS]
set -euo pipefail
rounds=${1:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
daemon_env "$work" "$work/repo"
export GPULETD_DEVICES=cpu
"$bin" models synth "$work/repo" --models lenet5 >/dev/null
serve_ready
"$bin" load --url "$url" --model lenet5 --rate 20000 --duration $((rounds + 8))s --concurrency 4096 \
  >"$work/load.log" 2>&1 &
sleep 5
ok=0 total=0
for _ in $(seq 1 "$rounds"); do
  for path in /v2/health/live /v2/health/ready /metrics /api/v1/status; do
    code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$url$path" || true)
    total=$((total + 1))
    [ "$code" = 200 ] && ok=$((ok + 1))
  done
  sleep 1
done
open=$(curl -s -m 5 "$url/metrics" | awk '$1 == "gpuletd_http_connections" {print $2}' || true)
echo "checks answered 200: $ok of $total; connections open at the end: ${open:-?} (cap 1024)"
