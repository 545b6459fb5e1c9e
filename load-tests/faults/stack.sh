#!/usr/bin/env bash
# The fault drill's private stack: its own Postgres cluster, Redis, RabbitMQ node, order-api and
# order-worker, on ports of their own, so that the drill can kill, pause and stop them without touching
# the shared services (scripts/services.sh) or another stack. Needs the packages scripts/services.sh
# installs (postgresql, redis-server, rabbitmq-server) and the jars (scripts/mvn package); run as root.
#
#   load-tests/faults/stack.sh up|down|status        or: source it and call the functions
#
# Redis is one server (FAULTS_REDIS_TOPOLOGY=single), or, as in production (k8s/dependencies/redis-sentinel),
# a master, two replicas and three Sentinels (sentinel), the apps then running the redis-sentinel profile, or
# the same with every Redis node and the broker reached through toxiproxy (proxied), so that a node can be
# blackholed. The apps reach Postgres directly (FAULTS_DB_PATH=direct) or, as production's do, through
# PgBouncer in transaction mode with CloudNativePG's settings (pooler). fs_stack_shape switches a running
# stack (the apps restart).
#
# Settings (environment, defaults below): FAULTS_DIR, FAULTS_PG_PORT, FAULTS_REDIS_PORT, FAULTS_AMQP_PORT,
# FAULTS_MGMT_PORT, FAULTS_DIST_PORT, FAULTS_API_PORT, FAULTS_WORKER_PORT, FAULTS_REDIS_AOF (yes|no),
# FAULTS_REDIS_TOPOLOGY (single|sentinel|proxied), FAULTS_REPLICA_PORTS, FAULTS_SENTINEL_PORTS, FAULTS_TOXI_PORT,
# FAULTS_PROXY_OFFSET, FAULTS_AMQP_PROXY_PORT, FAULTS_DB_PATH (direct|pooler), FAULTS_POOLER_PORT,
# FAULTS_JAVA_OPTS, and the worker's retry budget APP_WORKER_MAX_ATTEMPTS, APP_MESSAGING_RETRY_DELAY and
# reconciler's APP_RECONCILER_GRACE, APP_RECONCILER_HANDOFF_TIMEOUT, APP_RECONCILER_INTERVAL (unset: the
# worker's own defaults).
fs_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${FAULTS_DIR:=/tmp/flashsale-faults}"
: "${FAULTS_PG_PORT:=5443}" "${FAULTS_PG_CLUSTER:=faults}"
: "${FAULTS_REDIS_PORT:=6398}" "${FAULTS_REDIS_AOF:=yes}" "${FAULTS_REDIS_TOPOLOGY:=single}"
: "${FAULTS_REPLICA_PORTS:=6396 6397}" "${FAULTS_SENTINEL_PORTS:=26391 26392 26393}"
# proxied: toxiproxy's API, and each Redis node's proxy on its port + the offset; the broker's proxy.
: "${FAULTS_TOXI_PORT:=18474}" "${FAULTS_PROXY_OFFSET:=100}" "${FAULTS_AMQP_PROXY_PORT:=5684}"
: "${FAULTS_DB_PATH:=direct}" "${FAULTS_POOLER_PORT:=6443}"
: "${FAULTS_AMQP_PORT:=5683}" "${FAULTS_MGMT_PORT:=15683}" "${FAULTS_DIST_PORT:=25683}"
: "${FAULTS_RABBIT_NODE:=faults@localhost}"
: "${FAULTS_API_PORT:=18780}" "${FAULTS_WORKER_PORT:=18781}"
: "${FAULTS_JAVA_OPTS:=-XX:+UseSerialGC -Xms256m -Xmx512m -XX:TieredStopAtLevel=1}"
: "${FAULTS_READY_TIMEOUT:=120}"
FAULTS_API_URL=http://127.0.0.1:$FAULTS_API_PORT

fs_say() { printf '[faults-stack] %s\n' "$*" >&2; }
fs_die() { printf '[faults-stack] ERROR: %s\n' "$*" >&2; exit 2; }
fs_reachable() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
fs_wait_port() { # name port seconds
  local i
  for ((i = 0; i < $3 * 5; i++)); do fs_reachable "$2" && return 0; sleep 0.2; done
  fs_say "$1 did not open :$2 within $3 s"
  return 1
}
fs_stop_pid() { # pid: SIGTERM (after SIGCONT: it may be paused), up to 10 s to exit, then SIGKILL
  kill -0 "$1" 2>/dev/null || return 0
  kill -CONT "$1" 2>/dev/null || true
  kill "$1" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$1" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$1" 2>/dev/null || true
}
fs_pg_version() { ls /usr/lib/postgresql | sort -V | tail -n1; }

# ---- Postgres: a cluster of its own (pg_createcluster), dropped by down.
fs_pg_psql() { runuser -u postgres -- psql -p "$FAULTS_PG_PORT" -h /var/run/postgresql -v ON_ERROR_STOP=1 -qtA "$@"; }
fs_pg_up() {
  local v; v=$(fs_pg_version)
  [ -n "$v" ] || fs_die "PostgreSQL is not installed (scripts/services.sh up installs it)"
  if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$v $FAULTS_PG_CLUSTER"; then
    fs_say "postgres: creating cluster $v/$FAULTS_PG_CLUSTER on :$FAULTS_PG_PORT"
    pg_createcluster "$v" "$FAULTS_PG_CLUSTER" --port "$FAULTS_PG_PORT" -- --auth-local=peer --auth-host=scram-sha-256 >/dev/null
  fi
  fs_pg_start
  if [ "$(fs_pg_psql -c "select 1 from pg_roles where rolname = 'flashsale'")" != 1 ]; then
    fs_pg_psql -c "create role flashsale login password 'flashsale'"
  fi
  if [ "$(fs_pg_psql -c "select 1 from pg_database where datname = 'flashsale'")" != 1 ]; then
    fs_pg_psql -c "create database flashsale owner flashsale"
  fi
}
fs_pg_start() { pg_ctlcluster "$(fs_pg_version)" "$FAULTS_PG_CLUSTER" start 2>/dev/null || true; fs_wait_port postgres "$FAULTS_PG_PORT" 60; }
fs_pg_stop() { pg_ctlcluster "$(fs_pg_version)" "$FAULTS_PG_CLUSTER" stop -m "${1:-fast}"; }
fs_pg_down() {
  local v; v=$(fs_pg_version)
  if pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$v $FAULTS_PG_CLUSTER"; then
    fs_say "postgres: dropping cluster $v/$FAULTS_PG_CLUSTER"
    pg_dropcluster "$v" "$FAULTS_PG_CLUSTER" --stop
  fi
}

# ---- Redis: AOF (appendfsync everysec) in its own directory, as the issue asks of every Redis.
fs_redis_ready() { # port: waits up to 30 s for PONG
  local i
  for ((i = 0; i < 150; i++)); do
    [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.2
  done
  return 1
}
fs_redis_start() {
  mkdir -p "$FAULTS_DIR/redis"
  local aof=(--appendonly no)
  [ "$FAULTS_REDIS_AOF" = yes ] && aof=(--appendonly yes --appendfsync everysec)
  redis-server --port "$FAULTS_REDIS_PORT" --bind 127.0.0.1 --dir "$FAULTS_DIR/redis" --save '' "${aof[@]}" \
    --maxmemory-policy noeviction --daemonize yes --pidfile "$FAULTS_DIR/redis/redis.pid" \
    --logfile "$FAULTS_DIR/redis/redis.log" >/dev/null || fs_die "redis-server did not start ($FAULTS_DIR/redis/redis.log)"
  fs_redis_ready "$FAULTS_REDIS_PORT" || { fs_say "redis did not answer PONG within 30 s (still loading its AOF?)"; return 1; }
}
fs_redis_pid() { cat "$FAULTS_DIR/redis/redis.pid" 2>/dev/null || true; }
fs_redis_down() {
  if fs_reachable "$FAULTS_REDIS_PORT"; then redis-cli -p "$FAULTS_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true; fi
  local pid; pid=$(fs_redis_pid)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -CONT "$pid"; kill "$pid"; fi
  rm -rf "$FAULTS_DIR/redis"
}

# ---- Redis with Sentinel: production's topology on loopback (k8s/dependencies/redis-sentinel: clusterSize 3,
# three Sentinels, quorum 2). Three nodes (FAULTS_REDIS_PORT starts as the master, FAULTS_REPLICA_PORTS as its
# replicas). Down-after, failover timeout, min-replicas-to-write and its lag are production's, so the drill
# fails over, refuses writes and loses them as production would. The replicas authenticate to their master as
# the ACL user "replica". fs_replication_stall points them at the master through a relay that then holds the
# link (replication_hold.py).
: "${FAULTS_SENTINEL_MASTER:=faults}"
: "${FAULTS_HOLD_PORT:=6395}"
fs_redis_prod() { # key: a value of production's Redis or Sentinel settings
  sed -nE "s/^ *$1:? +\"?([0-9]+)\"?.*/\1/p" "$fs_root/k8s/dependencies/redis-sentinel/redis-replication.yaml" | head -n1
}
fs_sentinel_dir() { echo "$FAULTS_DIR/sentinel"; }
fs_redis_nodes() { echo "$FAULTS_REDIS_PORT $FAULTS_REPLICA_PORTS"; }
fs_node_start() { # port [master-port]
  local port=$1 dir; dir=$(fs_sentinel_dir)/node-$1
  mkdir -p "$dir"
  local replica_of=() announce=()
  [ -n "${2:-}" ] && replica_of=(--replicaof 127.0.0.1 "$(fs_node_addr "$2")")
  # Proxied, a replica tells its master (and so the Sentinels) its proxy's port: every client, Sentinel and
  # replica then reaches every node through toxiproxy, as through a network that can drop a node's packets.
  [ "$FAULTS_REDIS_TOPOLOGY" = proxied ] && announce=(--replica-announce-port "$(fs_node_addr "$port")")
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly yes --appendfsync everysec \
    --maxmemory-policy noeviction --min-replicas-to-write "$(fs_redis_prod min-replicas-to-write)" \
    --min-replicas-max-lag "$(fs_redis_prod min-replicas-max-lag)" \
    --user replica on '>faults-replication' +psync +replconf +ping --masteruser replica --masterauth faults-replication \
    "${replica_of[@]}" "${announce[@]}" --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" >/dev/null ||
    { fs_say "redis-server :$port did not start ($dir/redis.log)"; return 1; }
  fs_redis_ready "$port" || { fs_say "redis :$port did not answer PONG within 30 s"; return 1; }
}
fs_node_pid() { cat "$(fs_sentinel_dir)/node-$1/redis.pid" 2>/dev/null || true; }
fs_sentinel_start() { # port
  local port=$1 dir; dir=$(fs_sentinel_dir)/sentinel-$1
  mkdir -p "$dir"
  cat >"$dir/sentinel.conf" <<CONF
port $port
bind 127.0.0.1
dir $dir
sentinel monitor $FAULTS_SENTINEL_MASTER 127.0.0.1 $(fs_node_addr "$FAULTS_REDIS_PORT") 2
sentinel down-after-milliseconds $FAULTS_SENTINEL_MASTER $(fs_redis_prod downAfterMilliseconds)
sentinel failover-timeout $FAULTS_SENTINEL_MASTER $(fs_redis_prod failoverTimeout)
sentinel parallel-syncs $FAULTS_SENTINEL_MASTER 1
CONF
  redis-server "$dir/sentinel.conf" --sentinel --daemonize yes --pidfile "$dir/sentinel.pid" \
    --logfile "$dir/sentinel.log" >/dev/null || { fs_say "sentinel :$port did not start"; return 1; }
  fs_wait_port sentinel "$port" 15
}
# The port clients reach a node on (its proxy's, proxied), and the node behind such a port.
fs_node_addr() { if [ "$FAULTS_REDIS_TOPOLOGY" = proxied ]; then echo $(($1 + FAULTS_PROXY_OFFSET)); else echo "$1"; fi; }
fs_node_of() {
  local port
  for port in $(fs_redis_nodes); do [ "$1" = "$(fs_node_addr "$port")" ] && { echo "$port"; return 0; }; done
  echo "$1"
}
fs_sentinel_view() { # sentinel port: the node it names master, empty when it does not answer
  local addr; addr=$(redis-cli -p "$1" sentinel get-master-addr-by-name "$FAULTS_SENTINEL_MASTER" 2>/dev/null | sed -n 2p)
  [ -n "$addr" ] && fs_node_of "$addr"
  return 0
}
# The master the Sentinels name now (its node's port), empty when none answers.
fs_redis_master_port() {
  local port
  for port in $FAULTS_SENTINEL_PORTS; do
    fs_sentinel_view "$port" | grep . && return 0
  done
  return 0
}
fs_redis_replica_ports() { # the nodes that are not the master
  local master port; master=$(fs_redis_master_port)
  for port in $(fs_redis_nodes); do [ "$port" = "$master" ] || echo "$port"; done
}
fs_info() { # port section field
  redis-cli -p "$1" info "$2" 2>/dev/null | tr -d '\r' | sed -n "s/^$3://p"
}
# Whole again: every node up, each replica of the master online and caught up, every Sentinel agreeing. A node
# that was killed comes back with its own AOF as a master; the Sentinels turn it into a replica of the master
# they elected, and it resynchronises (dropping what only it had, as a real node would).
fs_sentinel_whole() { # seconds
  local i master port whole
  for port in $(fs_redis_nodes); do
    [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] || fs_node_start "$port" || return 1
  done
  for port in $FAULTS_SENTINEL_PORTS; do
    fs_reachable "$port" || fs_sentinel_start "$port" || return 1
  done
  for ((i = 0; i < $1 * 2; i++)); do
    master=$(fs_redis_master_port)
    whole=no
    if [ -n "$master" ] && [ "$(fs_info "$master" replication role)" = master ] &&
      [ "$(for port in $FAULTS_SENTINEL_PORTS; do fs_sentinel_view "$port"; done | sort -u)" = "$master" ]; then
      whole=yes
      for port in $(fs_redis_replica_ports); do
        [ "$(fs_node_of "$(fs_info "$port" replication master_port)")" = "$master" ] && [ "$(fs_info "$port" replication master_link_status)" = up ] &&
          [ "$(fs_info "$master" replication master_repl_offset)" = "$(fs_info "$port" replication slave_repl_offset)" ] || whole=no
      done
    fi
    [ "$whole" = yes ] && return 0
    sleep 0.5
  done
  fs_say "redis with sentinel not whole after $1 s (master ${master:-none})"
  return 1
}
# The replicas fall behind the master while it keeps taking writes: each replicates through the relay (a
# partial resync), which then holds every byte, the connections open. The Sentinels correct a replica that follows another
# address only after failover-timeout (10 s), longer than the fault lasts. Prints the relay's pid.
fs_replication_stall() {
  local master port i dir; master=$(fs_redis_master_port) dir=$(fs_sentinel_dir)/hold
  mkdir -p "$dir"
  setsid python3 "$fs_root/load-tests/faults/replication_hold.py" "$FAULTS_HOLD_PORT" "$master" >"$dir/hold.log" 2>&1 &
  echo $! >"$dir/hold.pid"
  fs_wait_port replication-hold "$FAULTS_HOLD_PORT" 10 || return 1
  for port in $(fs_redis_replica_ports); do redis-cli -p "$port" replicaof 127.0.0.1 "$FAULTS_HOLD_PORT" >/dev/null; done
  for ((i = 0; i < 20; i++)); do
    local linked=yes
    for port in $(fs_redis_replica_ports); do
      [ "$(fs_info "$port" replication master_link_status)" = up ] || linked=no
    done
    [ "$linked" = yes ] && break
    sleep 0.25
  done
  kill -USR1 "$(cat "$dir/hold.pid")"
  cat "$dir/hold.pid"
}
fs_sentinel_up() {
  rm -rf "$(fs_sentinel_dir)"
  fs_node_start "$FAULTS_REDIS_PORT" || return 1
  local port
  for port in $FAULTS_REPLICA_PORTS; do fs_node_start "$port" "$FAULTS_REDIS_PORT" || return 1; done
  for port in $FAULTS_SENTINEL_PORTS; do fs_sentinel_start "$port" || return 1; done
  fs_sentinel_whole 60
}
fs_sentinel_down() {
  local dir pid
  # The Sentinels first: a node stopped while they watch would be failed over.
  for dir in "$(fs_sentinel_dir)"/hold/ "$(fs_sentinel_dir)"/sentinel-*/ "$(fs_sentinel_dir)"/node-*/; do
    [ -d "$dir" ] || continue
    pid=$(cat "$dir"/*.pid 2>/dev/null || true)
    if [ -n "$pid" ]; then fs_stop_pid "$pid"; fi
  done
  rm -rf "$(fs_sentinel_dir)"
}
fs_redis_up() {
  case "$FAULTS_REDIS_TOPOLOGY" in
    single) fs_redis_start ;;
    sentinel) fs_sentinel_up ;;
    proxied) fs_proxies_up && fs_sentinel_up ;;
  esac
}
fs_redis_stack_down() { fs_sentinel_down; fs_redis_down; }
# Switches a running stack to a Redis topology and a path to Postgres: the apps stop; a new topology drops
# the old Redis with its data (every sale of the drill is made anew) and starts the new one; the apps start
# against them.
fs_stack_shape() { # single|sentinel|proxied direct|pooler
  [ "$FAULTS_REDIS_TOPOLOGY" = "$1" ] && [ "$FAULTS_DB_PATH" = "$2" ] && return 0
  fs_say "switching to redis $1, postgres $2 (the apps restart)"
  fs_app_stop worker
  fs_app_stop api
  if [ "$FAULTS_REDIS_TOPOLOGY" != "$1" ]; then
    fs_redis_stack_down
    FAULTS_REDIS_TOPOLOGY=$1
    fs_redis_up || return 1
  fi
  FAULTS_DB_PATH=$2
  [ "$2" = direct ] || fs_pooler_up || return 1
  fs_app_start api
  fs_app_ready api || return 1
  fs_app_start worker
  fs_app_ready worker
}

# ---- toxiproxy (proxied): a proxy in front of each Redis node and the broker. A blackhole is its timeout toxic
# with timeout 0 both ways: every byte is dropped and no connection is closed, new ones are accepted and then
# hear nothing. Built by load-tests/faults/drill.sh (as load-tests/run.sh seeds builds it).
fs_toxiproxy_bin() { echo "${FLASHSALE_TOOLS:-$HOME/.cache/flashsale/bin}/toxiproxy-v2.5.0/server"; }
fs_toxi() { # method path [json body]
  curl -fsS -m 5 -X "$1" "http://127.0.0.1:$FAULTS_TOXI_PORT$2" ${3:+-H 'Content-Type: application/json' -d "$3"} >/dev/null
}
fs_proxies_up() {
  local dir=$FAULTS_DIR/toxiproxy bin port
  bin=$(fs_toxiproxy_bin)
  if ! fs_reachable "$FAULTS_TOXI_PORT"; then
    [ -x "$bin" ] || { fs_say "toxiproxy is missing ($bin): load-tests/faults/drill.sh builds it"; return 1; }
    mkdir -p "$dir"
    setsid "$bin" -host 127.0.0.1 -port "$FAULTS_TOXI_PORT" >"$dir/toxiproxy.log" 2>&1 &
    echo $! >"$dir/toxiproxy.pid"
    fs_wait_port toxiproxy "$FAULTS_TOXI_PORT" 15 || return 1
  fi
  fs_toxi POST /reset
  for port in $(fs_redis_nodes); do
    fs_proxy "redis-$port" "$((port + FAULTS_PROXY_OFFSET))" "$port" || return 1
  done
  fs_proxy broker "$FAULTS_AMQP_PROXY_PORT" "$FAULTS_AMQP_PORT"
}
fs_proxy() { # name listen-port upstream-port: created unless it exists
  curl -fsS -m 5 "http://127.0.0.1:$FAULTS_TOXI_PORT/proxies/$1" >/dev/null 2>&1 ||
    fs_toxi POST /proxies "{\"name\":\"$1\",\"listen\":\"127.0.0.1:$2\",\"upstream\":\"127.0.0.1:$3\"}"
}
fs_blackhole() { # proxy
  fs_toxi POST "/proxies/$1/toxics" '{"name":"blackhole-down","type":"timeout","stream":"downstream","attributes":{"timeout":0}}'
  fs_toxi POST "/proxies/$1/toxics" '{"name":"blackhole-up","type":"timeout","stream":"upstream","attributes":{"timeout":0}}'
}
# The node is back, as a host that restarted: the toxic goes, and the connections it held are closed (the toxic
# dropped bytes out of their middle, so they are no streams any more; a restarted host resets them too).
fs_unblackhole() { # proxy
  fs_toxi DELETE "/proxies/$1/toxics/blackhole-down"
  fs_toxi DELETE "/proxies/$1/toxics/blackhole-up"
  fs_toxi POST "/proxies/$1" '{"enabled":false}'
  fs_toxi POST "/proxies/$1" '{"enabled":true}'
}
fs_proxies_reset() { if fs_reachable "$FAULTS_TOXI_PORT"; then fs_toxi POST /reset; fi; }
fs_proxies_down() {
  local pid; pid=$(cat "$FAULTS_DIR/toxiproxy/toxiproxy.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid"; fi
  rm -rf "$FAULTS_DIR/toxiproxy"
}

# ---- PgBouncer (pooler), started by scripts/services.sh with production's Pooler settings, on its own port.
fs_pooler_dir() { echo "$FAULTS_DIR/pgbouncer"; }
fs_pooler_up() {
  DB_HOST=127.0.0.1 DB_PORT=$FAULTS_PG_PORT POOLER_PORT=$FAULTS_POOLER_PORT POOLER_DIR=$(fs_pooler_dir) \
    "$fs_root/scripts/services.sh" pooler >&2
}
fs_pooler_down() {
  local pid; pid=$(cat "$(fs_pooler_dir)/pgbouncer.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid"; fi
  rm -rf "$(fs_pooler_dir)"
}

# ---- RabbitMQ: a node of its own (name, ports, data, logs, plugins, cookie), run as root with its own HOME.
fs_rabbit_env() {
  local d=$FAULTS_DIR/rabbit
  export HOME=$d RABBITMQ_NODENAME=$FAULTS_RABBIT_NODE RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
    RABBITMQ_NODE_PORT=$FAULTS_AMQP_PORT RABBITMQ_DIST_PORT=$FAULTS_DIST_PORT \
    RABBITMQ_MNESIA_BASE=$d/mnesia RABBITMQ_LOG_BASE=$d/log RABBITMQ_CONFIG_FILE=$d/rabbitmq.conf \
    RABBITMQ_ENABLED_PLUGINS_FILE=$d/enabled_plugins RABBITMQ_PID_FILE=$d/rabbit.pid \
    RABBITMQ_CONF_ENV_FILE=$d/rabbitmq-env.conf RABBITMQ_ADVANCED_CONFIG_FILE=$d/advanced.config \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="+sbwt none +sbwtdcpu none +sbwtdio none"
}
fs_rabbitmqctl() { (fs_rabbit_env && /usr/lib/rabbitmq/bin/rabbitmqctl -n "$FAULTS_RABBIT_NODE" "$@"); }
fs_rabbit_start() {
  local d=$FAULTS_DIR/rabbit
  mkdir -p "$d/mnesia" "$d/log"
  if [ ! -f "$d/.erlang.cookie" ]; then
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$d/.erlang.cookie"
    chmod 400 "$d/.erlang.cookie"
  fi
  echo '[rabbitmq_management].' >"$d/enabled_plugins"
  : >"$d/rabbitmq-env.conf"
  cat >"$d/rabbitmq.conf" <<CONF
listeners.tcp.default = $FAULTS_AMQP_PORT
management.tcp.port = $FAULTS_MGMT_PORT
management.tcp.ip = 127.0.0.1
default_user = flashsale
default_pass = flashsale
default_user_tags.administrator = true
default_permissions.configure = .*
default_permissions.read = .*
default_permissions.write = .*
CONF
  (fs_rabbit_env && cd "$d" && setsid /usr/lib/rabbitmq/bin/rabbitmq-server >>"$d/log/console.log" 2>&1 &)
  fs_wait_port rabbitmq "$FAULTS_AMQP_PORT" 120 || return 1
  fs_rabbitmqctl -q await_startup >/dev/null 2>&1 || true
  fs_wait_port rabbitmq-management "$FAULTS_MGMT_PORT" 60
}
fs_rabbit_pid() { cat "$FAULTS_DIR/rabbit/rabbit.pid" 2>/dev/null || true; }
fs_rabbit_down() {
  if [ -d "$FAULTS_DIR/rabbit" ]; then
    fs_rabbitmqctl -q stop >/dev/null 2>&1 || true
    local pid; pid=$(fs_rabbit_pid)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
    rm -rf "$FAULTS_DIR/rabbit"
  fi
}

# ---- The apps, from their jars, pointed at the private services.
fs_app_env() {
  export SPRING_PROFILES_ACTIVE=local DB_HOST=127.0.0.1 DB_PORT=$FAULTS_PG_PORT REDIS_HOST=127.0.0.1 \
    REDIS_PORT=$FAULTS_REDIS_PORT RABBITMQ_HOST=127.0.0.1 RABBITMQ_PORT=$FAULTS_AMQP_PORT \
    RABBITMQ_MANAGEMENT_URL=http://127.0.0.1:$FAULTS_MGMT_PORT
  if [ "$FAULTS_REDIS_TOPOLOGY" != single ]; then
    local nodes="" port
    for port in $FAULTS_SENTINEL_PORTS; do nodes="$nodes${nodes:+,}127.0.0.1:$port"; done
    export SPRING_PROFILES_ACTIVE=local,redis-sentinel REDIS_SENTINEL_MASTER=$FAULTS_SENTINEL_MASTER REDIS_SENTINEL_NODES=$nodes
  fi
  [ "$FAULTS_REDIS_TOPOLOGY" = proxied ] && export RABBITMQ_PORT=$FAULTS_AMQP_PROXY_PORT
  if [ "$FAULTS_DB_PATH" = pooler ]; then
    # As in production: the apps through the pooler (which keeps no prepared statements: PgBouncer 1.18),
    # the migration direct (production's migration Job).
    export SPRING_DATASOURCE_URL="jdbc:postgresql://127.0.0.1:$FAULTS_POOLER_PORT/flashsale?prepareThreshold=0" \
      SPRING_FLYWAY_URL="jdbc:postgresql://127.0.0.1:$FAULTS_PG_PORT/flashsale" SPRING_FLYWAY_USER=flashsale SPRING_FLYWAY_PASSWORD=flashsale
  fi
  return 0
}
fs_app_start() { # api|worker
  local name=$1 port jar extra=()
  case $name in
    api) port=$FAULTS_API_PORT jar=$fs_root/order-api/target/order-api.jar ;;
    worker)
      port=$FAULTS_WORKER_PORT jar=$fs_root/order-worker/target/order-worker.jar
      [ -n "${APP_MESSAGING_RETRY_DELAY:-}" ] && extra+=("-Dapp.messaging.retry-delay=$APP_MESSAGING_RETRY_DELAY")
      [ -n "${APP_RECONCILER_GRACE:-}" ] && extra+=("-Dapp.reconciler.grace=$APP_RECONCILER_GRACE")
      [ -n "${APP_RECONCILER_HANDOFF_TIMEOUT:-}" ] && extra+=("-Dapp.reconciler.handoff-timeout=$APP_RECONCILER_HANDOFF_TIMEOUT")
      [ -n "${APP_RECONCILER_INTERVAL:-}" ] && extra+=("-Dapp.reconciler.interval=$APP_RECONCILER_INTERVAL")
      ;;
  esac
  [ -f "$jar" ] || fs_die "$jar is missing (scripts/mvn -B -q -DskipTests package)"
  mkdir -p "$FAULTS_DIR"
  (
    fs_app_env
    export SERVER_PORT=$port
    # shellcheck disable=SC2086
    exec setsid java $FAULTS_JAVA_OPTS "${extra[@]}" -jar "$jar" >>"$FAULTS_DIR/$name.log" 2>&1
  ) &
  echo $! >"$FAULTS_DIR/$name.pid"
  disown # its kill -9 is the drill's doing, not news for the shell
}
fs_app_pid() { cat "$FAULTS_DIR/$1.pid" 2>/dev/null || true; }
fs_app_port() { if [ "$1" = api ]; then echo "$FAULTS_API_PORT"; else echo "$FAULTS_WORKER_PORT"; fi; }
fs_app_ready() { # name [seconds]
  local i pid port; port=$(fs_app_port "$1")
  for ((i = 0; i < ${2:-$FAULTS_READY_TIMEOUT} * 4; i++)); do
    curl -fsS -m 2 "http://127.0.0.1:$port/actuator/health/readiness" >/dev/null 2>&1 && return 0
    pid=$(fs_app_pid "$1")
    kill -0 "$pid" 2>/dev/null || { fs_say "$1 exited; last lines of $FAULTS_DIR/$1.log:"; tail -n 30 "$FAULTS_DIR/$1.log" >&2; return 1; }
    sleep 0.25
  done
  fs_say "$1 not ready after ${2:-$FAULTS_READY_TIMEOUT} s ($FAULTS_DIR/$1.log)"
  return 1
}
fs_app_stop() { # name [signal]
  local pid; pid=$(fs_app_pid "$1")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "-${2:-TERM}" "$pid"
    local i
    for ((i = 0; i < 120; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  fi
  rm -f "$FAULTS_DIR/$1.pid"
}

fs_ports_free() {
  local p
  for p in "$FAULTS_PG_PORT" "$FAULTS_REDIS_PORT" $FAULTS_REPLICA_PORTS $FAULTS_SENTINEL_PORTS "$FAULTS_HOLD_PORT" "$FAULTS_AMQP_PORT" \
    "$FAULTS_MGMT_PORT" "$FAULTS_API_PORT" "$FAULTS_WORKER_PORT" "$FAULTS_TOXI_PORT" "$FAULTS_AMQP_PROXY_PORT" "$FAULTS_POOLER_PORT"; do
    if fs_reachable "$p"; then fs_say "port $p is taken"; return 1; fi
  done
}

fs_up() {
  [ "$(id -u)" = 0 ] || fs_die "the private stack needs root (pg_createcluster, runuser)"
  for p in redis-server /usr/lib/rabbitmq/bin/rabbitmq-server pg_createcluster; do
    command -v "$p" >/dev/null || fs_die "$p is missing: run scripts/services.sh up once (it installs the packages)"
  done
  fs_ports_free || fs_die "a port of the private stack is taken (a previous drill still running? load-tests/faults/stack.sh down)"
  mkdir -p "$FAULTS_DIR"
  rm -f "$FAULTS_DIR/api.log" "$FAULTS_DIR/worker.log" # a run's logs are its own (restarts append)
  fs_say "postgres :$FAULTS_PG_PORT, redis :$FAULTS_REDIS_PORT (AOF $FAULTS_REDIS_AOF, topology $FAULTS_REDIS_TOPOLOGY), rabbitmq $FAULTS_RABBIT_NODE :$FAULTS_AMQP_PORT (mgmt :$FAULTS_MGMT_PORT), api :$FAULTS_API_PORT, worker :$FAULTS_WORKER_PORT; files in $FAULTS_DIR"
  fs_pg_up
  fs_redis_up || fs_die "redis ($FAULTS_REDIS_TOPOLOGY) did not start (files in $FAULTS_DIR)"
  fs_rabbit_start || fs_die "rabbitmq node $FAULTS_RABBIT_NODE did not start ($FAULTS_DIR/rabbit/log)"
  [ "$FAULTS_DB_PATH" = direct ] || fs_pooler_up || fs_die "pgbouncer did not start ($(fs_pooler_dir))"
  fs_app_start api
  fs_app_ready api || fs_die "order-api did not start"
  fs_app_start worker
  fs_app_ready worker || fs_die "order-worker did not start"
  fs_say "up"
}

fs_down() {
  fs_app_stop worker
  fs_app_stop api
  fs_rabbit_down
  fs_redis_stack_down
  fs_proxies_down
  fs_pooler_down
  fs_pg_down
  fs_say "down"
}

fs_status() {
  local rc=0 s
  for s in "postgres $FAULTS_PG_PORT" "redis $FAULTS_REDIS_PORT" "rabbitmq $FAULTS_AMQP_PORT" "rabbitmq-management $FAULTS_MGMT_PORT" \
    "order-api $FAULTS_API_PORT" "order-worker $FAULTS_WORKER_PORT"; do
    set -- $s
    if fs_reachable "$2"; then fs_say "$1: up (:$2)"; else fs_say "$1: down (:$2)"; rc=1; fi
  done
  return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  source "$fs_root/scripts/java-env.sh"
  case "${1:-}" in
    up) fs_up ;;
    down) fs_down ;;
    status) fs_status ;;
    *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
  esac
fi
