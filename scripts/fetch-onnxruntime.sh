#!/usr/bin/env bash
# Fetches ONNX Runtime 1.29.0 for linux/x64 from the npm registry into DEST
# when it is missing or differs, checking every file's sha256. Only the
# package tarballs are downloaded (npm pack): no install script ever runs.
#
#   scripts/fetch-onnxruntime.sh [DEST_DIR]         the core library (CPU)
#   scripts/fetch-onnxruntime.sh --gpu [DEST_DIR]   the CUDA and TensorRT
#                                                   provider libraries too
#
# DEST_DIR defaults to .deps/onnxruntime. Where each file comes from:
#   com.github.asus4.onnxruntime@0.4.9
#     Plugins/Linux/x64/libonnxruntime.so        -> libonnxruntime.so.1 (ONNX
#                                                   Runtime 1.29.0 core, CPU
#                                                   provider; its SONAME is
#                                                   libonnxruntime.so.1)
#     LICENSE, ThirdPartyNotices.txt             -> licenses/
#   com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 (--gpu, 229 MB)
#     Plugins/Linux/x64/libonnxruntime_providers_cuda.so      (CUDA 13 plugin
#                                                   execution provider)
#     Plugins/Linux/x64/libonnxruntime_providers_tensorrt.so
#     Plugins/Linux/x64/libonnxruntime_providers_shared.so
# The CUDA provider needs the CUDA 13 runtime libraries (libcudart.so.13,
# libcublas.so.13, libcublasLt.so.13, libcurand.so.10, cuDNN 9), which are
# not shipped here: see docs/OPERATIONS.md and `gpuletd doctor`.
set -euo pipefail

gpu=0
if [ "${1:-}" = "--gpu" ]; then gpu=1; shift; fi
dest=${1:-.deps/onnxruntime}

version=1.29.0
core_pkg=com.github.asus4.onnxruntime@0.4.9
core_tgz=com.github.asus4.onnxruntime-0.4.9.tgz
core_tgz_sha256=e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d
gpu_pkg=com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9
gpu_tgz=com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9.tgz
gpu_tgz_sha256=2b459e0c17f340c92970c10ed86de4f37a3009f93c14053e6ad4334cbb6be412

# file in DEST, sha256, path inside its package tarball
core_files=(
  "libonnxruntime.so.1 5715f06d8992ca8eeeddcce43df3a7d38f97d537052126f558e912cb312460ca package/Plugins/Linux/x64/libonnxruntime.so"
)
gpu_files=(
  "libonnxruntime_providers_cuda.so 56cf3254b118ad837ccc4ed8f6d1b23504bbf7ef91b34cbc0b289cb7f10b3037 package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so"
  "libonnxruntime_providers_tensorrt.so ef6071798a339038ad66c428fb1a809cf8e499bffc3b6870e4e8bc4f4c6a6320 package/Plugins/Linux/x64/libonnxruntime_providers_tensorrt.so"
  "libonnxruntime_providers_shared.so c6a12593396095f5670160e284c35d1700b7708cf3037b7042e2a5200ccae772 package/Plugins/Linux/x64/libonnxruntime_providers_shared.so"
)

have() { # have NAME SHA: the file is in DEST with that checksum
  [ -f "$dest/$1" ] && echo "$2  $dest/$1" | sha256sum -c --status
}

# fetch PKG TGZ TGZ_SHA LICENSE_PREFIX FILE_SPEC...: fetch what is missing.
fetch() {
  local pkg=$1 tgz=$2 tgz_sha=$3 lic=$4; shift 4
  local missing=0 spec name sha inner
  for spec in "$@"; do
    read -r name sha inner <<<"$spec"
    have "$name" "$sha" || missing=1
  done
  [ "$missing" = 1 ] || return 0

  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) ;;
    *) echo "fetch-onnxruntime: only linux/x86_64 is packaged; set onnxruntime.library (GPULETD_ONNXRUNTIME_LIBRARY) to your own libonnxruntime.so" >&2; exit 1 ;;
  esac
  command -v npm >/dev/null || { echo "fetch-onnxruntime: npm is needed to fetch $pkg (apt install npm)" >&2; exit 1; }
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: work is local
  trap "rm -rf '$work'" RETURN
  echo "fetch-onnxruntime: fetching $pkg (ONNX Runtime $version) from the npm registry" >&2
  (cd "$work" && npm pack --silent "$pkg" >/dev/null)
  echo "$tgz_sha  $work/$tgz" | sha256sum -c --status || {
    echo "fetch-onnxruntime: checksum mismatch for $tgz: expected $tgz_sha" >&2; exit 1; }
  mkdir -p "$dest/licenses"
  for spec in "$@"; do
    read -r name sha inner <<<"$spec"
    tar -xzf "$work/$tgz" -C "$work" "$inner"
    echo "$sha  $work/$inner" | sha256sum -c --status || {
      echo "fetch-onnxruntime: checksum mismatch for $inner in $tgz" >&2; exit 1; }
    install -m 0644 "$work/$inner" "$dest/$name.tmp"
    mv "$dest/$name.tmp" "$dest/$name"
    echo "fetch-onnxruntime: installed $dest/$name" >&2
  done
  tar -xzf "$work/$tgz" -C "$work" package/LICENSE
  install -m 0644 "$work/package/LICENSE" "$dest/licenses/$lic-LICENSE"
  if tar -tzf "$work/$tgz" package/ThirdPartyNotices.txt >/dev/null 2>&1; then
    tar -xzf "$work/$tgz" -C "$work" package/ThirdPartyNotices.txt
    install -m 0644 "$work/package/ThirdPartyNotices.txt" "$dest/licenses/$lic-ThirdPartyNotices.txt"
  fi
}

fetch "$core_pkg" "$core_tgz" "$core_tgz_sha256" onnxruntime "${core_files[@]}"
if [ "$gpu" = 1 ]; then
  fetch "$gpu_pkg" "$gpu_tgz" "$gpu_tgz_sha256" onnxruntime-gpu "${gpu_files[@]}"
fi
