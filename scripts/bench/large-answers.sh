#!/usr/bin/env bash
# Large answers: the demo model "tokens" (ids [N,T] INT64 -> embeddings
# [N,T,4] FP32 and their mean) with an SLO of 20 s, so that nothing but
# memory stops it, is sent CLIENTS requests at once (default 8) of T ids
# each (default 1 000 000: a 3 MB body, an answer of 16 MB of floats, about
# 45 MB as JSON), ROUNDS times (default 3), asking the answer as JSON and
# then as binary data. The report gives, for each, how the requests were
# answered, the largest answer and how long a round took, and the daemon's
# peak memory (VmHWM) when ready and after the rounds (a daemon of its own
# for each form).
# BIN picks the build (default bin/gpuletd).
#
#   scripts/bench/large-answers.sh; CLIENTS=16 T=2000000 scripts/bench/large-answers.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
demo_env tokens
set_slo tokens 20s
peak() { grep VmHWM "/proc/$daemon/status" | awk '{printf "%d MB", $2/1024}'; }
for form in json binary; do
  serve_ready
  ready=$(peak)
  python3 - "$url" "$form" "${CLIENTS:-8}" "${T:-1000000}" "${ROUNDS:-3}" <<'PY'
import collections, concurrent.futures, json, sys, time, urllib.error, urllib.request
url, form, clients, t, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
req = {"inputs": [{"name": "ids", "shape": [1, t], "datatype": "INT64", "data": [i % 10 for i in range(t)]}]}
if form == "binary":
    req["parameters"] = {"binary_data_output": True}
body = json.dumps(req).encode()
def one(_):
    r = urllib.request.Request(url + "/v2/models/tokens/infer", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=120) as resp:
            return "200", len(resp.read())
    except urllib.error.HTTPError as e:
        return "%d %s" % (e.code, e.headers.get("Gpuletd-Failure-Reason", "")), len(e.read())
    except Exception as e:
        return type(e).__name__, 0
codes, largest, took = collections.Counter(), 0, []
with concurrent.futures.ThreadPoolExecutor(clients) as pool:
    for _ in range(rounds):
        start = time.time()
        for code, n in pool.map(one, range(clients)):
            codes[code] += 1
            largest = max(largest, n)
        took.append(time.time() - start)
print("%-6s %d x %d requests of %d ids (%.1f MB): %s; largest answer %.1f MB; rounds took %s s" % (
    form, rounds, clients, t, len(body) / 1e6, dict(codes), largest / 1e6, " ".join("%.1f" % x for x in took)))
PY
  echo "       the daemon's peak memory: $ready when ready, $(peak) after the rounds"
  kill "$daemon"
  wait "$daemon" || true
done
