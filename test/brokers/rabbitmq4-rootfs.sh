#!/usr/bin/env bash
# The RabbitMQ 4.x that the project runs beside the machine's own 3.10: Debian sid's rabbitmq-server in
# a debootstrap chroot (minbase, about 1 minute and 400 MB), built once and cached for later runs on
# this machine under $BOOMERANG_CACHE (default ~/.cache/boomerang). Nothing here starts a node: see
# rabbit-node.sh (RABBIT_FLAVOUR=4) and rabbitmq4.sh.
#
# Usage: rabbitmq4-rootfs.sh path     print the chroot's folder
#        rabbitmq4-rootfs.sh build    build it when missing (idempotent)
#        rabbitmq4-rootfs.sh ready    build it when missing, and make it runnable (hosts, /proc)
#        rabbitmq4-rootfs.sh version  the rabbitmq-server version inside
#        rabbitmq4-rootfs.sh remove   unmount and delete it
set -euo pipefail

CACHE="${BOOMERANG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boomerang}"
ROOTFS="$CACHE/rabbitmq4-sid"
MARKER="$ROOTFS/usr/lib/rabbitmq/bin/rabbitmq-server"

die() { echo "rabbitmq4-rootfs: $*" >&2; exit 1; }

build() {
  [[ -x "$MARKER" ]] && return 0
  [[ "$(id -u)" == 0 ]] || die "building the chroot needs root (debootstrap and chroot)"
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
  echo "rabbitmq4-rootfs: building Debian sid with rabbitmq-server in $ROOTFS (about 1 minute)" >&2
  # Debian's default mirror: no host is named here.
  debootstrap --variant=minbase --include=rabbitmq-server sid "$tmp" >"$CACHE/debootstrap.log" 2>&1 \
    || die "debootstrap failed; see $CACHE/debootstrap.log"
  mv "$tmp" "$ROOTFS"
  echo "rabbitmq4-rootfs: built ($(version))" >&2
}

ready() {
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
  mountpoint -q "$ROOTFS/proc" && umount "$ROOTFS/proc"
  rm -rf "$ROOTFS" "$ROOTFS.partial"
}

case "${1:-}" in
  path) echo "$ROOTFS" ;;
  build) build ;;
  ready) ready ;;
  version) version ;;
  remove) remove ;;
  *) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac
