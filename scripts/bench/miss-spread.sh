#!/usr/bin/env bash
# The miss rule against a spread plan, on two emulated V100s (the
# igniter-v100 reference set's curves): lenet5 stands for alexnet at a
# 10 ms SLO, resnet18 for resnet50 at 50 ms, vgg for vgg19 and mlp for ssd
# at 100 ms, sent 400, 300, 100 and 60 req/s for 60 s after a 5 s warm-up
# by a load generator on the same host. The daemon starts on an idle node,
# so its first plan spreads the models over both GPUs, each on a gpu-let
# with many times its rate. The report gives the load's lines, the plans
# the daemon applied and why, and what `gpuletd status` then says of the
# models. BIN picks the build (default bin/gpuletd); MIX and DURATION
# change the load.
#
#   scripts/bench/miss-spread.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --models lenet5,resnet18,vgg,mlp "$work/models" >/dev/null
emulate_as lenet5 10ms alexnet
emulate_as resnet18 50ms resnet50
emulate_as vgg 100ms vgg19
emulate_as mlp 100ms ssd
daemon_env "$work" "$work/models"
export GPULETD_DEVICES='[{kind: emulated, profiles: igniter-v100, count: 2}]'
serve_ready
mix=${MIX:-lenet5=400,resnet18=300,vgg=100,mlp=60}
echo "== gpuletd load $mix --duration ${DURATION:-60s} --warmup 5s"
"$bin" load --url "$url" --model "$mix" --duration "${DURATION:-60s}" --warmup 5s 2>&1 | grep -E '^(MODEL|lenet5|resnet18|vgg|mlp|total) '
echo "== plans applied"
"$bin" events --url "$url" --kind reorganize 2>&1 | grep -E 'plan applied|missed its SLO' || true
echo "== gpuletd status (gpu-lets and models), the batch time factors"
"$bin" status --url "$url" 2>&1 | sed -n "/^GPU-LET/,\$p"
curl -s "$url/metrics" | grep "^gpuletd_gpulet_batch_time_factor"
