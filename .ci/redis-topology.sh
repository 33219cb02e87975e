#!/usr/bin/env bash
# Starts and stops the Redis topologies the cluster, Sentinel and Valkey specs run against, with the
# installed servers, on ports of their own, each server stopped by the pid it wrote:
#   - a cluster of 3 masters + 3 replicas on 7100-7105;
#   - a Sentinel set: master 7110, replica 7111, sentinels 7112-7114, master name `echostore`;
#   - the same again for the failover specs, which crash masters (so they never disturb the others):
#     a cluster on 7130-7135, a Sentinel set on 7140-7144, master name `echostore-failover`;
#   - a Valkey server on 7120, when `valkey-server` is installed.
# Usage: .ci/redis-topology.sh start|stop|status. `start` is idempotent (a topology already up is
# left as it is), starts afresh a cluster whose servers are all gone (a machine restarted under a
# run, say), and waits until the cluster is ok, the sentinels know the master and every replica is in
# sync. `stop` stops a server only while its pid is still that server's.
# Settings (the specs of this script use them to run a topology of their own): ECHOSTORE_TOPOLOGY_DIR,
# ECHOSTORE_TOPOLOGY_SETS ("cluster-port sentinel-port master-name", several separated by commas),
# ECHOSTORE_TOPOLOGY_VALKEY_PORT (empty: no Valkey server).
set -euo pipefail

BASE="${ECHOSTORE_TOPOLOGY_DIR:-${TMPDIR:-/tmp}/echostore-redis-topology}"
VALKEY_PORT="${ECHOSTORE_TOPOLOGY_VALKEY_PORT-7120}"

# The ports of one cluster and one Sentinel set: $1 the cluster's first port, $2 the Sentinel set's, $3 its master name.
use_set() {
  CLUSTER_PORTS=($1 $(($1 + 1)) $(($1 + 2)) $(($1 + 3)) $(($1 + 4)) $(($1 + 5)))
  SENTINEL_DATA_PORTS=($2 $(($2 + 1)))
  SENTINEL_PORTS=($(($2 + 2)) $(($2 + 3)) $(($2 + 4)))
  MASTER_NAME=$3
}
IFS=, read -r -a SETS <<<"${ECHOSTORE_TOPOLOGY_SETS:-7100 7110 echostore,7130 7140 echostore-failover}"

ping() { redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null | grep -q PONG; }

wait_for() { # description, command...
  local what="$1"; shift
  for _ in $(seq 1 300); do "$@" && return 0; sleep 0.1; done
  echo "redis-topology: timed out waiting for $what" >&2
  return 1
}

server() { # binary, port, extra args...
  local bin="$1" port="$2"; shift 2
  local dir="$BASE/$port"
  mkdir -p "$dir"
  if ping "$port"; then return 0; fi
  # A replica syncs as soon as it connects (the default waits 5 s for more replicas to share the transfer).
  "$bin" --port "$port" --bind 127.0.0.1 --daemonize yes --save "" --appendonly no --repl-diskless-sync-delay 0 \
    --dir "$dir" --pidfile "$dir/pid" --logfile "$dir/log" "$@" 9>&-
}

cluster_ok() { redis-cli -h 127.0.0.1 -p "${CLUSTER_PORTS[0]}" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; }
cluster_full() { [ "$(redis-cli -h 127.0.0.1 -p "${CLUSTER_PORTS[0]}" cluster nodes 2>/dev/null | grep -c connected)" = 6 ]; }
replicas_synced() { # ports
  for port in "$@"; do
    local info; info="$(redis-cli -h 127.0.0.1 -p "$port" info replication 2>/dev/null)"
    if grep -q 'role:slave' <<<"$info" && ! grep -q 'master_link_status:up' <<<"$info"; then return 1; fi
  done
}

# True when no server answers on any of the ports.
none_answer() {
  for port in "$@"; do ping "$port" && return 1; done
  return 0
}

start_cluster() {
  # A cluster whose servers are all gone left their files behind (nodes.conf, and the dump.rdb a
  # replica's full sync wrote): servers started on them would know each other, or hold keys, and
  # `--cluster create` refuses nodes that are not empty. Such a cluster starts from empty folders.
  if none_answer "${CLUSTER_PORTS[@]}"; then
    for port in "${CLUSTER_PORTS[@]}"; do rm -rf "${BASE:?}/$port"; done
  fi
  for port in "${CLUSTER_PORTS[@]}"; do
    server redis-server "$port" --cluster-enabled yes --cluster-config-file "$BASE/$port/nodes.conf" \
      --cluster-node-timeout 1000
  done
  for port in "${CLUSTER_PORTS[@]}"; do wait_for "redis $port" ping "$port"; done
  if ! cluster_ok; then
    local nodes=()
    for port in "${CLUSTER_PORTS[@]}"; do nodes+=("127.0.0.1:$port"); done
    if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$BASE/cluster-create.log" 2>&1; then
      echo "redis-topology: creating the cluster on ${CLUSTER_PORTS[0]}-${CLUSTER_PORTS[5]} failed:" >&2
      cat "$BASE/cluster-create.log" >&2
      return 1
    fi
  fi
  wait_for "cluster_state:ok" cluster_ok
  wait_for "six cluster nodes" cluster_full
  wait_for "replicas in sync" replicas_synced "${CLUSTER_PORTS[@]}"
}

sentinels_know_master() {
  for port in "${SENTINEL_PORTS[@]}"; do
    redis-cli -h 127.0.0.1 -p "$port" sentinel get-master-addr-by-name "$MASTER_NAME" 2>/dev/null | grep -q 127.0.0.1 || return 1
    [ "$(redis-cli -h 127.0.0.1 -p "$port" sentinel master "$MASTER_NAME" 2>/dev/null | sed -n '/^num-other-sentinels$/{n;p}')" = 2 ] || return 1
  done
}

start_sentinel() {
  local first="${SENTINEL_DATA_PORTS[0]}" second="${SENTINEL_DATA_PORTS[1]}"
  local master=$first
  # A set whose servers are all gone starts from empty folders, as a cluster does (see start_cluster).
  if none_answer "${SENTINEL_DATA_PORTS[@]}" "${SENTINEL_PORTS[@]}"; then
    for port in "${SENTINEL_DATA_PORTS[@]}" "${SENTINEL_PORTS[@]}"; do rm -rf "${BASE:?}/$port"; done
  fi
  # After a failover the old master may be a replica: keep whichever is master now.
  if ping "$first" || ping "$second"; then
    for port in "${SENTINEL_PORTS[@]}"; do
      if ping "$port"; then
        master="$(redis-cli -h 127.0.0.1 -p "$port" sentinel get-master-addr-by-name "$MASTER_NAME" | sed -n 2p)"
        break
      fi
    done
  fi
  server redis-server "$first" $([ "$master" != "$first" ] && echo "--replicaof 127.0.0.1 $master")
  server redis-server "$second" $([ "$master" != "$second" ] && echo "--replicaof 127.0.0.1 $master")
  for port in "${SENTINEL_DATA_PORTS[@]}"; do wait_for "redis $port" ping "$port"; done
  for port in "${SENTINEL_PORTS[@]}"; do
    local dir="$BASE/$port"
    mkdir -p "$dir"
    ping "$port" && continue
    cat >"$dir/sentinel.conf" <<EOF
port $port
bind 127.0.0.1
daemonize yes
pidfile $dir/pid
logfile $dir/log
dir $dir
sentinel monitor $MASTER_NAME 127.0.0.1 $master 2
sentinel down-after-milliseconds $MASTER_NAME 1000
sentinel failover-timeout $MASTER_NAME 5000
sentinel parallel-syncs $MASTER_NAME 1
EOF
    redis-server "$dir/sentinel.conf" --sentinel 9>&-
  done
  wait_for "sentinels knowing $MASTER_NAME and each other" sentinels_know_master
  wait_for "the $MASTER_NAME replica in sync" replicas_synced "${SENTINEL_DATA_PORTS[@]}"
}

start_valkey() {
  [ -n "$VALKEY_PORT" ] || return 0
  if ! command -v valkey-server >/dev/null 2>&1; then
    echo "redis-topology: valkey-server is not installed; the Valkey specs skip (apt-get install valkey-server)"
    return 0
  fi
  server valkey-server "$VALKEY_PORT"
  wait_for "valkey $VALKEY_PORT" ping "$VALKEY_PORT"
}

all_ports() {
  for set in "${SETS[@]}"; do
    use_set $set
    echo "${CLUSTER_PORTS[@]}" "${SENTINEL_DATA_PORTS[@]}" "${SENTINEL_PORTS[@]}"
  done
  [ -z "$VALKEY_PORT" ] || echo "$VALKEY_PORT"
}

# True while the pid is the server this script started on the port (after a restart of the machine
# the pid file may name somebody else's process).
ours() { # pid, port
  ps -p "$1" -o args= 2>/dev/null | grep -Eq "^(redis|valkey)-server .*:$2\b"
}

stop_all() {
  local pids=()
  for port in $(all_ports); do
    local pidfile="$BASE/$port/pid"
    [ -f "$pidfile" ] || continue
    local pid; pid="$(cat "$pidfile")"
    ours "$pid" "$port" && kill "$pid" 2>/dev/null && pids+=("$pid")
  done
  # Every server was asked at once; each has 5 s to exit before it is killed.
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$BASE"
}

mkdir -p "$BASE"
case "${1:-}" in
  start)
    # One start at a time (spec files may ask together).
    exec 9>"$BASE.lock"
    flock 9
    for set in "${SETS[@]}"; do
      use_set $set
      start_cluster
      start_sentinel
      echo "redis-topology: cluster 127.0.0.1:${CLUSTER_PORTS[0]}-${CLUSTER_PORTS[5]}, sentinels 127.0.0.1:${SENTINEL_PORTS[0]}-${SENTINEL_PORTS[2]} ($MASTER_NAME), in $BASE"
    done
    start_valkey
    ;;
  stop) stop_all ;;
  status)
    for port in $(all_ports); do
      printf '%s %s\n' "$port" "$(ping "$port" && echo up || echo down)"
    done
    ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
