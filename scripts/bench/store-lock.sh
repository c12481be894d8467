#!/usr/bin/env bash
# Another process holding the daemon's database locked, on the CPU device:
# lenet5 and mlp serve, lenet5 is sent 50 req/s, and a sqlite3 shell holds
# a write transaction open (BEGIN IMMEDIATE) for HOLD seconds (default 25)
# while mlp is unloaded. The report says how long the unload took, the
# slowest /metrics and /api/v1/status answers during the lock (asked twice
# a second from the unload on), what
# `gpuletd status` said, which events the history holds afterwards, and
# lenet5's outcome. BIN picks the build (default bin/gpuletd).
#
#   scripts/bench/store-lock.sh
set -euo pipefail
hold=${HOLD:-25}
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v sqlite3 >/dev/null || { echo "store-lock.sh needs the sqlite3 shell (apt-get install sqlite3)"; exit 1; }
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --models lenet5,mlp "$work/models" >/dev/null
daemon_env "$work" "$work/models"
serve_ready
"$bin" load --url "$url" --model lenet5 --rate 50 --duration $((hold + 15))s >"$work/load.txt" 2>&1 &
loading=$!
sleep 2
since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
(echo "BEGIN IMMEDIATE;"; sleep "$hold"; echo "COMMIT;") | sqlite3 "$work/state/gpuletd.db" &
locked=$!
sleep 1
(start=$(date +%s.%N); "$bin" models unload --url "$url" mlp >/dev/null
  echo "unload of mlp took $(echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f') s" >"$work/unload.txt") &
unloading=$!
slowest_metrics=0 slowest_status=0
for _ in $(seq 1 $((hold - 8))); do
  m=$(curl -s -o /dev/null -m 30 -w '%{time_total}' "$url/metrics")
  s=$(curl -s -o /dev/null -m 30 -w '%{time_total}' "$url/api/v1/status")
  slowest_metrics=$(echo "if ($m > $slowest_metrics) $m else $slowest_metrics" | bc)
  slowest_status=$(echo "if ($s > $slowest_status) $s else $slowest_status" | bc)
  sleep 0.5
done
wait "$unloading"
cat "$work/unload.txt"
printf 'slowest answer during the lock: /metrics %.3f s, /api/v1/status %.3f s\n' "$slowest_metrics" "$slowest_status"
echo "== gpuletd status during the lock"
"$bin" status --url "$url" | grep -iE 'read-only|database' | cut -c1-400 || echo "(says nothing of the database)"
wait "$locked"
sleep 6
echo "== events since the lock began"
"$bin" events --url "$url" --since "$since" -n 1000 --json | python3 -c '
import json, sys
evs = [json.loads(l) for l in sys.stdin if l.strip()]
for e in evs:
    print(" ", e.get("kind"), "-", e.get("message", "")[:100], "(unsaved)" if e.get("unsaved") else "")
print(len(evs), "events")'
wait "$loading" || true
echo "== lenet5, 50 req/s"
grep -E '^(requests|failed|slo) ' "$work/load.txt"
