#!/usr/bin/env bash
# Churn: does a daemon give back everything clients leave behind? One daemon
# on the CPU device serving the demo models lenet5 and tokens; after a warm-up
# its goroutines, open descriptors, heap in use and the bytes its byte
# budgets hold are read from /metrics, then ROUNDS rounds (default 3) of
# clients that misbehave: requests whose client gives up while they are
# queued or running (a 50 ms timeout on lenet5 and tokens), bodies cut off
# half sent, connections opened and dropped before a request, gRPC loads
# killed mid-run (calls in flight), gRPC streams with an answer unread, and
# good REST and gRPC requests between them. After each round and a few
# seconds of quiet the same readings are printed: what a round leaves
# behind grows with the rounds. BIN picks the build (default bin/gpuletd).
#
#   scripts/soak/churn.sh [ROUNDS]
set -euo pipefail
rounds=${1:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
demo_env lenet5,tokens
grpc=127.0.0.1:$((port + 1))
serve_ready
readings() {
  local m
  m=$(curl -s -H 'Host: 127.0.0.1' "$url/metrics")
  printf '%-10s goroutines %4s  fds %4s  heap %6s MB  held %s+%s B  rss %s MB\n' "$1" \
    "$(awk '/^go_goroutines /{print $2}' <<<"$m")" \
    "$(awk '/^process_open_fds /{print $2}' <<<"$m")" \
    "$(awk '/^go_memstats_heap_inuse_bytes /{printf "%.1f", $2/1e6}' <<<"$m")" \
    "$(awk '/^gpuletd_http_inflight_request_bytes /{print $2}' <<<"$m")" \
    "$(awk '/^gpuletd_http_inflight_beside_bytes /{print $2}' <<<"$m")" \
    "$(awk '/^VmRSS/{printf "%d", $2/1024}' "/proc/$daemon/status")"
}
good() {
  "$bin" load lenet5 --url "$url" --rate 50 --duration 3s >/dev/null 2>&1 || true
  "$bin" load lenet5 --url "$url" --grpc "$grpc" --rate 50 --duration 3s >/dev/null 2>&1 || true
}
good
sleep 3
readings warm
for r in $(seq 1 "$rounds"); do
  python3 - "$port" <<'PY'
import json, socket, sys, threading, urllib.request
port = int(sys.argv[1])
url = "http://127.0.0.1:%d" % port
lenet = json.dumps({"inputs": [{"name": "input", "shape": [1, 1, 28, 28], "datatype": "FP32", "data": [0.5] * 784}]}).encode()
tokens = json.dumps({"inputs": [{"name": "ids", "shape": [1, 200000], "datatype": "INT64", "data": [i % 10 for i in range(200000)]}]}).encode()
def given_up(model, body):
    try:
        urllib.request.urlopen(urllib.request.Request(url + "/v2/models/%s/infer" % model, data=body,
            headers={"Content-Type": "application/json"}), timeout=0.05).read()
    except Exception:
        pass
def cut(body):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v2/models/tokens/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    s.sendall(body[: len(body) // 2])
    s.close()
def dropped():
    socket.create_connection(("127.0.0.1", port)).close()
def unread():
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"POST /v2/models/tokens/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(tokens) + tokens)
    return s
jobs = []
for i in range(200):
    jobs.append(threading.Thread(target=given_up, args=("lenet5", lenet)))
    if i % 10 == 0:
        jobs.append(threading.Thread(target=given_up, args=("tokens", tokens)))
        jobs.append(threading.Thread(target=cut, args=(tokens,)))
    jobs.append(threading.Thread(target=dropped))
for j in jobs:
    j.start()
held = [unread() for _ in range(4)]
for j in jobs:
    j.join()
for s in held:
    s.close()
PY
  for _ in 1 2 3; do
    { timeout -s KILL 1.5 "$bin" load lenet5 --url "$url" --grpc "$grpc" --rate 400 --duration 5s >/dev/null 2>&1; } 2>/dev/null || true
  done
  good
  sleep 5
  readings "round $r"
done
echo "what the daemon saw (requests by model; failures and abandoned answers by model and reason):"
curl -s -H 'Host: 127.0.0.1' "$url/metrics" |
  grep -E '^gpuletd_(requests_total|request_failures_total|http_answers_abandoned_total)' | sed 's/^/  /'
kill "$daemon"
wait "$daemon" || true
