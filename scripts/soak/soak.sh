#!/usr/bin/env bash
# Soak: one model's flood, stalled connections and concurrent large bodies
# against one daemon on the CPU device at once, for DURATION (default 120s).
# Prints the probed models' attainment, the daemon's peak RSS and its open
# file descriptors, and what the limits refused. Needs bin/gpuletd, the ONNX
# Runtime library (make deps) and python3.
#
#   scripts/soak/soak.sh [DURATION_SECONDS]
set -euo pipefail
dur=${1:-120}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
daemon_env "$work" "$work/repo"
export GPULETD_DEVICES=cpu
"$bin" models synth "$work/repo" --models mlp,lenet5,resnet18 >/dev/null
sed -i 's/^slo: [^ ]*/slo: 400ms/' "$work/repo/mlp/config.yaml" "$work/repo/lenet5/config.yaml"
"$bin" serve >"$work/serve.log" 2>&1 &
pid=$!
wait_ready "$work/serve.log"
echo "daemon $pid ready at $url; soaking for ${dur}s"

# Resource samples: peak RSS (VmHWM) and open descriptors, every second.
( peak_fd=0; while kill -0 "$pid" 2>/dev/null; do
    fd=$(ls /proc/"$pid"/fd 2>/dev/null | wc -l); [ "$fd" -gt "$peak_fd" ] && peak_fd=$fd
    echo "$peak_fd" >"$work/peak_fd"; sleep 1; done ) &

loads=()
"$bin" load --url "$url" --model resnet18 --rate 60 --duration "${dur}s" --binary >"$work/flood.txt" 2>&1 & loads+=($!)
"$bin" load --url "$url" --model mlp --rate 10 --duration "${dur}s" --binary >"$work/mlp.txt" 2>&1 & loads+=($!)
"$bin" load --url "$url" --model lenet5 --rate 10 --duration "${dur}s" --binary >"$work/lenet5.txt" 2>&1 & loads+=($!)
python3 - "$port" "$dur" >"$work/abuse.txt" 2>&1 <<'PY' &
import socket, sys, threading, time
port, dur = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + dur
stats = {"stalled_opened": 0, "stalled_closed_by_daemon": 0, "big_sent": 0, "big_codes": {}}
lock = threading.Lock()
def stalled():
    # A body that says 1 MiB and trickles a byte a second.
    while time.time() < end:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 1048576\r\n\r\n{" % port)
            with lock: stats["stalled_opened"] += 1
            while time.time() < end:
                time.sleep(1)
                s.sendall(b" ")
        except OSError:
            with lock: stats["stalled_closed_by_daemon"] += 1
            time.sleep(0.2)
def big():
    body = b'{"inputs":[{"name":"input","shape":[1,784],"datatype":"FP32","data":[' + b"0," * (30 << 20) + b'0]}]}'
    while time.time() < end:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=60)
            s.settimeout(60)
            s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % (port, len(body)) + body)
            code = s.recv(64).split(b" ")[1].decode()
            s.close()
        except (ConnectionResetError, BrokenPipeError):
            code = "cut off by an early answer"  # 503 memory_budget while still sending
        except (OSError, IndexError):
            code = "error"
        with lock:
            stats["big_sent"] += 1
            stats["big_codes"][code] = stats["big_codes"].get(code, 0) + 1
threads = [threading.Thread(target=stalled) for _ in range(200)] + [threading.Thread(target=big) for _ in range(16)]
for t in threads: t.start()
for t in threads: t.join()
print(stats)
PY
loads+=($!)
wait "${loads[@]}" || true
sleep 5
rss=$(awk '/VmHWM/ {print $2}' /proc/"$pid"/status)
echo "== mlp (probe) ==";     sed -n 3,6p "$work/mlp.txt"
echo "== lenet5 (probe) ==";  sed -n 3,6p "$work/lenet5.txt"
echo "== resnet18 (flood) =="; sed -n 3,6p "$work/flood.txt"
echo "== abuse ==";           cat "$work/abuse.txt"
echo "== daemon ==";          echo "peak RSS $((rss / 1024)) MiB, peak open descriptors $(cat "$work/peak_fd")"
curl -fs "$url/metrics" | grep -E '^gpuletd_(http_[a-z_]*|request_failures_total\{model="(mlp|lenet5)")' || true
kill -INT "$pid"; wait "$pid" || true
