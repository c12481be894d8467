#!/usr/bin/env bash
# Fetches ONNX Runtime's linux/x64 CPU shared library from the npm package
# onnxruntime-node (pinned version, checksums verified) into DEST when it is
# missing. Only the tarball is downloaded: the package's install script never
# runs.
#
# usage: scripts/fetch-onnxruntime.sh [DEST_DIR]   (default .deps/onnxruntime)
set -euo pipefail

version=1.24.3
# sha256 of onnxruntime-node-${version}.tgz as the npm registry serves it.
tgz_sha256=aa1bb5fa261ea68de05dd53efbba210cd7adf2d2850f4c3a201054c74cc78040
# sha256 of package/bin/napi-v6/linux/x64/libonnxruntime.so.1 inside it.
lib_sha256=92ba8e44d31b80a34f5e805076a044122c3be1fffe0d88ed790de7267b0b2682

dest=${1:-.deps/onnxruntime}
lib="$dest/libonnxruntime.so.1"

if [ -f "$lib" ] && echo "$lib_sha256  $lib" | sha256sum -c --status; then
  exit 0
fi

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) ;;
  *) echo "fetch-onnxruntime: only linux/x86_64 is packaged; set onnxruntime.library (GPULETD_ONNXRUNTIME_LIBRARY) to your own libonnxruntime.so" >&2; exit 1 ;;
esac
command -v npm >/dev/null || { echo "fetch-onnxruntime: npm is needed to fetch onnxruntime-node@$version (apt install npm)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetch-onnxruntime: fetching onnxruntime-node@$version from the npm registry" >&2
(cd "$work" && npm pack --silent "onnxruntime-node@$version" >/dev/null)
tgz="$work/onnxruntime-node-$version.tgz"
echo "$tgz_sha256  $tgz" | sha256sum -c --status || {
  echo "fetch-onnxruntime: checksum mismatch for $(basename "$tgz"): expected $tgz_sha256" >&2; exit 1; }
tar -xzf "$tgz" -C "$work" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
echo "$lib_sha256  $work/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" | sha256sum -c --status || {
  echo "fetch-onnxruntime: checksum mismatch for libonnxruntime.so.1" >&2; exit 1; }
mkdir -p "$dest"
install -m 0644 "$work/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$lib.tmp"
mv "$lib.tmp" "$lib"
echo "fetch-onnxruntime: installed $lib" >&2
