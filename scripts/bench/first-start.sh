#!/usr/bin/env bash
# First start of a repository of many models: how long gpuletd serve takes,
# on the CPU with no profile in its store, until it is ready (the first
# models serve), and until every model serves. The repository holds N
# distinct models, in turn LeNet-5, MLP and ResNet-18 graphs of seeds 2, 3,
# … (each file its own, so that no profile is borrowed from another; a
# ResNet-18 takes about 25 s to profile on a 2-core VM, the others under
# one). With demo for N, the repository is the demo's (gpuletd models synth,
# as make run writes it). At the end it prints when each model's profile
# began and ended (the daemon's events). BIN picks the build (default
# bin/gpuletd).
#
#   scripts/bench/first-start.sh [N|demo]
set -euo pipefail
n=${1:-12}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
names=()
if [ "$n" = demo ]; then
  "$bin" models synth "$work/models" >/dev/null
  for d in "$work"/models/*/; do
    names+=("$(basename "$d")")
  done
  n=${#names[@]}
else
  mkdir -p "$work/models"
  for i in $(seq 1 "$n"); do
    kinds=(lenet5 mlp resnet18)
    model=${kinds[$(( (i - 1) % 3 ))]}
    seed=$(( (i - 1) / 3 + 2 ))
    "$bin" models synth --seed "$seed" --models "$model" "$work/synth-$i" >/dev/null
    mv "$work/synth-$i/$model" "$work/models/$model-$seed"
    rm -rf "$work/synth-$i"
    names+=("$model-$seed")
  done
fi
daemon_env "$work" "$work/models"
t0=$(date +%s%N)
"$bin" serve >"$work/serve.log" 2>&1 &
ready=
for _ in $(seq 1 6000); do
  if [ -z "$ready" ] && curl -fs "$url/v2/health/ready" >/dev/null 2>&1; then
    ready=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "$n models: ready after $ready ms"
  fi
  if [ -n "$ready" ]; then
    serving=0
    for m in "${names[@]}"; do
      curl -fs "$url/v2/models/$m/ready" >/dev/null 2>&1 && serving=$((serving + 1))
    done
    if [ "$serving" = "$n" ]; then
      echo "$n models: every one serves after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
      GPULETD_LISTEN=${url#http://} "$bin" events --kind profile_job -n 1000 | grep -Eo '^[0-9-]+ [0-9:]+ .* (profiling|profiled) [^ ]+ on [^ ]+' || true
      exit 0
    fi
  fi
  sleep 0.5
done
echo "not every model serves after 50 minutes"
tail -20 "$work/serve.log"
exit 1
