# scripts/test.d/lib/cluster.sh — sourced by the suites that hold
# cluster-mode clients (redis-py's RedisCluster, ioredis's Cluster) to a
# real Redis Cluster: a 3-master cluster of redis-server on loopback,
# created with redis-cli --cluster create as an operator would, and a
# tiercache with server.cluster emulated beside it. Both take the
# password "pw". The caller calls stop_clusters when done (or on exit).
#
#   start_redis_cluster DIR          sets CLUSTER_SEED (host:port of a node)
#   start_tiercache_cluster BIN DIR  sets TC_CLUSTER_ADDR (host:port)
#   stop_clusters                    kills both

cluster_pids=()

# free_port: a random loopback port with nothing listening on it, nor on
# it + 10000 (a cluster node's bus port).
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && ! (exec 3<>"/dev/tcp/127.0.0.1/$((p + 10000))") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

start_redis_cluster() {
  local dir=$1 addrs=() p
  for _ in 1 2 3; do
    p=$(free_port) || return 1
    mkdir -p "$dir/$p"
    redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "$dir/$p/nodes.conf" \
      --cluster-node-timeout 1000 --requirepass pw --masterauth pw --save "" --appendonly no --dir "$dir/$p" \
      --daemonize no >"$dir/$p/log" 2>&1 &
    cluster_pids+=($!)
    addrs+=("127.0.0.1:$p")
  done
  for a in "${addrs[@]}"; do
    for _ in $(seq 1 100); do
      [ "$(redis-cli -h 127.0.0.1 -p "${a#*:}" -a pw --no-auth-warning PING 2>/dev/null)" = PONG ] && break
      sleep 0.1
    done
  done
  redis-cli -a pw --no-auth-warning --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1 || return 1
  # Ready: every node sees the whole cluster serving every slot, three
  # looks in a row (a node can say ok before the others have its view).
  local good=0
  for _ in $(seq 1 300); do
    if cluster_ok "${addrs[@]}"; then good=$((good + 1)); else good=0; fi
    [ "$good" -ge 3 ] && break
    sleep 0.1
  done
  [ "$good" -ge 3 ] || return 1
  CLUSTER_SEED=${addrs[0]}
}

# cluster_ok ADDR...: every node says cluster_state:ok, all slots ok, and
# knows every node.
cluster_ok() {
  local a info
  for a in "$@"; do
    info=$(redis-cli -h 127.0.0.1 -p "${a#*:}" -a pw --no-auth-warning CLUSTER INFO 2>/dev/null)
    grep -q '^cluster_state:ok' <<<"$info" && grep -q '^cluster_slots_ok:16384' <<<"$info" &&
      grep -q "^cluster_known_nodes:$#" <<<"$info" || return 1
  done
}

start_tiercache_cluster() {
  local bin=$1 dir=$2 p
  p=$(free_port) || return 1
  TIERCACHE_SERVER_TCP="127.0.0.1:$p" TIERCACHE_SERVER_REQUIREPASS=pw TIERCACHE_SERVER_CLUSTER=emulated \
    "$bin" serve -socket "$dir/tc-cluster.sock" -data "$dir/tc-cluster-data" -metrics off -log-format json \
    -hot-bytes 32MiB -warm-bytes 32MiB >/dev/null 2>"$dir/tc-cluster.log" &
  cluster_pids+=($!)
  for _ in $(seq 1 300); do
    if redis-cli -s "$dir/tc-cluster.sock" INFO persistence 2>/dev/null | grep -q '^loading:0'; then
      TC_CLUSTER_ADDR="127.0.0.1:$p"
      return 0
    fi
    sleep 0.1
  done
  return 1
}

stop_clusters() {
  for p in "${cluster_pids[@]}"; do
    kill "$p" 2>/dev/null
    { wait "$p"; } 2>/dev/null
  done
  cluster_pids=()
}
