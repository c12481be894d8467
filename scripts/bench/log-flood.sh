#!/usr/bin/env bash
# What clients that send bad requests write into the daemon's log: tokens
# and lenet5 on the CPU device, sent N requests (default 500) from each of
# sixteen threads at once: four send token ids the model refuses (99, past
# its vocabulary of 16) and four good ones, so that batches mix them; two
# each send malformed JSON, a wrong shape, and requests for a model that
# does not exist. The report gives the answers by HTTP status and the log
# lines written meanwhile, by level and message. BIN picks the build
# (default bin/gpuletd).
#
#   scripts/bench/log-flood.sh [N]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --models tokens,lenet5 "$work/models" >/dev/null
daemon_env "$work" "$work/models"
serve_ready
sleep 1
before=$(wc -l <"$work/serve.log")
python3 - "$url" "${1:-500}" <<'PY'
import collections, json, sys, threading, urllib.error, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
ids = lambda last: json.dumps({"inputs": [{"name": "ids", "shape": [1, 4], "datatype": "INT64", "data": [1, 2, 3, last]}]}).encode()
kinds = [
    ("/v2/models/tokens/infer", ids(99), 4),
    ("/v2/models/tokens/infer", ids(4), 4),
    ("/v2/models/lenet5/infer", b'{"inputs":[{"name":', 2),
    ("/v2/models/lenet5/infer", json.dumps({"inputs": [{"name": "input", "shape": [1, 3], "datatype": "FP32", "data": [1, 2, 3]}]}).encode(), 2),
    ("/v2/models/nope/infer", b"{}", 2),
]
codes, lock = collections.Counter(), threading.Lock()
def worker(path, body):
    for _ in range(n):
        try:
            urllib.request.urlopen(urllib.request.Request(url + path, data=body, headers={"Content-Type": "application/json"}), timeout=10).read()
            code = 200
        except urllib.error.HTTPError as e:
            code = e.code
        with lock:
            codes[code] += 1
threads = [threading.Thread(target=worker, args=(p, b)) for p, b, k in kinds for _ in range(k)]
[t.start() for t in threads]
[t.join() for t in threads]
print("answers:", dict(sorted(codes.items())))
PY
after=$(wc -l <"$work/serve.log")
echo "log lines meanwhile: $((after - before))"
tail -n +$((before + 1)) "$work/serve.log" | python3 -c '
import collections, json, sys
c = collections.Counter()
for line in sys.stdin:
    try:
        d = json.loads(line)
    except ValueError:
        c[("?", line[:100])] += 1
        continue
    msg = d.get("msg", "")
    if "onnxruntime:" in msg or d.get("source") == "onnxruntime":
        msg = "(a line of ONNX Runtime)"
    c[(d.get("level"), msg[:100])] += 1
for k, v in c.most_common(8):
    print("%6d  %s  %s" % (v, k[0], k[1]))'
