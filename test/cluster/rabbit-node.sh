#!/usr/bin/env bash
# Starts, stops and inspects a private RabbitMQ node for the fault and cluster tests, next to the
# machine's own broker (rabbit@localhost on 5672), which this script never touches:
# - its own node name, AMQP port, distribution port, data, logs, config and plugins file, all under
#   $BOOMERANG_RABBIT_BASE/<name> (default /tmp/boomerang-rabbit/<name>);
# - its own Erlang cookie (HOME points into that directory), so no rabbitmqctl call made here can
#   ever reach rabbit@localhost, even with a wrong node name;
# - it binds 127.0.0.1 only and never 5672 (the system rabbitmq.conf and rabbitmq-env.conf are not read).
#
# Usage: rabbit-node.sh start <name> <amqp-port>    start (idempotent: a running node is left alone)
#        rabbit-node.sh stop <name>                 stop the VM and wait until its port is free
#        rabbit-node.sh wipe <name>                 delete its data (the node must be stopped)
#        rabbit-node.sh ctl <name> <args...>        rabbitmqctl against it
#        rabbit-node.sh queues <name> <args...>     rabbitmq-queues against it
#        rabbit-node.sh running <name>              exit 0 when it answers
#        rabbit-node.sh tls <name> <dir>            install new TLS files in a running node (rotation)
#        rabbit-node.sh list                        "<name> <amqp-port>" for every node of this flavour
#                                                   that has a folder (running or not)
# <name> is the short name: "boomerang-f1" gives the node boomerang-f1@localhost.
#
# RABBIT_FLAVOUR=4 runs the node from the RabbitMQ 4.3 of Debian sid, RABBIT_FLAVOUR=4.0 from the
# RabbitMQ 4.0 of Debian trixie, each in the chroot that test/brokers/rabbitmq4-rootfs.sh builds and
# caches for its suite (the machine's own rabbitmq-server is 3.10): the node's files then live inside
# that chroot, under /var/lib/boomerang-nodes/<name>.
#
# RABBIT_TLS_PORT=<port> RABBIT_TLS_DIR=<dir> at start adds a TLS listener on 127.0.0.1:<port>
# serving <dir>/server.pem and <dir>/server-key.pem under <dir>/ca.pem (copied into the node's folder,
# so a flavour-4 or 4.0 node inside its chroot reads them too). Clients are not asked for certificates.
#
# RABBIT_MANAGEMENT_PORT=<port> at start enables the management plugin (shipped with every flavour's
# rabbitmq-server: nothing is downloaded) and its HTTP API on 127.0.0.1:<port>.
set -euo pipefail

FLAVOUR="${RABBIT_FLAVOUR:-system}"
# Fixed before node_env points HOME at a node's folder.
export BOOMERANG_CACHE="${BOOMERANG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/boomerang}"
ROOTFS_SCRIPT="$(cd "$(dirname "$0")/../brokers" && pwd)/rabbitmq4-rootfs.sh"
case "$FLAVOUR" in
  system)
    BASE_ROOT="${BOOMERANG_RABBIT_BASE:-/tmp/boomerang-rabbit}"
    # Where the node sees its own files: the same paths, outside any chroot.
    BASE_SEEN="$BASE_ROOT"
    RABBIT_BIN="${RABBIT_BIN:-/usr/lib/rabbitmq/bin}"
    ;;
  4|4.0)
    # The chroot's suite; exported, so every call of the rootfs script below means the same chroot.
    if [[ "$FLAVOUR" == 4.0 ]]; then export RABBITMQ4_SUITE=trixie; else export RABBITMQ4_SUITE=sid; fi
    ROOTFS="$(bash "$ROOTFS_SCRIPT" path)"
    BASE_SEEN=/var/lib/boomerang-nodes
    BASE_ROOT="$ROOTFS$BASE_SEEN"
    RABBIT_BIN=/usr/lib/rabbitmq/bin
    ;;
  *) echo "rabbit-node: RABBIT_FLAVOUR must be system, 4 (RabbitMQ 4.3) or 4.0; got $FLAVOUR" >&2; exit 2 ;;
esac
# Shared by all private nodes so they can cluster; never the cookie of rabbit@localhost.
COOKIE="BOOMERANGPRIVATENODESCOOKIE"
BOOT_TIMEOUT_S="${BOOT_TIMEOUT_S:-120}"

die() { echo "rabbit-node: $*" >&2; exit 1; }
usage() { sed -n '2,31p' "$0"; }

node_env() {
  local name="$1" dir="$BASE_SEEN/$1"
  export HOME="$dir/home"
  export RABBITMQ_NODENAME="$name@localhost"
  export RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf"
  export RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins"
  export RABBITMQ_MNESIA_BASE="$dir/mnesia"
  export RABBITMQ_LOG_BASE="$dir/log"
  export RABBITMQ_PID_FILE="$dir/node.pid"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config"
  export ERL_EPMD_ADDRESS=127.0.0.1
  # A VM or CLI that fails to boot writes its crash dump here, never into the caller's directory.
  export ERL_CRASH_DUMP="$dir/log/erl_crash.dump"
  unset RABBITMQ_NODE_PORT RABBITMQ_DIST_PORT
}

# Runs one of RabbitMQ's programs with the node's environment (inside the chroot for flavours 4 and 4.0).
run_bin() {
  local bin="$1"; shift
  if [[ "$FLAVOUR" != system ]]; then
    bash "$ROOTFS_SCRIPT" ready
    # stdin passes through: import_definitions reads its JSON from it.
    chroot "$ROOTFS" "$RABBIT_BIN/$bin" "$@"
  else
    "$RABBIT_BIN/$bin" "$@"
  fi
}

ctl() {
  local name="$1"; shift
  [[ -d "$BASE_ROOT/$name/home" ]] || die "no node $name under $BASE_ROOT (start it first)"
  ( node_env "$name"; run_bin rabbitmqctl -n "$name@localhost" "$@" )
}

queues() {
  local name="$1"; shift
  [[ -d "$BASE_ROOT/$name/home" ]] || die "no node $name under $BASE_ROOT (start it first)"
  ( node_env "$name"; run_bin rabbitmq-queues -n "$name@localhost" "$@" )
}

registered() {
  ERL_EPMD_ADDRESS=127.0.0.1 epmd -names 2>/dev/null | grep -q "^name $1 at port "
}

running() {
  # epmd first: asking a node that is not there makes rabbitmqctl wait for seconds. A CLI call took
  # up to 17 s on the busy 2-core machine, so the node gets a generous time to answer.
  registered "$1" && ctl "$1" -q --timeout 30 await_startup >/dev/null 2>&1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

list() {
  local conf name port
  for conf in "$BASE_ROOT"/*/rabbitmq-env.conf; do
    [[ -f "$conf" ]] || continue
    name="$(basename "$(dirname "$conf")")"
    port="$(sed -n 's/^NODE_PORT=//p' "$conf")"
    echo "$name $port"
  done
}

# Why a node did not come up: where its logs are, and their last lines.
boot_failure() {
  local name="$1" why="$2" dir="$BASE_ROOT/$1/log"
  {
    echo "rabbit-node: $name@localhost $why."
    echo "  its output: $dir/stdout.log"
    echo "  its log:    $dir/$name@localhost.log"
    echo "  last lines of its output:"
    tail -n 15 "$dir/stdout.log" 2>/dev/null | sed 's/^/    /'
  } >&2
  exit 1
}

prepare() {
  local name="$1" port="$2" dir="$BASE_ROOT/$1"
  mkdir -p "$dir/home" "$dir/log" "$dir/mnesia"
  if [[ ! -f "$dir/home/.erlang.cookie" ]]; then
    printf '%s' "$COOKIE" >"$dir/home/.erlang.cookie"
    chmod 400 "$dir/home/.erlang.cookie"
  fi
  # Settings the rabbitmq-env.conf of the system would otherwise provide (it names rabbit@localhost).
  cat >"$dir/rabbitmq-env.conf" <<EOF
NODENAME=$name@localhost
NODE_PORT=$port
DIST_PORT=$((port + 20000))
SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
EOF
  cat >"$dir/rabbitmq.conf" <<EOF
listeners.tcp.local = 127.0.0.1:$port
# A test broker: log to its own file only, keep the disk alarm out of the way of a busy /tmp.
log.console = false
log.file.level = info
disk_free_limit.absolute = 50MB
EOF
  if [[ -n "${RABBIT_MANAGEMENT_PORT:-}" ]]; then
    # The HTTP API, for the console's count of a native queue's delayed messages (AMQP and the AMQP 1.0 management count only the ready ones).
    printf '[rabbitmq_management].\n' >"$dir/enabled_plugins"
    cat >>"$dir/rabbitmq.conf" <<EOF
management.tcp.ip = 127.0.0.1
management.tcp.port = $RABBIT_MANAGEMENT_PORT
EOF
  else
    printf '[].\n' >"$dir/enabled_plugins"
  fi
  printf '[].\n' >"$dir/advanced.config"
  if [[ -n "${RABBIT_TLS_PORT:-}" ]]; then
    install_tls "$name" "${RABBIT_TLS_DIR:?RABBIT_TLS_DIR is required with RABBIT_TLS_PORT}"
    local seen="$BASE_SEEN/$name/tls"
    cat >>"$dir/rabbitmq.conf" <<EOF
listeners.ssl.local = 127.0.0.1:$RABBIT_TLS_PORT
ssl_options.cacertfile = $seen/ca.pem
ssl_options.certfile = $seen/server.pem
ssl_options.keyfile = $seen/server-key.pem
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
EOF
  fi
}

install_tls() {
  local dir="$BASE_ROOT/$1/tls" from="$2"
  mkdir -p "$dir"
  for f in ca.pem server.pem server-key.pem; do
    [[ -f "$from/$f" ]] || die "no $f in $from"
    cp "$from/$f" "$dir/$f.new" && mv "$dir/$f.new" "$dir/$f"
  done
}

# New certificate files for a running node: Erlang caches PEM files, so clear that cache (the
# rotation RabbitMQ's TLS guide describes); new connections then get the new certificate.
rotate_tls() {
  install_tls "$1" "$2"
  ctl "$1" -q eval 'ssl:clear_pem_cache().' >/dev/null
}

start() {
  local name="$1" port="$2"
  [[ "$port" != 5672 ]] || die "refusing to use port 5672: it belongs to rabbit@localhost"
  [[ "$name" != rabbit ]] || die "refusing to touch rabbit@localhost"
  if running "$name"; then
    echo "$name@localhost already running on 127.0.0.1:$port"
    # Its plugins and listeners are those of its last start.
    if [[ -n "${RABBIT_MANAGEMENT_PORT:-}" ]] && ! port_open "$RABBIT_MANAGEMENT_PORT"; then
      echo "rabbit-node: $name@localhost was started without the management API on 127.0.0.1:$RABBIT_MANAGEMENT_PORT; stop and start it to have it" >&2
    fi
    return 0
  fi
  local started=$SECONDS server=""
  if registered "$name"; then
    # Its VM is there but did not answer: still booting, or slow on a busy machine. Never start a
    # second one (its port is taken); wait for this one below.
    echo "$name@localhost is registered with epmd but not answering yet; waiting for it" >&2
  else
    port_open "$port" && die "port $port is taken by something else"
    [[ -z "${RABBIT_TLS_PORT:-}" ]] || ! port_open "$RABBIT_TLS_PORT" || die "port $RABBIT_TLS_PORT is taken by something else"
    [[ -z "${RABBIT_MANAGEMENT_PORT:-}" ]] || ! port_open "$RABBIT_MANAGEMENT_PORT" || die "port $RABBIT_MANAGEMENT_PORT is taken by something else"
    [[ "$FLAVOUR" == system ]] || bash "$ROOTFS_SCRIPT" ready
    prepare "$name" "$port"
    # The server process (chroot execs it): when it exits before the node answers, the boot failed.
    server="$(
      node_env "$name"
      export RABBITMQ_NODE_PORT="$port" RABBITMQ_DIST_PORT=$((port + 20000))
      cd "$BASE_ROOT/$name"
      if [[ "$FLAVOUR" != system ]]; then
        setsid chroot "$ROOTFS" "$RABBIT_BIN/rabbitmq-server" >"$BASE_ROOT/$name/log/stdout.log" 2>&1 </dev/null &
      else
        setsid "$RABBIT_BIN/rabbitmq-server" >"$BASE_ROOT/$name/log/stdout.log" 2>&1 </dev/null &
      fi
      echo $!
    )"
  fi
  # A deadline, not a count of tries: one try may take many seconds on a busy machine.
  while ((SECONDS - started < BOOT_TIMEOUT_S)); do
    if running "$name" && port_open "$port" && { [[ -z "${RABBIT_MANAGEMENT_PORT:-}" ]] || port_open "$RABBIT_MANAGEMENT_PORT"; }; then
      echo "$name@localhost up on 127.0.0.1:$port in $((SECONDS - started)) s"
      return 0
    fi
    [[ -z "$server" ]] || kill -0 "$server" 2>/dev/null || boot_failure "$name" "stopped while booting"
    sleep 1
  done
  boot_failure "$name" "did not answer within $BOOT_TIMEOUT_S s (BOOT_TIMEOUT_S)"
}

stop() {
  local name="$1" dir="$BASE_ROOT/$1"
  [[ "$name" != rabbit ]] || die "refusing to touch rabbit@localhost"
  local pid=""
  [[ -f "$dir/node.pid" ]] && pid="$(cat "$dir/node.pid" 2>/dev/null || true)"
  if registered "$name"; then
    ctl "$name" -q stop >/dev/null 2>&1 || true
  fi
  # The VM is gone only when its OS process is; wait for it, then make sure (by pid, never by name).
  if [[ -n "$pid" ]]; then
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$dir/node.pid"
  echo "$name@localhost stopped"
}

wipe() {
  local name="$1"
  running "$name" && die "$name is running; stop it first"
  [[ -n "$BASE_ROOT" && -d "$BASE_ROOT/$name" ]] && rm -rf "${BASE_ROOT:?}/$name"
  rmdir "$BASE_ROOT" 2>/dev/null || true
  echo "$name data removed"
}

cmd="${1:-}"; shift || true
case "$cmd" in
  start) [[ $# -eq 2 ]] || die "usage: start <name> <amqp-port>"; start "$1" "$2" ;;
  stop) [[ $# -eq 1 ]] || die "usage: stop <name>"; stop "$1" ;;
  wipe) [[ $# -eq 1 ]] || die "usage: wipe <name>"; wipe "$1" ;;
  ctl) name="$1"; shift; ctl "$name" "$@" ;;
  queues) name="$1"; shift; queues "$name" "$@" ;;
  running) [[ $# -eq 1 ]] || die "usage: running <name>"; running "$1" ;;
  tls) [[ $# -eq 2 ]] || die "usage: tls <name> <dir>"; rotate_tls "$1" "$2" ;;
  registered) registered "$1" ;;
  list) list ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
