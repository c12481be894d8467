#!/usr/bin/env bash
# The measurement campaign on a machine with an NVIDIA GPU, run from an
# unpacked bundle (scripts/gpu/bundle.sh). Each phase fits in ten minutes,
# keeps everything it measured in WORK/out/PHASE, packs it into one archive,
# OUTDIR/campaign-PHASE.tar.gz, and prints a summary.
#
#   campaign.sh PHASE OUTDIR [MODELS]
#
# Phases:
#   check     nvidia-smi, `gpuletd doctor --json`, the GPU tests, the GPU
#             run-time benchmark (BenchmarkGPURunGaps), and the models
#             exported to WORK/models (export-models.py; lenet5 from
#             `gpuletd models synth`)
#   profile   L(b,p) of MODELS (default: every exported model) under MPS at
#             p in 10..100 and b in 1..64, with the SMs each executor saw,
#             executor start/load/warm-up times and solo SM/L2/DRAM
#             utilisation (Nsight Compute on the whole GPU, NVML GPM under
#             MPS) at batches 8 and 32
#   util      solo SM/L2/DRAM utilisation of MODELS on the whole GPU (Nsight
#             Compute) at batches 1, 8 and 32: the profile phase measures the
#             whole GPU last, so its time limit can cut these points
#   pairs     MODELS beside themselves on two gpu-lets (20/80, 40/60, 50/50)
#   serve     `gpuletd serve` on the GPU with MPS and modelzoo's MODELS
#             (default lenet5 resnet18): it profiles them itself, plans and
#             serves an open-loop load of each, then stops; status, metrics,
#             load reports, the profile events (each quick profile's start
#             and end) and the daemon's log are kept
#             SERVE_BIN=FILE serves with another gpuletd binary (an earlier
#             build, to compare; load and status still use this bundle's)
#             and PROFILES=FILE starts from that state database's profiles
#             (campaign-serve.tar.gz's gpuletd.db), so no time goes to them;
#             LIVE=1 also loads, 6 s into the load, a resnet18 with other
#             weights under another name (no profile): the daemon profiles
#             it beside the serving gpu-lets (gpuletd models load --wait
#             prints how long that took; the load reports' seconds show
#             what it cost the others); TRACE=1 traces every request
#             (trace_rate 1; the files, with each batch's start and end,
#             go into the archive under traces/); CUDASHM=1 first runs
#             cuda-shm-check.py against the first model once it is ready
#             (the CUDA shared-memory extension with GPU memory of the
#             client's own, and its latency against a binary body) and,
#             after the load, `gpuletd load` of that model at 400 req/s
#             with its tensors in GPU memory, in the body and in system
#             shared memory, alternated
#   pipeline  the same with `gpuletd models synth --pipeline`: the example
#             ensemble (detector-like model, classifier-like model and its
#             cheaper variant) served end to end at an open-loop load
#   tests     doctor, the GPU tests and BenchmarkGPURunGaps (about three
#             minutes at most; needs no torchvision)
#   memory    one executor serving lenet5 and resnet18 on the whole GPU
#             (no MPS): its GPU memory as `gpuletd status` gives it once
#             ready and after each of four loads of rising rate (5 to 8 s
#             each), with the loads' results; about a minute. An executor
#             whose memory keeps growing with the load is the fault
#             1507d1c fixed (per-thread state of the CUDA provider).
#             DEVICES=cpu runs the same steps on the CPU, to try the phase.
#   quick     what a short lease allows, in about five minutes: the tests
#             phase, then the serve and pipeline phases
#   release   RELEASE=FILE, a -cuda release archive (make dist-gpu, or
#             scripts/dist.sh --gpu from this bundle's bin/ and lib/): checks
#             its sha256, unpacks it outside the bundle and runs it as an
#             operator would, without GPULETD_ONNXRUNTIME_LIBRARY or
#             LD_LIBRARY_PATH: `gpuletd doctor` bare (it must name the CUDA
#             libraries it misses and the fix), then with the fix it names
#             (GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS, a glob of PyTorch's
#             nvidia/*/lib folders), then the serve phase with the archive's
#             binary, which finds ONNX Runtime and its CUDA provider beside
#             itself and the CUDA libraries through that setting;
#             RELEASE_USER=gpuletd runs doctor and the daemon as that
#             unprivileged user, as the shipped unit does (the user is added,
#             as install.sh adds it, when missing), and lists what under the
#             serve folder it does not own afterwards
#
# WORK (default /tmp/gpuletd-campaign) keeps the models, the store and the
# MPS pipes between phases. CUDA_LIB_DIRS as in run-tests.sh. The phase
# stops starting new models once BUDGET seconds (default 540) have passed.
set -uo pipefail
phase=${1:?phase: check, tests, profile, util, pairs, serve, pipeline, memory, quick or release}
dest=${2:?output folder}
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-/tmp/gpuletd-campaign}
out=$work/out/$phase
budget=${BUDGET:-540}
start=$(date +%s)
rm -rf "$out"
mkdir -p "$out" "$dest" "$work/state" "$work/run"
dirs=${CUDA_LIB_DIRS:-$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib 2>/dev/null | tr '\n' ':')}
export LD_LIBRARY_PATH="${dirs%:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPULETD_ONNXRUNTIME_LIBRARY="$here/lib/libonnxruntime.so.1"
gpuletd=("$here/bin/gpuletd" --config "$work/gpuletd.yaml" --log-format json)
cat >"$work/gpuletd.yaml" <<EOF
state_dir: $work/state
runtime_dir: $work/run
model_repository: $work/models
partitioning:
  sizes: [10, 20, 30, 40, 50, 60, 80, 100]
EOF
all_models="lenet5 mobilenet_v2 resnet50 googlenet bert ssd300 vgg16"
models=${3:-$all_models}

left() { echo $((budget - ($(date +%s) - start))); }

# as_prefix USER: sets as=() to what runs a command as USER (with its
# groups), or as this user when USER is empty: "${as[@]}" CMD… (a prefix,
# not a function, so that CMD & gives CMD's own process ID).
as_prefix() {
  as=()
  if [ -n "$1" ]; then
    as=(setpriv --reuid="$(id -u "$1")" --regid="$(id -g "$1")" --init-groups)
  fi
}

# each MODEL runs under a time limit; SIGINT keeps what it measured.
per_model() { # name timeout args...
  local m=$1 t=$2
  shift 2
  if [ "$(left)" -lt 20 ]; then
    echo "$m: skipped, the phase's time is spent"
    return
  fi
  t=$((t < $(left) ? t : $(left)))
  timeout -s INT -k 15 "$t" "${gpuletd[@]}" profile "$m" --device gpu0 "$@" \
    >"$out/$phase-$m.json" 2>"$out/$phase-$m.log"
  echo "$m: rc=$? after $(($(date +%s) - start))s"
  python3 "$here/summarize-profile.py" "$out/$phase-$m.json" || tail -3 "$out/$phase-$m.log"
}

# each_model profiles every model of MODELS with these flags, the phase's
# time left shared equally among the models not yet done.
each_model() {
  local n m
  n=$(echo "$models" | wc -w)
  for m in $models; do
    per_model "$m" $(($(left) / n)) "$@" --json --force
    n=$((n - 1))
  done
}

# gpu_tests TESTS_TIMEOUT BENCH_TIMEOUT: the GPU tests, then a CUDA run's
# time as serving issues them (gaps, changing batch sizes, one session per
# size: BenchmarkGPURunGaps, docs/BENCHMARKS.md).
gpu_tests() {
  (cd "$work" && timeout "$1" "$here/run-tests.sh") >"$out/tests.log" 2>&1
  echo "gpu tests rc=$?"
  grep -E '^(--- |ok|FAIL|PASS)' "$out/tests.log"
  (cd "$work" && timeout "$2" "$here/tests/executor_engine.test" -test.run '^$' -test.bench GPURunGaps \
    -test.benchtime 0.3s) >"$out/run-gaps.txt" 2>&1
  echo "run gaps rc=$?"
  grep -E 'b1-5|b2/back' "$out/run-gaps.txt"
}

case $phase in
check)
  nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1
  "${gpuletd[@]}" doctor --json >"$out/doctor.json" 2>"$out/doctor.log"
  echo "doctor rc=$?"
  gpu_tests 200 120
  rm -rf "$work/models"
  "${gpuletd[@]}" models synth "$work/models" --models lenet5 >"$out/export.log" 2>&1
  sed -i 's/^max_batch_size: .*/max_batch_size: 64/' "$work/models/lenet5/config.yaml"
  timeout 240 python3 "$here/export-models.py" "$work/models" --check >>"$out/export.log" 2>&1
  echo "export rc=$?"
  cat "$out/export.log"
  ;;
memory)
  mw=$work/memory
  rm -rf "$mw" && mkdir -p "$mw"
  "${gpuletd[@]}" models synth "$mw/models" --models lenet5,resnet18 >"$out/synth.log" 2>&1
  mem_url=http://127.0.0.1:8710
  GPULETD_MODEL_REPOSITORY=$mw/models GPULETD_STATE_DIR=$mw/state GPULETD_RUNTIME_DIR=$mw/run \
    GPULETD_DEVICES=${DEVICES:-nvidia} GPULETD_PARTITIONING_BACKEND=none GPULETD_LISTEN=127.0.0.1:8710 \
    GPULETD_GRPC_LISTEN=127.0.0.1:0 GPULETD_LOG_FORMAT=json "$here/bin/gpuletd" serve >"$out/serve.log" 2>&1 &
  daemon=$!
  for m in lenet5 resnet18; do
    state="not ready"
    while [ "$(left)" -gt 60 ] && kill -0 $daemon 2>/dev/null; do
      curl -sf -o /dev/null "$mem_url/v2/models/$m/ready" && state=ready && break
      sleep 1
    done
    echo "$m $state after $(($(date +%s) - start))s"
  done
  # memory WHEN: each gpu-let's models and GPU memory (else resident), from /api/v1/status.
  memory() {
    curl -s "$mem_url/api/v1/status" | python3 -c 'import json,sys
s = json.load(sys.stdin)
print(sys.argv[1] + ":", " ".join("%s[%s] %.0f MiB" % (g["id"], ",".join(m["name"] for m in g.get("models", [])),
      (g.get("memory", {}).get("device_bytes") or g.get("memory", {}).get("host_bytes", 0)) / 2**20) for g in s["gpulets"]))' "$1"
  }
  memory ready | tee "$out/memory.txt"
  step=0
  for spec in "lenet5=100,resnet18=50 150 5s" "lenet5=2000,resnet18=500 2500 8s" "lenet5=2000,resnet18=500 2500 8s" "lenet5=4000,resnet18=1000 5000 8s"; do
    set -- $spec
    step=$((step + 1))
    "$here/bin/gpuletd" load --url $mem_url --model "$1" --rate "$2" --duration "$3" --binary --json >"$out/load-$step.json" 2>&1
    python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for r in d.get("reports") or [d["report"]]:
    print("  %s: %d of %d answered, %.1f%% within its SLO, p50/p99 %.2f/%.2f ms" % (r["model"], r["ok"], r["sent"], 100 * (r.get("slo_attainment") or 0), r["latency"]["p50_us"] / 1000, r["latency"]["p99_us"] / 1000))' "$out/load-$step.json" || tail -3 "$out/load-$step.json"
    memory "after $2 req/s for $3" | tee -a "$out/memory.txt"
  done
  [ "${DEVICES:-nvidia}" = nvidia ] && nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv | tee -a "$out/memory.txt"
  kill -TERM $daemon
  wait $daemon
  echo "daemon exit=$?"
  ;;
tests)
  "${gpuletd[@]}" doctor >"$out/doctor.txt" 2>&1
  echo "doctor rc=$?"
  tail -25 "$out/doctor.txt"
  gpu_tests 120 90
  ;;
quick)
  "$0" tests "$dest"
  BUDGET=150 "$0" serve "$dest"
  BUDGET=150 RATE=400 "$0" pipeline "$dest"
  ;;
release)
  archive=${RELEASE:?RELEASE=FILE: a gpuletd-VERSION-linux-amd64-cuda.tar.gz}
  (cd "$(dirname "$archive")" && sha256sum -c "$(basename "$archive").sha256") || exit 1
  rel=$work/release
  rm -rf "$rel" && mkdir -p "$rel"
  tar xzf "$archive" -C "$rel" || exit 1
  relbin=$(echo "$rel"/gpuletd-*/bin/gpuletd)
  (cd "$rel" && find . -type f | sort) >"$out/files.txt"
  if [ -n "${RELEASE_USER:-}" ]; then
    id "$RELEASE_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RELEASE_USER" || exit 1
    echo "as $(id "$RELEASE_USER")"
  fi
  as_prefix "${RELEASE_USER:-}"
  "${as[@]}" env -u GPULETD_ONNXRUNTIME_LIBRARY -u LD_LIBRARY_PATH "$relbin" doctor >"$out/doctor-bare.txt" 2>&1
  echo "doctor from the archive, no CUDA libraries in the loader's path: rc=$?"
  head -20 "$out/doctor-bare.txt"
  export CUDA_GLOB=${CUDA_GLOB:-/opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib}
  "${as[@]}" env -u GPULETD_ONNXRUNTIME_LIBRARY -u LD_LIBRARY_PATH GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS="$CUDA_GLOB" \
    "$relbin" doctor >"$out/doctor.txt" 2>&1
  echo "doctor from the archive with GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS=$CUDA_GLOB: rc=$?"
  cat "$out/doctor.txt"
  SERVE_AS=${RELEASE_USER:-} SERVE_BIN=$relbin SERVE_OWN_LIB=1 BUDGET=${BUDGET:-150} "$0" serve "$dest"
  ;;
profile)
  each_model --partitions 10,20,30,40,50,60,80,100 --batches 1,2,4,8,16,32,64 \
    --util-batches 8,32 --ncu-timeout 60s --min-samples 10 --max-samples 300 --max-time 1s
  ;;
util)
  each_model --partitions 100 --batches 1,8,32 --util-batches 1,8,32 \
    --ncu-timeout 90s --min-samples 8 --max-samples 100 --max-time 300ms
  ;;
pairs)
  each_model --partitions 20,40,50,60,80 --batches 1,8,32 --pairs --pair-batches 1,8,32 \
    --util-batches 8 --ncu-timeout 1s --min-samples 10 --max-samples 200 --max-time 1s
  ;;
serve | pipeline)
  sw=$work/$phase
  rm -rf "$sw" && mkdir -p "$sw/state" "$sw/run"
  printf 'listen: 127.0.0.1:8700\nstate_dir: %s/state\nruntime_dir: %s/run\nmodel_repository: %s/models\n' "$sw" "$sw" "$sw" >"$sw/gpuletd.yaml"
  echo 'allow_client_shm: true # the runs below with --shm and --cuda-shm' >>"$sw/gpuletd.yaml"
  if [ "$phase" = pipeline ]; then
    models=spot-and-label
    "${gpuletd[@]}" models synth "$sw/models" --pipeline 50ms >"$out/synth.log" 2>&1
    echo 'default_slo: 25ms' >>"$sw/gpuletd.yaml"
  else
    models=${3:-lenet5 resnet18}
    "${gpuletd[@]}" models synth "$sw/models" --models "$(echo $models | tr ' ' ,)" >"$out/synth.log" 2>&1
  fi
  # MPS_FOREGROUND=1: MPS control daemons as the daemon's children (-f); the
  # check after the run then should find no MPS zombie.
  [ -n "${MPS_FOREGROUND:-}" ] && printf 'mps:\n  foreground: true\n' >>"$sw/gpuletd.yaml"
  sg=("$here/bin/gpuletd" --config "$sw/gpuletd.yaml")
  [ -n "${PROFILES:-}" ] && cp "$PROFILES" "$sw/state/gpuletd.db"
  # SERVE_OWN_LIB=1: the serve binary finds ONNX Runtime itself (a release's
  # lib/gpuletd/), as an installed gpuletd does, and the CUDA libraries
  # through CUDA_GLOB (onnxruntime.cuda_library_dirs), not LD_LIBRARY_PATH.
  serve_env=()
  [ -n "${SERVE_OWN_LIB:-}" ] && serve_env=(-u GPULETD_ONNXRUNTIME_LIBRARY -u LD_LIBRARY_PATH "GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS=$CUDA_GLOB")
  # SERVE_AS=USER: the daemon runs as that user, over folders it owns.
  [ -n "${SERVE_AS:-}" ] && chown -R "$SERVE_AS:" "$sw"
  as_prefix "${SERVE_AS:-}"
  "${as[@]}" env "${serve_env[@]}" "${SERVE_BIN:-$here/bin/gpuletd}" --config "$sw/gpuletd.yaml" serve --log-format json >"$out/serve.log" 2>&1 &
  daemon=$!
  nvidia-smi --query-gpu=timestamp,utilization.gpu,clocks.sm,clocks_throttle_reasons.active,power.draw --format=csv -l 2 >"$out/gpu-samples.csv" 2>&1 &
  sampler=$!
  ready=no
  while [ "$(left)" -gt 60 ] && kill -0 $daemon 2>/dev/null; do
    if python3 -c 'import urllib.request,sys; sys.exit(0 if urllib.request.urlopen("http://127.0.0.1:8700/v2/health/ready", timeout=2).status == 200 else 1)' 2>/dev/null; then
      ready=yes
      break
    fi
    sleep 2
  done
  echo "ready=$ready after $(($(date +%s) - start))s"
  # The daemon is ready once the models profiled within its first 30 s
  # serve; the rest are profiled beside them, each ready once placed. The
  # load waits for every model, as a client checking its model would.
  for m in $models; do
    while [ "$(left)" -gt 60 ] && kill -0 $daemon 2>/dev/null; do
      python3 -c 'import urllib.request,sys; sys.exit(0 if urllib.request.urlopen("http://127.0.0.1:8700/v2/models/%s/ready" % sys.argv[1], timeout=2).status == 200 else 1)' "$m" 2>/dev/null && break
      sleep 1
    done
    echo "$m ready after $(($(date +%s) - start))s"
  done
  [ -n "${SERVE_AS:-}" ] && ps -eo user,pid,comm | awk '$3 ~ /^(nvidia-cuda-mps|gpuletd)/'
  "${sg[@]}" status >"$out/status-before.txt" 2>&1
  cat "$out/status-before.txt"
  # When each quick profile began and ended (to the second), the first
  # start's time on the GPU model by model.
  "${sg[@]}" events --kind profile_job -n 1000 >"$out/profile-events.txt" 2>&1
  grep -Eo '^[0-9-]+ [0-9:]+ .* (profiling|profiled) [^ ]+ on [^ ]+' "$out/profile-events.txt" || tail -3 "$out/profile-events.txt"
  if [ -n "${CUDASHM:-}" ]; then
    python3 "$here/cuda-shm-check.py" http://127.0.0.1:8700 "${models%% *}" >"$out/cuda-shm.json" 2>&1
    echo "cuda-shm-check rc=$?"
    cat "$out/cuda-shm.json"
  fi
  if [ -n "${TRACE:-}" ]; then
    "${sg[@]}" trace set trace_level=TIMESTAMPS trace_rate=1 log_frequency=4000 >"$out/trace-set.txt" 2>&1
    echo "trace set rc=$?"
  fi
  rate=${RATE:-800}
  loads=()
  for m in $models; do
    "${sg[@]}" load --model "$m" --rate $rate --duration 20s --binary --json >"$out/load-$m.json" 2>"$out/load-$m.log" &
    loads+=($!)
    rate=200
  done
  if [ -n "${LIVE:-}" ] && [ "$phase" = serve ]; then
    sleep 6
    "${sg[@]}" models synth "$sw/extra" --models resnet18 --seed 2 >>"$out/synth.log" 2>&1
    mv "$sw/extra/resnet18" "$sw/models/resnet18b"
    live_start=$(date +%s)
    "${sg[@]}" models load resnet18b --wait "$(( $(left) > 70 ? $(left) - 60 : 10 ))s" >"$out/live-load.log" 2>&1
    echo "live: gpuletd models load resnet18b rc=$? after $(($(date +%s) - live_start))s"
    cat "$out/live-load.log"
  fi
  wait "${loads[@]}"
  if [ -n "${CUDASHM:-}" ]; then # the first model again, its tensors three ways, 5 s each
    m=${models%% *}
    for how in --cuda-shm --binary --shm --cuda-shm --binary; do
      "${sg[@]}" load --model "$m" --rate 400 --duration 5s $how --json >"$out/load-$m$how.json" 2>&1
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["report"]; print(sys.argv[2], "sent", r["sent"], "ok", r["ok"], "goodput", r.get("goodput"), "p50/p99 us", r["latency"]["p50_us"], r["latency"]["p99_us"], "request bytes", r.get("request_bytes"))' "$out/load-$m$how.json" "$how" 2>/dev/null || tail -3 "$out/load-$m$how.json"
    done
  fi
  for m in $models; do
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["report"]; print(sys.argv[2], {k: r.get(k) for k in ("target_rate", "sent", "ok", "failed", "goodput", "slo_attainment", "slo_ms")}, "p50/p99 ms", r["latency"]["p50_us"] / 1000, r["latency"]["p99_us"] / 1000); print("  per second (due/within SLO/failed):", " ".join("%d/%d/%d" % (s["due"], s["within_slo"], s["failed"]) for s in r.get("seconds") or []))' "$out/load-$m.json" "$m" 2>/dev/null || tail -3 "$out/load-$m.log"
  done
  python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:8700/metrics", timeout=5).read().decode())' >"$out/metrics.txt" 2>&1
  grep -E '^gpuletd_request_failures_total' "$out/metrics.txt" # deadline (refused on arrival, late) against dropped (a queue's head) and the rest
  "${sg[@]}" status >"$out/status-after.txt" 2>&1
  cat "$out/status-after.txt"
  # The driver's own list, beside status' MEMORY column (its GPU memory per executor).
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv >"$out/compute-apps.txt" 2>&1
  cat "$out/compute-apps.txt"
  kill -TERM $daemon
  wait $daemon
  echo "daemon exit=$?"
  kill $sampler 2>/dev/null
  grep -E '"level":"(warn|error)"' "$out/serve.log" | tail -20
  cp "$sw/state/gpuletd.db" "$out/gpuletd.db" 2>/dev/null # the profiles the daemon measured
  [ -d "$sw/state/traces" ] && cp -r "$sw/state/traces" "$out/traces"
  nvidia-smi --query-gpu=compute_mode,mig.mode.current --format=csv >"$out/gpu-after.txt" 2>&1
  # MPS processes left, by their command name (pgrep -f would also match
  # the shells whose command lines name them); a zombie shows as Z.
  ps -eo pid,stat,comm | awk '$3 ~ /^nvidia-cuda-mps/' >>"$out/gpu-after.txt" 2>&1
  cat "$out/gpu-after.txt"
  if [ -n "${SERVE_AS:-}" ]; then
    echo "under $sw, not $SERVE_AS's:"
    find "$sw" ! -user "$SERVE_AS" | head
  fi
  ;;
*)
  echo "unknown phase $phase" >&2
  exit 2
  ;;
esac
[ -e "$out/gpuletd.db" ] || cp "$work/state/gpuletd.db" "$out/gpuletd.db" 2>/dev/null
tar czf "$dest/campaign-$phase.tar.gz" -C "$out" .
echo "phase $phase done in $(($(date +%s) - start))s: $dest/campaign-$phase.tar.gz"
