#!/usr/bin/env bash
# The daemon restarted while `gpuletd profile` measures beside it, on the
# CPU device: the daemon serves lenet5 and resnet18, `gpuletd profile
# resnet18 --force` measures batches 1 and 2 (100 samples a point at least,
# about 15 s), and 4 s into it the daemon is stopped and started again. The
# report gives the profile run as the database keeps it, and the profile's
# exit status and last line. BIN picks the build (default bin/gpuletd).
#
#   scripts/bench/restart-during-profile.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib/daemon.sh"
daemon_work
"$root/bin/gpuletd" models synth --models lenet5,resnet18 "$work/models" >/dev/null
daemon_env "$work" "$work/models"
"$bin" serve >"$work/serve1.log" 2>&1 &
first=$!
wait_ready "$work/serve1.log"
(
  rc=0
  "$bin" profile resnet18 --force --batches 1,2 --min-samples 100 --log-level warn >"$work/profile.txt" 2>&1 || rc=$?
  echo "exit status $rc" >>"$work/profile.txt"
) &
profile=$!
sleep 4
kill -TERM "$first"
wait "$first" || true
"$bin" serve >"$work/serve2.log" 2>&1 &
wait_ready "$work/serve2.log"
wait "$profile"
echo "profile run: $(sqlite3 "$work/state/gpuletd.db" 'SELECT status || ": " || message FROM profile_runs ORDER BY id DESC LIMIT 1')"
echo "gpuletd profile: $(tail -1 "$work/profile.txt"); $(grep -v '^exit status' "$work/profile.txt" | tail -1)"
