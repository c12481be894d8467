#!/usr/bin/env bash
# A model unloaded while another keeps its traffic, on the CPU device, with
# a reorganize period of 3 s: lenet5 and mlp are sent 30 and 50 req/s for
# 8 s, mlp is unloaded, and lenet5 is sent 30 req/s for PERIODS periods
# more (default 10). The report counts the periods after the unload that
# planned the node again and those that kept the plan (the daemon's debug
# log), and the series /metrics still has for mlp. BIN picks the build
# (default bin/gpuletd).
#
#   scripts/bench/unload-replans.sh
set -euo pipefail
periods=${PERIODS:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --models lenet5,mlp "$work/models" >/dev/null
daemon_env "$work" "$work/models"
export GPULETD_SCHEDULER_REORGANIZE_PERIOD=3s GPULETD_LOG_LEVEL=debug
serve_ready
"$bin" load --url "$url" --model mlp=50,lenet5=30 --duration 8s >/dev/null
"$bin" models unload --url "$url" mlp >/dev/null
"$bin" load --url "$url" --model lenet5=30 --duration $((periods * 3))s >"$work/load.txt"
after=$(awk '/"msg":"model unloaded"/{f=1} f' "$work/serve.log")
replans=$(grep -c '"msg":"planned capacity"' <<<"$after" || true)
kept=$(grep -c '"msg":"period: the plan in force serves the rates; kept"' <<<"$after" || true)
echo "after the unload: $replans re-plans (the unload's own included), $kept periods kept the plan"
echo "mlp's series in /metrics: $(curl -s "$url/metrics" | grep -c 'model="mlp"' || true)"
echo "== lenet5, 30 req/s"
grep -E '^(requests|failed|slo) ' "$work/load.txt"
