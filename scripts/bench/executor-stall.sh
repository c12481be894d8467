#!/usr/bin/env bash
# An executor stopped (SIGSTOP) under load, HOLD seconds (default 15), on
# two emulated V100s (an idle node gives the model a whole GPU on each):
# lenet5 with alexnet's curve and a 10 ms SLO at RATE req/s (default 100),
# JSON tensors of 8 KB; with BIG=1 instead resnet18 (its 500 ms SLO) at 50
# req/s, binary tensors of 600 KB, more than a Unix socket's buffer holds.
# After a 10 s load that settles the plan, a load of HOLD + 10 s runs and 5 s
# into it one of the model's executors is stopped, then let go HOLD s later
# (if its health checks have not killed it by then).
# The report gives the load's lines, what the status said of the gpu-lets 3 s
# into the stop, and the stall and restart events. BIN picks the build
# (default bin/gpuletd); GRPC=1 sends the load over gRPC; GPUS=1 runs one
# emulated V100, where the model has no other gpu-let.
#
#   scripts/bench/executor-stall.sh; BIG=1 scripts/bench/executor-stall.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
hold=${HOLD:-15}
model=lenet5 rate=${RATE:-100} how=--binary=false
if [ -n "${BIG:-}" ]; then
  model=resnet18 rate=${RATE:-50} how=--binary
fi
"$root/bin/gpuletd" models synth --models "$model" "$work/models" >/dev/null
if [ "$model" = lenet5 ]; then
  emulate_as lenet5 10ms alexnet
fi
export GPULETD_DEVICES="[{kind: emulated, profiles: igniter-v100, count: ${GPUS:-2}}]"
daemon_env "$work" "$work/models"
if [ -n "${GRPC:-}" ]; then
  how="$how --grpc $GPULETD_GRPC_LISTEN"
fi
serve_ready
"$bin" load --url "$url" --model "$model=$rate" --duration 10s $how >/dev/null 2>&1
"$bin" load --url "$url" --model "$model=$rate" --duration $((hold + 10))s $how >"$work/load.txt" 2>&1 &
load=$!
sleep 5
victim=$(ps -eo pid,ppid,args | awk -v d="$daemon" '$2 == d && / executor / {print $1; exit}')
echo "== $model at $rate req/s: executor $victim stopped for ${hold}s"
kill -STOP "$victim"
sleep 3
"$bin" status --url "$url" 2>&1 | sed -n '/^GPU-LET/,/^$/p' | grep -v 'batches ran\|its executor plans\|host, or a device'
sleep $((hold - 3))
kill -CONT "$victim" 2>/dev/null || true
wait "$load"
grep -E '^(requests|failed|slo|worst second|send rate) ' "$work/load.txt"
"$bin" events --url "$url" --kind executor_stall,executor_restart 2>&1 | cut -c1-160
