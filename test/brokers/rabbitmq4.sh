#!/usr/bin/env bash
# One RabbitMQ 4.x node (Debian sid's, from the cached chroot of rabbitmq4-rootfs.sh) beside the
# machine's own 3.10 broker, which it never touches: node boomerang-r43@localhost, AMQP on
# 127.0.0.1:5674, distribution on 25674, its own data, logs and Erlang cookie.
#
#   npm run rabbitmq4 -- start          build the chroot when missing, start the node (idempotent)
#   npm run rabbitmq4 -- stop           stop the node (its data stays)
#   npm run rabbitmq4 -- status         running or stopped (exit 3), with its version
#   npm run --silent rabbitmq4 -- url   the node's AMQP URL, as the last line
#   npm run rabbitmq4 -- ctl <args...>  rabbitmqctl against the node
#   npm run rabbitmq4 -- wipe           stop it and delete its data
#   npm run rabbitmq4 -- cluster start|stop|status|urls
#                                       the 3-node 4.x cluster (test/cluster/cluster.sh)
# Needs root (chroot, mount). The chroot is cached under $BOOMERANG_CACHE (default ~/.cache/boomerang).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
NODE_SCRIPT="$HERE/../cluster/rabbit-node.sh"
NAME="${RABBITMQ4_NODE:-boomerang-r43}"
PORT="${RABBITMQ4_PORT:-5674}"
export RABBIT_FLAVOUR=4

node() { bash "$NODE_SCRIPT" "$@"; }
usage() { sed -n '2,14p' "$0"; }

case "${1:-}" in
  start)
    bash "$HERE/rabbitmq4-rootfs.sh" ready
    node start "$NAME" "$PORT"
    ;;
  stop) node stop "$NAME" ;;
  wipe) node stop "$NAME" >/dev/null; node wipe "$NAME" ;;
  status)
    if node running "$NAME"; then
      echo "$NAME@localhost on 127.0.0.1:$PORT: running, RabbitMQ $(bash "$HERE/rabbitmq4-rootfs.sh" version)"
    else
      echo "$NAME@localhost on 127.0.0.1:$PORT: stopped"
      exit 3
    fi
    ;;
  url) echo "amqp://guest:guest@127.0.0.1:$PORT" ;;
  ctl) shift; node ctl "$NAME" "$@" ;;
  cluster) shift; exec bash "$HERE/../cluster/cluster.sh" "$@" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
