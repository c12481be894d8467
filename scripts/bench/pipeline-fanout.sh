#!/usr/bin/env bash
# A fan-out of many rows: the pipeline "crowd-and-label" (gpuletd models
# synth --pipeline --crowd), whose detector finds one object in every 16
# values of its input, each scored by "labeler" (default_slo 100ms), with
# an end-to-end SLO of SLO (default 2s), on the CPU, is sent one request
# for each object count in OBJECTS (default 1000 5000 20000 50000 200000).
# For each it prints the answer's code and time, the daemon's most
# goroutines while it ran (sampled every 200 ms) and its resident memory;
# then its peak memory (VmHWM). BIN picks the build that serves (default
# bin/gpuletd; the models are written by this checkout's).
#
#   scripts/bench/pipeline-fanout.sh; OBJECTS="50000" BIN=/tmp/gpuletd-old scripts/bench/pipeline-fanout.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --pipeline "${SLO:-2s}" --crowd "$work/models" >/dev/null
daemon_env "$work" "$work/models"
export GPULETD_DEFAULT_SLO=100ms GPULETD_DEVICES=cpu
serve_ready
metric() { curl -s -H 'Host: 127.0.0.1' "$url/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
for k in ${OBJECTS:-1000 5000 20000 50000 200000}; do
  python3 - "$k" >"$work/req.json" <<'PY'
import json, sys
k = int(sys.argv[1])
print(json.dumps({"outputs": [{"name": "labels"}],
                  "inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 16 * k], "data": [((i % 7) - 3) / 3 for i in range(16 * k)]}]}))
PY
  (while sleep 0.2; do metric go_goroutines; done) >"$work/goroutines" &
  sampler=$!
  out=$(curl -s -o "$work/answer" -w '%{http_code} in %{time_total} s' -H 'Host: 127.0.0.1' -H 'Content-Type: application/json' \
    --data-binary @"$work/req.json" "$url/v2/models/crowd-and-label/infer")
  kill "$sampler"
  wait "$sampler" 2>/dev/null || true
  printf '%6d objects: %s, %s; goroutines at most %s, resident %s\n' "$k" "$out" \
    "$(head -c 120 "$work/answer" | grep -o '"error":"[^"]*' || echo answered)" \
    "$(sort -n "$work/goroutines" | tail -1)" "$(awk '/VmRSS/{printf "%d MB", $2/1024}' "/proc/$daemon/status")"
done
echo "the daemon's peak memory: $(awk '/VmHWM/{printf "%d MB", $2/1024}' "/proc/$daemon/status")"
kill "$daemon"
wait "$daemon" || true
