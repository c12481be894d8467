#!/usr/bin/env bash
# A device fault under load: mlp (emulated as vgg19, SLO 200 ms) on two
# emulated V100s, RATE requests/s for 45 s from gpuletd load. After 25 s,
# when the plan has put mlp on both GPUs, the first gpu-let's device
# faults (its fault file, as a CUDA context's illegal memory access) for
# 2 s: its executor answers the batch that found the fault, hands back what
# it held and exits 75, the daemon starts it again, and the other GPU serves
# meanwhile. It prints the gpu-lets at the fault and the load's report: how
# many requests were answered, and the failures by status and reason. BIN
# picks the build (default bin/gpuletd).
#
#   scripts/bench/device-fault.sh [RATE]
set -euo pipefail
rate=${1:-700}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --models mlp "$work/models" >/dev/null
printf 'slo: 200ms\nmax_batch_size: 32\nprofile: vgg19\n' >"$work/models/mlp/config.yaml"
daemon_env "$work" "$work/models"
export GPULETD_DEVICES='[{kind: emulated, profiles: igniter-v100, count: 2}]'
"$bin" serve >"$work/serve.log" 2>&1 &
serve=$!
wait_ready "$work/serve.log"
"$bin" load --url "$url" --model mlp --rate "$rate" --duration 45s --json >"$work/load.json" &
load=$!
sleep 25
curl -fs "$url/api/v1/status" | python3 -c '
import json, sys
for g in json.load(sys.stdin)["gpulets"]:
    print(g["id"], g["device"], g["state"], g["pid"], " ".join(m["name"] for m in g["models"]))' >"$work/gpulets"
cat "$work/gpulets"
read -r _ device _ pid _ <"$work/gpulets"
socket=$(tr '\0' '\n' <"/proc/$pid/cmdline" | grep -A1 -- --socket | tail -1)
fault="$(dirname "$socket")/fault-$device"
echo "an illegal memory access was encountered" >"$fault"
sleep 2
rm -f "$fault"
wait "$load"
kill "$serve"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["report"]
print("scheduled", r["scheduled"], "answered", r["ok"], "failed", sum(r["failed"].values()), r["failed"])' "$work/load.json"
