#!/usr/bin/env bash
# The RabbitMQ 4.x that the project runs beside the machine's own 3.10: a Debian suite's rabbitmq-server
# in a debootstrap chroot (minbase, about 1 minute and 400 MB), built once and cached for later runs on
# this machine under $BOOMERANG_CACHE (default ~/.cache/boomerang), one folder per suite:
#   RABBITMQ4_SUITE=sid     (the default) RabbitMQ 4.3, in rabbitmq4-sid
#   RABBITMQ4_SUITE=trixie  RabbitMQ 4.0, in rabbitmq4-trixie
# Nothing here starts a node: see rabbit-node.sh (RABBIT_FLAVOUR=4 or 4.0) and rabbitmq4.sh.
#
# Usage: rabbitmq4-rootfs.sh path     print the chroot's folder
#        rabbitmq4-rootfs.sh build    build it when missing (idempotent)
#        rabbitmq4-rootfs.sh ready    build it when missing, and make it runnable (hosts, /proc)
#        rabbitmq4-rootfs.sh version  the rabbitmq-server version inside
#        rabbitmq4-rootfs.sh remove   unmount and delete it (refused while a node runs from it)
# Building, mounting and removing need root. Concurrent calls (three cluster nodes starting at once)
# take turns on a lock, so /proc is mounted once and a build is never run twice.
set -euo pipefail

CACHE="${BOOMERANG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boomerang}"
SUITE="${RABBITMQ4_SUITE:-sid}"
case "$SUITE" in
  sid|trixie) ;;
  *) echo "rabbitmq4-rootfs: RABBITMQ4_SUITE must be sid (RabbitMQ 4.3) or trixie (4.0); got $SUITE" >&2; exit 2 ;;
esac
ROOTFS="$CACHE/rabbitmq4-$SUITE"
MARKER="$ROOTFS/usr/lib/rabbitmq/bin/rabbitmq-server"

die() { echo "rabbitmq4-rootfs: $*" >&2; exit 1; }
usage() { sed -n '2,15p' "$0"; }

# Holds an exclusive lock on the cache until this script exits.
locked() {
  mkdir -p "$CACHE"
  exec 9>"$CACHE/rabbitmq4-$SUITE.lock"
  flock 9
}

need_root() { [[ "$(id -u)" == 0 ]] || die "$1 needs root (debootstrap, chroot and mount do); run it as root"; }

build() {
  [[ -x "$MARKER" ]] && return 0
  need_root "building the chroot"
  if ! command -v debootstrap >/dev/null 2>&1; then
    echo "rabbitmq4-rootfs: installing debootstrap with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  mkdir -p "$CACHE"
  # Build beside the final folder and move it in only when complete: an interrupted build is
  # started again rather than half-used.
  local tmp="$ROOTFS.partial"
  rm -rf "$tmp"
  echo "rabbitmq4-rootfs: building Debian $SUITE with rabbitmq-server in $ROOTFS (about 1 minute)" >&2
  # Debian's default mirror: no host is named here.
  local log="$CACHE/debootstrap-$SUITE.log"
  debootstrap --variant=minbase --include=rabbitmq-server "$SUITE" "$tmp" >"$log" 2>&1 \
    || die "debootstrap failed; see $log"
  mv "$tmp" "$ROOTFS"
  echo "rabbitmq4-rootfs: built ($(version))" >&2
}

ready() {
  [[ -x "$MARKER" && -f "$ROOTFS/etc/hosts" ]] && mountpoint -q "$ROOTFS/proc" && cmp -s /etc/hosts "$ROOTFS/etc/hosts" && return 0
  need_root "making the chroot runnable"
  build
  # Without the host's hosts file the node dies with epmd_error ... nxdomain for localhost.
  cmp -s /etc/hosts "$ROOTFS/etc/hosts" || cp /etc/hosts "$ROOTFS/etc/hosts"
  if ! mountpoint -q "$ROOTFS/proc"; then
    mount -t proc proc "$ROOTFS/proc" || die "cannot mount /proc in $ROOTFS"
  fi
}

version() {
  chroot "$ROOTFS" dpkg-query -W -f '${Version}\n' rabbitmq-server
}

remove() {
  need_root "removing the chroot"
  if mountpoint -q "$ROOTFS/proc"; then
    # Busy while a node runs from the chroot: stop it first (npm run rabbitmq4 -- stop).
    umount "$ROOTFS/proc" || die "cannot unmount $ROOTFS/proc: is a node still running from it? (npm run rabbitmq4 -- status)"
  fi
  # Never follow a mount point out of the chroot (the host's /proc, should the unmount have raced).
  rm -rf --one-file-system "$ROOTFS" "$ROOTFS.partial"
  echo "rabbitmq4-rootfs: removed $ROOTFS" >&2
}

case "${1:-}" in
  path) echo "$ROOTFS" ;;
  build) locked; build ;;
  ready) locked; ready ;;
  version) version ;;
  remove) locked; remove ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
