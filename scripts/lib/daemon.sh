# Sourced by the scripts under scripts/soak and scripts/bench, which set
# root (the checkout): a daemon of this checkout on a free port.

# daemon_work sets bin, the build to run (BIN, else this checkout's
# bin/gpuletd), and work, a new folder that is removed, with every job the
# script started stopped, when it exits.
daemon_work() {
  bin=${BIN:-$root/bin/gpuletd}
  work=$(mktemp -d)
  trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
}

# daemon_env WORK REPO exports the environment of a daemon whose state and
# runtime folders lie under WORK, serving the repository REPO on a free
# loopback port (gRPC on the next), logging JSON, with this checkout's ONNX
# Runtime where make deps fetched it; it sets port and url. GPULETD_DEVICES
# is the caller's.
daemon_env() {
  port=$((20000 + RANDOM % 20000))
  url=http://127.0.0.1:$port
  export GPULETD_STATE_DIR=$1/state GPULETD_RUNTIME_DIR=$1/run GPULETD_MODEL_REPOSITORY=$2 \
    GPULETD_LISTEN=127.0.0.1:$port GPULETD_GRPC_LISTEN=127.0.0.1:$((port + 1)) GPULETD_LOG_FORMAT=json
  local lib
  lib=$(ls "$root"/.deps/onnxruntime/libonnxruntime.so* 2>/dev/null | head -1 || true)
  if [ -n "$lib" ]; then
    export GPULETD_ONNXRUNTIME_LIBRARY=$lib
  fi
}

# demo_env MODELS writes the demo models MODELS (a comma-separated list,
# gpuletd models synth) into $work/models and exports the environment of a
# daemon serving them (daemon_env).
demo_env() {
  "$root/bin/gpuletd" models synth --models "$1" "$work/models" >/dev/null
  daemon_env "$work" "$work/models"
}

# wait_ready LOG waits up to 5 minutes for the daemon at url to be ready;
# past that it prints the end of LOG, the daemon's, and fails.
wait_ready() {
  for _ in $(seq 1 150); do
    curl -fs "$url/v2/health/ready" >/dev/null 2>&1 && return 0
    sleep 2
  done
  echo "daemon not ready"
  tail -20 "$1"
  return 1
}

# serve_ready starts the daemon ($bin serve, its log in $work/serve.log),
# sets daemon to its pid, and waits for it to be ready.
serve_ready() {
  "$bin" serve >"$work/serve.log" 2>&1 &
  daemon=$!
  wait_ready "$work/serve.log"
}

# set_slo MODEL SLO gives the demo model MODEL of $work/models the SLO SLO.
set_slo() {
  sed -i "s/^slo:.*/slo: $2/" "$work/models/$1/config.yaml"
}

# emulate_as MODEL SLO PROFILE gives the demo model MODEL of $work/models
# (gpuletd models synth) the SLO SLO and the reference set's curve of
# PROFILE, which an emulated device serves it with.
emulate_as() {
  local cfg=$work/models/$1/config.yaml
  sed -i -e "s/^slo:.*/slo: $2/" -e "s/^profile:.*//" "$cfg"
  echo "profile: $3" >>"$cfg"
}
