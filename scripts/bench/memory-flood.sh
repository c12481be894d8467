#!/usr/bin/env bash
# One model's flood of request bodies against another model's probes, on the
# CPU device: vgg (600 KiB binary bodies, SLO 1 s, on a gpu-let of its own,
# so no share holds it back) is sent FLOOD requests/s with up to 2 000 in
# flight for 20 s, while lenet5 (8 KiB JSON bodies, SLO 5 ms) is sent
# 100 req/s. vgg's waiting bodies fill the budget of request bytes in
# flight (limits.max_inflight_bytes, 256 MiB); the report says how many of
# each model's requests were refused for it (memory_budget) and how many of
# lenet5's met its SLO. BIN picks the build (default bin/gpuletd).
#
#   scripts/bench/memory-flood.sh [FLOOD]
set -euo pipefail
flood=${1:-800}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
demo_env vgg,lenet5
serve_ready
"$bin" load --url "$url" --model vgg --rate "$flood" --concurrency 2000 --duration 20s >"$work/flood.txt" 2>&1 &
flooding=$!
echo "== lenet5, 100 req/s"
"$bin" load --url "$url" --model lenet5 --rate 100 --duration 20s 2>&1 | grep -E '^(requests|failed|slo) '
wait "$flooding"
echo "== vgg, $flood req/s"
grep -E '^(requests|failed) ' "$work/flood.txt"
