#!/usr/bin/env bash
# Installs or removes gpuletd as a systemd service.
#
#   systemd/install.sh install   [DESTDIR] [PREFIX]   (make install)
#   systemd/install.sh uninstall [DESTDIR] [PREFIX]   (make uninstall)
#
# It runs from a checkout (bin/gpuletd, .deps/onnxruntime/) or from an
# unpacked release archive (make dist: bin/gpuletd, lib/gpuletd/).
#
# install: the binary to PREFIX/bin, ONNX Runtime's library to
# PREFIX/lib/gpuletd (where the binary looks for it), the units (the service,
# and the daily backup's service and timer, not enabled) to
# /etc/systemd/system, the default configuration to /etc/gpuletd (an
# existing one is kept; the new default goes beside it as gpuletd.yaml.new),
# the shell completions of bash, zsh and fish to PREFIX/share (written by the
# installed binary; skipped with a note where it cannot run, as in a cross
# build), the Prometheus alerting rules and the Grafana dashboard to
# PREFIX/share/gpuletd, and the gpuletd system user and group with /var/lib/gpuletd and
# /var/backups/gpuletd. With DESTDIR (packaging) no user or folder is created
# and systemd is not reloaded.
# uninstall: removes all of that except the user, /var/lib/gpuletd (the
# store and the models) and /var/backups/gpuletd, which stay.
set -euo pipefail
cd "$(dirname "$0")/.."

action=${1:-}
destdir=${2:-}
prefix=${3:-/usr/local}
unitdir="$destdir/etc/systemd/system"
confdir="$destdir/etc/gpuletd"
bindir="$destdir$prefix/bin"
libdir="$destdir$prefix/lib/gpuletd"
sharedir="$destdir$prefix/share"
# Where each shell looks for completions under PREFIX/share.
completions="bash:bash-completion/completions/gpuletd zsh:zsh/site-functions/_gpuletd fish:fish/vendor_completions.d/gpuletd.fish"

need_root() {
  if [ -z "$destdir" ] && [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: $action needs root (or set DESTDIR for a staged install)" >&2
    exit 1
  fi
}

case "$action" in
install)
  need_root
  bin=${GPULETD_BIN:-bin/gpuletd}
  lib=${GPULETD_ONNXRUNTIME_LIBRARY:-}
  if [ -z "$lib" ]; then
    lib=.deps/onnxruntime/libonnxruntime.so.1
    # An unpacked release archive keeps the library where the binary looks.
    if [ ! -f "$lib" ] && [ -f lib/gpuletd/libonnxruntime.so.1 ]; then lib=lib/gpuletd/libonnxruntime.so.1; fi
  fi
  [ -x "$bin" ] || { echo "install.sh: $bin is missing: run make build (or unpack the release archive whole)" >&2; exit 1; }
  [ -f "$lib" ] || { echo "install.sh: ONNX Runtime ($lib) is missing: run make deps (or unpack the release archive whole)" >&2; exit 1; }
  install -d "$bindir" "$libdir" "$unitdir" "$confdir"
  install -m 0755 "$bin" "$bindir/gpuletd"
  install -m 0644 "$lib" "$libdir/libonnxruntime.so.1"
  # The GPU providers and the licences, when make deps-gpu fetched them.
  libsrc=$(dirname "$lib")
  for f in libonnxruntime_providers_cuda.so libonnxruntime_providers_tensorrt.so libonnxruntime_providers_shared.so; do
    if [ -f "$libsrc/$f" ]; then install -m 0644 "$libsrc/$f" "$libdir/$f"; fi
  done
  for f in "$libsrc"/licenses/*; do
    if [ -f "$f" ]; then install -D -m 0644 "$f" "$libdir/licenses/$(basename "$f")"; fi
  done
  for u in gpuletd.service gpuletd-backup.service gpuletd-backup.timer; do
    sed "s#/usr/local/bin/gpuletd#$prefix/bin/gpuletd#" "systemd/$u" >"$unitdir/$u"
    chmod 0644 "$unitdir/$u"
  done
  for c in $completions; do
    shell=${c%%:*} file="$sharedir/${c#*:}"
    install -d "$(dirname "$file")"
    if ! "$bindir/gpuletd" completion "$shell" >"$file" 2>/dev/null || [ ! -s "$file" ]; then
      rm -f "$file"
      echo "install.sh: $prefix/bin/gpuletd did not run here: no $shell completion written (where it runs: $prefix/bin/gpuletd completion $shell >$prefix/share/${c#*:})"
    fi
  done
  # For the operator's Prometheus and Grafana to take.
  install -D -m 0644 alerts/gpuletd.rules.yml "$sharedir/gpuletd/gpuletd.rules.yml"
  install -D -m 0644 dashboards/gpuletd.json "$sharedir/gpuletd/grafana-dashboard.json"
  if [ -e "$confdir/gpuletd.yaml" ]; then
    install -m 0644 systemd/gpuletd.yaml "$confdir/gpuletd.yaml.new"
    echo "install.sh: kept $confdir/gpuletd.yaml; the new default is $confdir/gpuletd.yaml.new"
  else
    install -m 0644 systemd/gpuletd.yaml "$confdir/gpuletd.yaml"
  fi
  if [ -z "$destdir" ]; then
    if ! getent group gpuletd >/dev/null; then groupadd --system gpuletd; fi
    if ! getent passwd gpuletd >/dev/null; then
      useradd --system --gid gpuletd --home-dir /var/lib/gpuletd --no-create-home \
        --shell /usr/sbin/nologin --comment "gpuletd model server" gpuletd
    fi
    if getent group video >/dev/null; then usermod -a -G video gpuletd; fi
    install -d -o gpuletd -g gpuletd -m 0750 /var/lib/gpuletd /var/lib/gpuletd/models /var/backups/gpuletd
    # What a run as root left there (gpuletd serve tried before the
    # service, with the default state_dir) becomes the service's: a
    # database it may not write would leave it serving read-only.
    chown -R gpuletd:gpuletd /var/lib/gpuletd
    if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
  fi
  echo "install.sh: installed. Put models in /var/lib/gpuletd/models, then: systemctl enable --now gpuletd"
  echo "install.sh: before it, $prefix/bin/gpuletd doctor --config /etc/gpuletd/gpuletd.yaml checks the GPUs, libraries, folders and models it will use"
  echo "install.sh: daily backups of the database into /var/backups/gpuletd: systemctl enable --now gpuletd-backup.timer"
  ;;
uninstall)
  need_root
  if [ -z "$destdir" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    systemctl disable --now gpuletd gpuletd-backup.timer 2>/dev/null || true
  fi
  rm -f "$bindir/gpuletd" "$libdir/libonnxruntime.so.1" "$unitdir/gpuletd.service" \
    "$unitdir/gpuletd-backup.service" "$unitdir/gpuletd-backup.timer" \
    "$libdir"/libonnxruntime_providers_*.so \
    "$confdir/gpuletd.yaml.new"
  rm -rf "$libdir/licenses"
  rmdir "$libdir" 2>/dev/null || true
  for c in $completions; do rm -f "$sharedir/${c#*:}"; done
  rm -f "$sharedir/gpuletd/gpuletd.rules.yml" "$sharedir/gpuletd/grafana-dashboard.json"
  rmdir "$sharedir/gpuletd" 2>/dev/null || true
  if [ -z "$destdir" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
  echo "install.sh: removed. Kept: /etc/gpuletd/gpuletd.yaml, /var/lib/gpuletd (store and models), /var/backups/gpuletd, the gpuletd user."
  ;;
*)
  echo "usage: systemd/install.sh install|uninstall [DESTDIR] [PREFIX]" >&2
  exit 2
  ;;
esac
