#!/usr/bin/env bash
# A model that misses its SLO on a gpu-let that stands mostly idle, on two
# emulated V100s (the igniter-v100 reference set's curves): lenet5 stands
# for alexnet at a 4 ms SLO, resnet18 for resnet50 at 50 ms, 100 req/s each
# for 60 s after a 5 s warm-up, the load generator on the same host. The
# report gives the load's lines, what `gpuletd status` then says of lenet5
# (its gpu-let's busy share, its extra headroom, its warnings), and where a
# tenth of its requests spent their time over 20 s more (`gpuletd trace
# summary`). BIN picks the build (default bin/gpuletd).
#
#   scripts/bench/idle-misses.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --models lenet5,resnet18 "$work/models" >/dev/null
emulate_as lenet5 4ms alexnet
emulate_as resnet18 50ms resnet50
daemon_env "$work" "$work/models"
export GPULETD_DEVICES='[{kind: emulated, profiles: igniter-v100, count: 2}]'
serve_ready
echo "== gpuletd load lenet5=100,resnet18=100 --duration 60s --warmup 5s"
"$bin" load --url "$url" --model lenet5=100,resnet18=100 --duration 60s --warmup 5s 2>&1 | grep -E '^(MODEL|lenet5|resnet18|total) '
echo "== gpuletd status (lenet5)"
"$bin" status --url "$url" 2>&1 | sed -n '/^GPU-LET/,$p' | grep -E 'GPU-LET|lenet5|^  ' || true
echo "== gpuletd trace summary (a tenth of lenet5's requests, 20 s more)"
"$bin" trace set --url "$url" --model lenet5 trace_level=TIMESTAMPS trace_rate=10 >/dev/null
"$bin" load --url "$url" --model lenet5=100,resnet18=100 --duration 20s >/dev/null 2>&1
"$bin" trace set --url "$url" --model lenet5 trace_level=OFF >/dev/null
sleep 1
GPULETD_STATE_DIR=$work/state "$bin" trace summary 2>&1
