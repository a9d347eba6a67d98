#!/usr/bin/env bash
# One RabbitMQ 4.x node (from a cached Debian chroot of rabbitmq4-rootfs.sh) beside the machine's own
# 3.10 broker, which it never touches; each has its own node name, ports, data, logs and Erlang cookie:
#   RABBITMQ4_VERSION=4.3 (the default): Debian sid's 4.3, node boomerang-r43@localhost, AMQP on
#                         127.0.0.1:5674, the management HTTP API on 15674, distribution on 25674
#                         (`npm run rabbitmq4 -- ...`)
#   RABBITMQ4_VERSION=4.0: Debian trixie's 4.0, node boomerang-r40@localhost, AMQP on 127.0.0.1:5675,
#                         distribution on 25675 (`npm run rabbitmq40 -- ...`); no management API unless
#                         RABBITMQ4_MANAGEMENT_PORT names its port (the console asks it about native
#                         queues, which are 4.3's)
#
#   npm run rabbitmq4 -- start          build the chroot when missing, start the node (idempotent)
#   npm run rabbitmq4 -- stop           stop the node (its data stays)
#   npm run rabbitmq4 -- status         running or stopped (exit 3), with its version
#   npm run --silent rabbitmq4 -- url   the node's AMQP URL, as the last line
#   npm run --silent rabbitmq4 -- management-url
#                                       its management HTTP API (RABBITMQ4_MANAGEMENT_PORT, by default
#                                       the AMQP port + 10000, as 5672 and 15672)
#   npm run rabbitmq4 -- ctl <args...>  rabbitmqctl against the node
#   npm run rabbitmq4 -- wipe           stop it and delete its data
#   npm run rabbitmq4 -- cluster start|stop|status|urls
#                                       the 3-node 4.3 cluster (test/cluster/cluster.sh)
# Needs root (chroot, mount). The chroots are cached under $BOOMERANG_CACHE (default ~/.cache/boomerang).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
NODE_SCRIPT="$HERE/../cluster/rabbit-node.sh"
case "${RABBITMQ4_VERSION:-4.3}" in
  4.3) FLAVOUR=4 SUITE=sid DEFAULT_NAME=boomerang-r43 DEFAULT_PORT=5674 MANAGEMENT=yes ;;
  4.0) FLAVOUR=4.0 SUITE=trixie DEFAULT_NAME=boomerang-r40 DEFAULT_PORT=5675 MANAGEMENT="${RABBITMQ4_MANAGEMENT_PORT:+yes}" ;;
  *) echo "rabbitmq4: RABBITMQ4_VERSION must be 4.3 (Debian sid) or 4.0 (Debian trixie); got $RABBITMQ4_VERSION" >&2; exit 2 ;;
esac
NAME="${RABBITMQ4_NODE:-$DEFAULT_NAME}"
PORT="${RABBITMQ4_PORT:-$DEFAULT_PORT}"
MANAGEMENT_PORT="${MANAGEMENT:+${RABBITMQ4_MANAGEMENT_PORT:-$((PORT + 10000))}}"
export RABBIT_FLAVOUR="$FLAVOUR" RABBITMQ4_SUITE="$SUITE"

node() { bash "$NODE_SCRIPT" "$@"; }
usage() { sed -n '2,23p' "$0"; }

case "${1:-}" in
  start)
    bash "$HERE/rabbitmq4-rootfs.sh" ready
    RABBIT_MANAGEMENT_PORT="$MANAGEMENT_PORT" node start "$NAME" "$PORT"
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
  management-url)
    [[ -n "$MANAGEMENT_PORT" ]] || { echo "rabbitmq4: the $NAME node runs without the management API (set RABBITMQ4_MANAGEMENT_PORT)" >&2; exit 2; }
    echo "http://127.0.0.1:$MANAGEMENT_PORT"
    ;;
  ctl) shift; node ctl "$NAME" "$@" ;;
  cluster)
    shift
    [[ "$FLAVOUR" == 4 ]] || { echo "rabbitmq4: the 3-node cluster runs RabbitMQ 4.3 only (RABBITMQ4_VERSION=4.3)" >&2; exit 2; }
    exec bash "$HERE/../cluster/cluster.sh" "$@"
    ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
