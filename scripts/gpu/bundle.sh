#!/usr/bin/env bash
# Builds what the GPU checks need on a machine with an NVIDIA GPU but no Go
# toolchain: the gpuletd binary, the gpu-tagged test binaries and ONNX
# Runtime with its GPU providers, in one folder to copy there.
#
#   scripts/gpu/bundle.sh [DIR]      (default dist/gpu)
#
# SLIM_SM=90 (H100, H200; 80 for A100) keeps only that architecture's code in
# the CUDA provider (slim-provider.py): the bundle then packs into about a
# quarter of the size, and runs on GPUs of that architecture only.
#
# PACK=FILE also writes the bundle as one xz archive to carry there: binaries
# stripped, without the cmd/gpuletd test binary (its GPU tests, `gpuletd
# doctor` and the status' executor memory, are what campaign.sh's phases
# print). With SLIM_SM it comes to about 61 MB, 56 MB with PACK_NO_TESTS=1
# (no test binaries: the serve, release and profile phases need none), and
# PACK_TESTS="NAME..." keeps only the test binaries named (executor_engine,
# mps, fake-nvidia-cuda-mps-control: the mps tests need the last; with
# executor_engine alone, 59 MB); unpack
# with `tar xJf FILE`, the folder is named as DIR. Its bin/ and lib/ are what
# scripts/dist.sh --gpu packs into a release archive there (campaign.sh
# release).
#
# There, run DIR/run-tests.sh (make test-gpu's tests), DIR/bin/gpuletd doctor
# and the measurement phases of DIR/campaign.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-dist/gpu}
export CGO_ENABLED=1 CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"
make deps-gpu build >/dev/null
rm -rf "$out"
mkdir -p "$out/bin" "$out/tests" "$out/lib"
cp bin/gpuletd "$out/bin/"
cp -r .deps/onnxruntime/. "$out/lib/"
if [ -n "${SLIM_SM:-}" ]; then
  python3 scripts/gpu/slim-provider.py .deps/onnxruntime/libonnxruntime_providers_cuda.so \
    "$out/lib/libonnxruntime_providers_cuda.so" "$SLIM_SM"
fi
for pkg in ./executor/engine ./mps ./cmd/gpuletd; do
  name=$(echo "$pkg" | tr -c 'a-z0-9\n' '_' | sed 's/^_*//')
  go test -c -tags gpu -o "$out/tests/$name.test" "$pkg"
done
go build -o "$out/tests/fake-nvidia-cuda-mps-control" ./mps/testdata/fakempscontrol
cp scripts/gpu/run-tests.sh scripts/gpu/campaign.sh scripts/gpu/export-models.py scripts/gpu/summarize-profile.py scripts/gpu/trace-batches.py scripts/gpu/cuda-shm-check.py "$out/"
echo "bundle: $out ($(du -sh "$out" | cut -f1))"
if [ -n "${PACK:-}" ]; then
  pack=$(mktemp -d)
  trap 'rm -rf "$pack"' EXIT
  cp -r "$out" "$pack/"
  name=$(basename "$out")
  rm -f "$pack/$name/tests/cmd_gpuletd.test"
  [ -n "${PACK_NO_TESTS:-}" ] && rm -rf "$pack/$name/tests"
  if [ -n "${PACK_TESTS:-}" ]; then
    for t in "$pack/$name/tests/"*; do
      keep=
      for k in $PACK_TESTS; do [ "$(basename "$t" .test)" = "$k" ] && keep=1; done
      [ -n "$keep" ] || rm -f "$t"
    done
  fi
  strip "$pack/$name/bin/"* "$pack/$name/tests/"* 2>/dev/null || true
  # One thread and a dictionary larger than the binaries: the test binaries
  # compress against gpuletd's code.
  tar cf - -C "$pack" "$name" | xz -T1 --lzma2=preset=9e,dict=192MiB >"$PACK"
  echo "packed: $PACK ($(du -h "$PACK" | cut -f1))"
fi
