#!/usr/bin/env bash
# A load that takes other models' gpu-lets, on one emulated V100 (the
# igniter-v100 reference set's curves, so that every run plans alike):
# lenet5 stands for alexnet at a 6 ms SLO, resnet18 for resnet50 and vgg
# for vgg19 at 100 ms, alexnet on a gpu-let of its own and the others
# sharing one. Then lenet5's SLO becomes 2 ms, which alexnet meets only on
# the whole GPU, and it is loaded again. The report gives what `gpuletd
# models load lenet5 --dry-run` says first (a build without it refuses the
# flag), the load's own output and exit status, and what `gpuletd models
# list` then says of the models left unserved. BIN picks the build (default
# bin/gpuletd).
#
#   scripts/bench/load-takes-gpulets.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --models lenet5,resnet18,vgg "$work/models" >/dev/null
emulate_as lenet5 6ms alexnet
emulate_as resnet18 100ms resnet50
emulate_as vgg 100ms vgg19
daemon_env "$work" "$work/models"
export GPULETD_DEVICES='[{kind: emulated, profiles: igniter-v100, count: 1}]'
serve_ready
sed -i 's/^slo:.*/slo: 2ms/' "$work/models/lenet5/config.yaml"
echo "== gpuletd models load lenet5 --dry-run"
"$bin" models load lenet5 --dry-run --url "$url" 2>&1 || echo "exit status $?"
echo "== gpuletd models load lenet5"
"$bin" models load lenet5 --url "$url" 2>&1 || echo "exit status $?"
echo "== gpuletd models list"
"$bin" models list --url "$url" 2>&1 | sed -n '/not served/,$p'
