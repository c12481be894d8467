#!/usr/bin/env bash
# What the tests use beyond Go, gcc and npm, and how to get it.
#
#   scripts/test-deps.sh check    list what is missing and which tests skip
#                                 or fail without it (exit 0 either way)
#   scripts/test-deps.sh install  install what is missing with apt-get (as
#                                 root, or through sudo)
#
# `make test-deps` runs install; `make test` runs check before and after the
# tests, so a skipped test never goes unnoticed. CI runs install.
set -euo pipefail

# command|Debian package|what needs it
tools=(
  "protoc|protobuf-compiler|make generate and check-generated (the .proto files' Go code)"
  "chromium|chromium|web: the admin page in a real browser (skips without it)"
  "systemd-analyze|systemd|systemd: the unit file verified by systemd-analyze (skips without it)"
  "promtool|prometheus|cmd/gpuletd: /metrics checked by promtool (only the client library's linter runs without it); alerts: the alerting rules checked and unit-tested by promtool; dashboards: every query of the Grafana dashboard read by promtool, and run in a real Prometheus (the prometheus command, same package) scraping a real daemon (skip without them)"
  "prlimit|util-linux|cmd/gpuletd: the full-disk test (fails without it)"
  "sqlite3|sqlite3|profiler/store, daemon: a database a sqlite3 shell holds locked, as an operator leaves one (fails without it)"
  "script|bsdutils|cmd/gpuletd: the shell completion typed in an interactive bash on a terminal (skips without it)"
  "bash_completion|bash-completion|cmd/gpuletd: the shell completion typed in an interactive bash, whose script calls bash-completion's functions (skips without it)"
  "zsh|zsh|cmd/gpuletd: the shell completion typed in an interactive zsh (skips without it)"
  "fish|fish|cmd/gpuletd: the shell completion asked of fish's completion engine (skips without it)"
  "podman|podman|cmd/gpuletd: the container image built from the release archive and run, as root (skips without it)"
  "runc|runc|cmd/gpuletd: the container image's runtime, which also runs where cgroup v1 and v2 are mounted side by side (the image test uses podman's default without it)"
  "iptables|iptables|cmd/gpuletd: the container image's published ports (its test fails without it)"
  "catatonit|catatonit|cmd/gpuletd: the pause process of the pod that podman kube play makes of the Kubernetes manifest (the image test fails without it)"
  "mmdebstrap|mmdebstrap|cmd/gpuletd: the container image's Debian 12 base, put together from Debian's packages (skips without it)"
)

missing=()
packages=()
for entry in "${tools[@]}"; do
  IFS='|' read -r cmd pkg why <<<"$entry"
  found=0
  command -v "$cmd" >/dev/null 2>&1 && found=1
  [ "$cmd" = chromium ] && { command -v chromium-browser >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; } && found=1
  [ "$cmd" = bash_completion ] && [ -f /usr/share/bash-completion/bash_completion ] && found=1
  if [ "$found" -eq 0 ]; then
    missing+=("$(printf '  %-16s %s' "$cmd" "$why")")
    packages+=("$pkg")
  fi
done

case "${1:-check}" in
check)
  [ ${#missing[@]} -eq 0 ] && exit 0
  {
    echo "================================================================================"
    echo "MISSING TEST TOOLS: the tests that use these skip or fail:"
    printf '%s\n' "${missing[@]}"
    echo "Install them with:  make test-deps    (apt-get install ${packages[*]}; root or sudo)"
    echo "================================================================================"
  } >&2
  ;;
install)
  [ ${#packages[@]} -eq 0 ] && { echo "test tools: all present"; exit 0; }
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  echo "apt-get install ${packages[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  ;;
*)
  echo "usage: $0 check|install" >&2
  exit 2
  ;;
esac
