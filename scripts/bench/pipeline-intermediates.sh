#!/usr/bin/env bash
# A pipeline whose step writes a large tensor its clients do not ask for:
# "embed", one step of the demo model "tokens" (ids [N,T] INT64 ->
# embeddings [N,T,4] FP32 and their mean), both written, with an SLO of
# 40 s, is sent CLIENTS requests at once (default 64) of T ids each
# (default 1 000 000: a 3 MB JSON body, 16 MB of embeddings) asking for the
# mean alone, ROUNDS times (default 2). MODEL=tokens sends the same to the
# model itself. It prints how the requests were answered, how long a round
# took and the daemon's peak memory (VmHWM; the executor's is apart).
# BIN picks the build (default bin/gpuletd).
#
#   scripts/bench/pipeline-intermediates.sh; MODEL=tokens scripts/bench/pipeline-intermediates.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
demo_env tokens
set_slo tokens 20s
mkdir -p "$work/models/embed"
cat >"$work/models/embed/config.pbtxt" <<'PB'
name: "embed"
platform: "ensemble"
max_batch_size: 1
input [ { name: "ids", data_type: TYPE_INT64, dims: [ -1 ] } ]
output [
  { name: "embedded", data_type: TYPE_FP32, dims: [ -1, 4 ] },
  { name: "pooled", data_type: TYPE_FP32, dims: [ 4 ] }
]
parameters { key: "slo" value { string_value: "40s" } }
ensemble_scheduling {
  step [
    {
      model_name: "tokens"
      model_version: -1
      input_map { key: "ids" value: "ids" }
      output_map { key: "embedded" value: "embedded" }
      output_map { key: "pooled" value: "pooled" }
    }
  ]
}
PB
serve_ready
ready=$(awk '/VmHWM/{printf "%d MB", $2/1024}' "/proc/$daemon/status")
python3 - "$url" "${MODEL:-embed}" "${CLIENTS:-64}" "${T:-1000000}" "${ROUNDS:-2}" <<'PY'
import collections, concurrent.futures, json, sys, time, urllib.error, urllib.request
url, model, clients, t, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
req = {"inputs": [{"name": "ids", "shape": [1, t], "datatype": "INT64", "data": [i % 10 for i in range(t)]}],
       "outputs": [{"name": "pooled"}]}
body = json.dumps(req).encode()
def one(_):
    r = urllib.request.Request(url + "/v2/models/" + model + "/infer", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=300) as resp:
            resp.read()
            return "200"
    except urllib.error.HTTPError as e:
        return "%d %s" % (e.code, e.headers.get("Gpuletd-Failure-Reason", ""))
    except Exception as e:
        return type(e).__name__
codes, took = collections.Counter(), []
with concurrent.futures.ThreadPoolExecutor(clients) as pool:
    for _ in range(rounds):
        start = time.time()
        for code in pool.map(one, range(clients)):
            codes[code] += 1
        took.append(time.time() - start)
print("%s: %d x %d requests of %d ids (%.1f MB): %s; rounds took %s s" % (
    model, rounds, clients, t, len(body) / 1e6, dict(codes), " ".join("%.1f" % x for x in took)))
PY
echo "the daemon's peak memory: $ready when ready, $(awk '/VmHWM/{printf "%d MB", $2/1024}' "/proc/$daemon/status") after the rounds"
kill "$daemon"
wait "$daemon" || true
