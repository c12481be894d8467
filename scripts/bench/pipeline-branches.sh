#!/usr/bin/env bash
# A pipeline whose steps branch: "spot-beside-crowd" runs the detector
# "spotter" and the "crowd" model on the same image, then "labeler" on each
# of the detector's four objects (gpuletd models synth --pipeline --crowd
# writes the models), with an end-to-end SLO of 400ms, on the CPU. Its steps
# are written in an order they run in, so that a build that runs them one
# after the other serves it too. gpuletd load sends it RATE req/s (default
# 50) for DURATION (default 20s) and prints the report: the end-to-end
# latency is the pipeline's; then the gpu-lets that served it. BIN picks the build that serves (default
# bin/gpuletd; the models are written by this checkout's).
#
#   scripts/bench/pipeline-branches.sh; BIN=/tmp/gpuletd-old scripts/bench/pipeline-branches.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --pipeline 400ms "$work/models" >/dev/null
"$root/bin/gpuletd" models synth --pipeline 400ms --crowd --force "$work/models" >/dev/null
rm -rf "$work/models/spot-and-label" "$work/models/crowd-and-label"
mkdir -p "$work/models/spot-beside-crowd/1"
cat >"$work/models/spot-beside-crowd/config.pbtxt" <<'PBTXT'
name: "spot-beside-crowd"
platform: "ensemble"
max_batch_size: 1
input [ { name: "image", data_type: TYPE_FP32, dims: [ 64 ] } ]
output [
  { name: "labels", data_type: TYPE_FP32, dims: [ -1, 10 ] },
  { name: "crowd_objects", data_type: TYPE_FP32, dims: [ -1, 16 ] }
]
parameters { key: "slo" value { string_value: "400ms" } }
parameters { key: "fanout" value { string_value: "objects" } }
ensemble_scheduling {
  step [
    { model_name: "spotter", input_map { key: "image" value: "image" }, output_map { key: "objects" value: "objects" } },
    { model_name: "crowd", input_map { key: "image" value: "image" }, output_map { key: "objects" value: "crowd_objects" } },
    { model_name: "labeler", input_map { key: "object" value: "objects" }, output_map { key: "scores" value: "labels" } }
  ]
}
PBTXT
daemon_env "$work" "$work/models"
export GPULETD_DEFAULT_SLO=100ms GPULETD_DEVICES=cpu
serve_ready
curl -s -H "Host: 127.0.0.1" "$url/v2/models/spot-beside-crowd/ready"; echo
"$bin" load --url "$url" --model spot-beside-crowd --rate "${RATE:-50}" --duration "${DURATION:-20s}"
"$bin" status --url "$url" | awk '/^GPU-LET/ {p = 1} p && !/^(GPU-LET|cpu-| )/ {exit} p'
kill "$daemon"
wait "$daemon" || true
