#!/usr/bin/env bash
# Good requests batched with bad ones: the tokens model (gpuletd models synth
# --models tokens: token ids into a vocabulary of 16) on the CPU, sent N
# requests of ids 1..4 and N of id 99, all at once, ROUNDS times; it prints
# how many of each were answered with each HTTP status. ONNX Runtime fails a
# run holding id 99 (its Gather's index is out of bounds), so a batch that
# mixes them fails whole unless the executor runs it again apart. A 503 is
# a deadline the 2-core machine could not meet for so many requests at once
# (the model's SLO is 20 ms). BIN picks the build (default bin/gpuletd); a
# build from before the tokens model and profile_shapes needs OLD=1: this
# checkout's bin/gpuletd then writes the model, without profile_shapes.
# MODEL=crowd sends the detector-like model crowd (one object in every 16
# values of its input) 64 values as good requests and 17 as bad ones: its
# Reshape fails on them, which ONNX Runtime does not put on the inputs.
#
#   scripts/bench/bad-input.sh [N] [ROUNDS]; MODEL=crowd scripts/bench/bad-input.sh
set -euo pipefail
n=${1:-40}
rounds=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
model=${MODEL:-tokens}
if [ "${OLD:-}" = 1 ]; then
  "$root/bin/gpuletd" models synth --models tokens "$work/models" >/dev/null
  sed -i '/^profile_shapes:/,+1d' "$work/models/tokens/config.yaml"
else
  "$bin" models synth --models "$model" "$work/models" >/dev/null
fi
daemon_env "$work" "$work/models"
serve_ready
good='{"inputs":[{"name":"ids","shape":[1,4],"datatype":"INT64","data":[1,2,3,4]}]}'
bad='{"inputs":[{"name":"ids","shape":[1,4],"datatype":"INT64","data":[1,2,3,99]}]}'
if [ "$model" = crowd ]; then
  image() { python3 -c "import json; print(json.dumps({'inputs': [{'name': 'image', 'shape': [1, $1], 'datatype': 'FP32', 'data': [0.5] * $1}]}))"; }
  good=$(image 64)
  bad=$(image 17)
fi
for _ in $(seq 1 "$rounds"); do
  for _ in $(seq 1 "$n"); do
    curl -s -o /dev/null -w 'good %{http_code}\n' -H 'Content-Type: application/json' -d "$good" "$url/v2/models/$model/infer" &
    curl -s -o /dev/null -w 'bad %{http_code}\n' -H 'Content-Type: application/json' -d "$bad" "$url/v2/models/$model/infer" &
  done
  wait $(jobs -p | tail -n $((2 * n)))
done | sort | uniq -c
