#!/usr/bin/env bash
# Packs a release archive: everything a server needs to run gpuletd, for a
# server with no Go, gcc or npm (make dist, make dist-gpu).
#
#   scripts/dist.sh [--gpu] [OUTDIR]       (default dist)
#
# Writes OUTDIR/gpuletd-VERSION-OS-ARCH.tar.gz (…-cuda.tar.gz with --gpu) and
# its sha256 beside it (.sha256, for sha256sum -c). Inside, one folder
# gpuletd-VERSION:
#   bin/gpuletd                      the binary
#   lib/gpuletd/libonnxruntime.so.1  ONNX Runtime's core, where the binary
#                                    looks for it (<exe dir>/../lib/gpuletd/)
#   lib/gpuletd/libonnxruntime_providers_{cuda,tensorrt,shared}.so  (--gpu)
#   lib/gpuletd/licenses/            ONNX Runtime's licences
#   systemd/install.sh, gpuletd.service, gpuletd-backup.{service,timer}, gpuletd.yaml
#                                    install as make install does
#   README.md, docs/OPERATIONS.md, docs/API.md
#   alerts/gpuletd.rules.yml         Prometheus alerting rules
#   dashboards/gpuletd.json          a Grafana dashboard
# so the folder runs where it is unpacked (bin/gpuletd serve) or installs as
# a service (sudo ./systemd/install.sh install).
#
# Inputs, as make builds them: GPULETD_BIN (default bin/gpuletd),
# GPULETD_ONNXRUNTIME_LIBRARY (default .deps/onnxruntime/libonnxruntime.so.1;
# the providers and licences are taken from beside it), VERSION (default git
# describe), PLATFORM (default go env GOOS-GOARCH). Entries carry the last
# commit's time and no owner, so the same inputs pack the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

gpu=0
if [ "${1:-}" = "--gpu" ]; then gpu=1; shift; fi
out=${1:-dist}
bin=${GPULETD_BIN:-bin/gpuletd}
lib=${GPULETD_ONNXRUNTIME_LIBRARY:-.deps/onnxruntime/libonnxruntime.so.1}
libsrc=$(dirname "$lib")
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
platform=${PLATFORM:-$(go env GOOS 2>/dev/null || echo linux)-$(go env GOARCH 2>/dev/null || echo amd64)}
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

die() { echo "dist.sh: $*" >&2; exit 1; }
[ -x "$bin" ] || die "$bin is missing: run make build"
[ -f "$lib" ] || die "ONNX Runtime ($lib) is missing: run make deps"
providers=(libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so libonnxruntime_providers_shared.so)
if [ "$gpu" = 1 ]; then
  for f in "${providers[@]}"; do
    [ -f "$libsrc/$f" ] || die "the GPU provider $libsrc/$f is missing: run make deps-gpu"
  done
fi

name=gpuletd-$version
archive=$name-$platform.tar.gz
if [ "$gpu" = 1 ]; then archive=$name-$platform-cuda.tar.gz; fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$name
install -d "$root/bin" "$root/lib/gpuletd" "$root/systemd" "$root/docs" "$root/alerts"
install -m 0755 "$bin" "$root/bin/gpuletd"
install -m 0644 "$lib" "$root/lib/gpuletd/libonnxruntime.so.1"
if [ "$gpu" = 1 ]; then
  for f in "${providers[@]}"; do install -m 0644 "$libsrc/$f" "$root/lib/gpuletd/$f"; done
fi
for f in "$libsrc"/licenses/*; do
  [ -f "$f" ] || continue
  # The GPU package's licence goes only with the providers it covers.
  case "$(basename "$f")" in *-gpu-*) [ "$gpu" = 1 ] || continue ;; esac
  install -D -m 0644 "$f" "$root/lib/gpuletd/licenses/$(basename "$f")"
done
install -m 0755 systemd/install.sh "$root/systemd/install.sh"
install -m 0644 systemd/gpuletd.service systemd/gpuletd-backup.service systemd/gpuletd-backup.timer systemd/gpuletd.yaml "$root/systemd/"
install -m 0644 README.md "$root/README.md"
install -m 0644 docs/OPERATIONS.md docs/API.md "$root/docs/"
install -m 0644 alerts/gpuletd.rules.yml "$root/alerts/gpuletd.rules.yml"
install -D -m 0644 dashboards/gpuletd.json "$root/dashboards/gpuletd.json"

mkdir -p "$out"
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
  -C "$stage" -cf - "$name" | gzip -n >"$out/$archive.tmp"
mv "$out/$archive.tmp" "$out/$archive"
(cd "$out" && sha256sum "$archive" >"$archive.sha256")
echo "dist: $out/$archive ($(du -h "$out/$archive" | cut -f1))"
