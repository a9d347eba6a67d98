#!/usr/bin/env bash
# A 3-node RabbitMQ cluster on this machine, for the cluster test and for trying Boomerang against a
# clustered broker. It runs beside the machine's own broker (rabbit@localhost on 5672) and never
# touches it: see rabbit-node.sh for how each node is kept apart.
#
#   npm run cluster -- start    start the 3 nodes and join them (idempotent; ~10-15 s from cold)
#   npm run cluster -- stop     stop the 3 nodes and delete their data (no beam process or port left)
#   npm run cluster -- status   nodes, ports, and the cluster's view of itself
#   npm run cluster -- urls     the AMQP_URL value for Boomerang (all three endpoints)
#
# Nodes: boomerang-c1@localhost, -c2, -c3 on AMQP ports 5691, 5692, 5693 (distribution 25691-25693),
# data under $BOOMERANG_RABBIT_BASE (default /tmp/boomerang-rabbit). Guest/guest works from 127.0.0.1.
#
# RABBIT_FLAVOUR=4 (or `npm run rabbitmq4 -- cluster ...`) runs RabbitMQ 4.x nodes from the chroot of
# test/brokers/rabbitmq4-rootfs.sh instead: boomerang-r4-c1, -c2, -c3 on 5791, 5792, 5793, so both
# clusters can run side by side.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
NODE="$HERE/rabbit-node.sh"
case "${RABBIT_FLAVOUR:-system}" in
  4)
    NAMES=(boomerang-r4-c1 boomerang-r4-c2 boomerang-r4-c3)
    PORTS=(5791 5792 5793)
    ;;
  system)
    NAMES=(boomerang-c1 boomerang-c2 boomerang-c3)
    PORTS=(5691 5692 5693)
    ;;
  *) echo "cluster: RABBIT_FLAVOUR must be system or 4 (RabbitMQ 4.3); there is no $RABBIT_FLAVOUR cluster" >&2; exit 2 ;;
esac
SEED="${NAMES[0]}"
LOG_BASE="${BOOMERANG_RABBIT_BASE:-/tmp/boomerang-rabbit}"
JOIN_LOG="$LOG_BASE/join-$SEED.log"

urls() {
  local out=() port
  for port in "${PORTS[@]}"; do out+=("amqp://guest:guest@127.0.0.1:$port"); done
  (IFS=,; echo "${out[*]}")
}

members_running() {
  # The seed's view: how many nodes are running in its cluster.
  bash "$NODE" ctl "$SEED" -q cluster_status --formatter json 2>/dev/null \
    | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).running_nodes.length)}catch{console.log(0)}})'
}

start() {
  local started=$SECONDS i
  for i in "${!NAMES[@]}"; do
    bash "$NODE" start "${NAMES[$i]}" "${PORTS[$i]}" &
  done
  wait
  for i in 1 2; do
    local name="${NAMES[$i]}"
    if bash "$NODE" ctl "$name" -q cluster_status --formatter json 2>/dev/null | grep -q "\"$SEED@localhost\""; then
      continue
    fi
    bash "$NODE" ctl "$name" -q stop_app
    bash "$NODE" ctl "$name" -q reset
    # The CLI prints feature-flag warnings while a node joins; they are expected on a fresh node.
    mkdir -p "$LOG_BASE"
    bash "$NODE" ctl "$name" -q join_cluster "$SEED@localhost" 2>>"$JOIN_LOG"
    bash "$NODE" ctl "$name" -q start_app
    echo "$name@localhost joined $SEED@localhost"
  done
  local running
  running="$(members_running)"
  [[ "$running" == 3 ]] || { echo "cluster: expected 3 running nodes, the seed sees $running" >&2; exit 1; }
  echo "cluster: 3 nodes running (${SECONDS}s since start of this command, $((SECONDS - started)) s)"
  echo "AMQP_URL=$(urls)"
}

stop() {
  local name
  for name in "${NAMES[@]}"; do bash "$NODE" stop "$name" & done
  wait
  for name in "${NAMES[@]}"; do bash "$NODE" wipe "$name" >/dev/null; done
  rm -f "$JOIN_LOG"
  rmdir "$LOG_BASE" 2>/dev/null || true
  local port
  for port in "${PORTS[@]}"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "cluster: port $port still open" >&2; exit 1; fi
  done
  echo "cluster: stopped, data removed"
}

status() {
  local i
  for i in "${!NAMES[@]}"; do
    if bash "$NODE" running "${NAMES[$i]}"; then
      echo "${NAMES[$i]}@localhost  127.0.0.1:${PORTS[$i]}  running"
    else
      echo "${NAMES[$i]}@localhost  127.0.0.1:${PORTS[$i]}  stopped"
    fi
  done
  if bash "$NODE" running "$SEED"; then
    bash "$NODE" ctl "$SEED" -q cluster_status | sed -n '1,20p'
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  urls) urls ;;
  -h|--help|help) sed -n '2,16p' "$0" ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
