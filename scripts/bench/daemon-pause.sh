#!/usr/bin/env bash
# The daemon itself short of CPU for a moment, under load: it is stopped
# (SIGSTOP) for PAUSE (default 0.5 s) every 5 s, as a virtual machine's
# pause or a host loaded past its cores stops it, while its executors run
# on and their answers wait in the sockets. Six models (the demo set's
# lenet5 and mlp, each emulated as three of the V100 reference set's models
# with their SLOs) on two emulated V100s at RATE req/s in all (default
# 600), 40 s; the stops begin 10 s in. The report gives the load's lines,
# the reorganizations (re-plans that changed what runs), how many
# executor_stall events there were, and the last EVENTS events (default 8).
# BIN picks the build (default bin/gpuletd).
#
#   scripts/bench/daemon-pause.sh; PAUSE=1 scripts/bench/daemon-pause.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
pause=${PAUSE:-0.5}
rate=${RATE:-600}
"$root/bin/gpuletd" models synth --models lenet5,mlp "$work/models" >/dev/null
profiles=(alexnet resnet50 vgg19)
slos=(15ms 40ms 80ms)
mix=""
for i in 0 1 2 3 4 5; do
  src=lenet5
  [ $((i % 2)) = 0 ] || src=mlp
  cp -r "$work/models/$src" "$work/models/m$i"
  emulate_as "m$i" "${slos[$((i % 3))]}" "${profiles[$((i % 3))]}"
  mix="$mix m$i"
done
rm -rf "$work/models/lenet5" "$work/models/mlp"
export GPULETD_DEVICES="[{kind: emulated, profiles: igniter-v100, count: 2}]"
daemon_env "$work" "$work/models"
serve_ready
models=$(echo $mix | tr ' ' ',')
"$bin" load --url "$url" --model "$models" --rate "$rate" --duration 10s >/dev/null 2>&1
"$bin" load --url "$url" --model "$models" --rate "$rate" --duration 40s >"$work/load.txt" 2>&1 &
load=$!
sleep 10
for _ in 1 2 3 4 5 6; do
  kill -STOP "$daemon"
  sleep "$pause"
  kill -CONT "$daemon"
  sleep 5
done
wait "$load" || true
echo "== $rate req/s over six models, the daemon stopped ${pause}s every 5s"
sed -n '/^MODEL/,/^total/p' "$work/load.txt"
curl -s "$url/metrics" | grep -E '^gpuletd_reorganizations_total' || true
echo "executor_stall events: $("$bin" events --url "$url" --kind executor_stall 2>&1 | grep -c executor_stall || true)"
"$bin" events --url "$url" 2>&1 | cut -c1-220 | tail -${EVENTS:-8}
