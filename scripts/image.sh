#!/usr/bin/env bash
# Builds gpuletd's container image from a release archive (make image, make
# image-gpu), with container/Containerfile.
#
#   scripts/image.sh ARCHIVE [TAG]
#
# ARCHIVE is what make dist (or make dist-gpu) wrote:
# dist/gpuletd-VERSION-OS-ARCH.tar.gz, or …-cuda.tar.gz with ONNX Runtime's GPU
# providers. TAG defaults to gpuletd:VERSION (gpuletd:VERSION-cuda).
#
# CONTAINER is the program that builds: docker (the default when its daemon
# answers) or podman; it may carry options ("podman --root DIR"). BASE is the
# image built on: Debian 12 slim, or for a -cuda archive NVIDIA's CUDA 13
# runtime with cuDNN 9 on Ubuntu 24.04, whose libraries the CUDA provider
# loads. Only the archive is sent as the build context.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "image.sh: $*" >&2; exit 1; }
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/image.sh ARCHIVE [TAG]"
archive=$1
[ -f "$archive" ] || die "$archive is missing: run make dist (make dist-gpu for the -cuda one)"
file=$(basename "$archive")
case "$file" in
gpuletd-*-cuda.tar.gz)
  version=${file#gpuletd-}; version=${version%-*-*-cuda.tar.gz}
  tag=${2:-gpuletd:$version-cuda}
  base=${BASE:-docker.io/nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04}
  ;;
gpuletd-*.tar.gz)
  version=${file#gpuletd-}; version=${version%-*-*.tar.gz}
  tag=${2:-gpuletd:$version}
  base=${BASE:-docker.io/library/debian:bookworm-slim}
  ;;
*) die "$file is not a release archive (gpuletd-VERSION-OS-ARCH.tar.gz)" ;;
esac

container=${CONTAINER:-}
if [ -z "$container" ]; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    container=docker
  elif command -v podman >/dev/null 2>&1; then
    container=podman
  else
    die "neither docker (with its daemon running) nor podman is here: install one, or set CONTAINER"
  fi
fi

# podman writes OCI images by default, which have no HEALTHCHECK.
format=()
case "$container" in podman|podman\ *|*/podman|*/podman\ *) format=(--format docker) ;; esac

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$archive" "$context/$file"
# shellcheck disable=SC2086 # CONTAINER may carry options
$container build "${format[@]}" -f container/Containerfile --build-arg "BASE=$base" --build-arg "ARCHIVE=$file" \
  --label "org.opencontainers.image.version=$version" -t "$tag" "$context"
echo "image: $tag (on $base)"
