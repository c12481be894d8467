#!/usr/bin/env bash
# Restart time: how long gpuletd serve takes to answer /v2/health/ready on
# the repository REPO, at its first start and at a restart with the same
# state directory, on one emulated GPU. With COLD=1 the page cache is
# dropped before the restart (root only), as after a reboot. BIN picks the
# build (default bin/gpuletd).
#
#   scripts/bench/restart.sh REPO [RESTARTS]
set -euo pipefail
repo=$1
restarts=${2:-1}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
daemon_env "$work" "$repo"
export GPULETD_DEVICES="[{kind: emulated, profiles: igniter-v100, count: 1}]"
for run in first $(seq -f restart%g 1 "$restarts"); do
  if [ "$run" != first ] && [ "${COLD:-0}" = 1 ]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
  fi
  t0=$(date +%s%N)
  "$bin" serve >"$work/serve-$run.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    curl -fs "$url/v2/health/ready" >/dev/null 2>&1 && break
    sleep 0.02
  done
  t1=$(date +%s%N)
  echo "$run: ready after $(( (t1 - t0) / 1000000 )) ms"
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
done
