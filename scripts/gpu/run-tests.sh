#!/usr/bin/env bash
# Runs the gpu-tagged tests of a bundle (scripts/gpu/bundle.sh) on a machine
# with an NVIDIA GPU. CUDA_LIB_DIRS (default: the nvidia/*/lib folders of a
# CUDA 13 PyTorch under /opt/torch/.venv) go into LD_LIBRARY_PATH, which the
# daemons and executors the tests start inherit.
#
#   run-tests.sh [-test.run REGEXP]    (default: every GPU test)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dirs=${CUDA_LIB_DIRS:-$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib 2>/dev/null | tr '\n' ':')}
export LD_LIBRARY_PATH="${dirs%:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPULETD_ONNXRUNTIME_LIBRARY="$here/lib/libonnxruntime.so.1"
export GPULETD_TEST_BINARY="$here/bin/gpuletd"
export GPULETD_TEST_FAKE_MPS_CONTROL="$here/tests/fake-nvidia-cuda-mps-control"
status=0
for t in "$here"/tests/*.test; do
  echo "== $(basename "$t")"
  (cd "$(mktemp -d)" && "$t" -test.v -test.count=1 -test.run "${1:-GPU}") || status=1
done
exit $status
