#!/usr/bin/env bash
# The fault drill's private stack: its own Postgres cluster, Redis, RabbitMQ node, order-api and
# order-worker, on ports of their own, so that the drill can kill, pause and stop them without touching
# the shared services (scripts/services.sh) or another stack. Needs the packages scripts/services.sh
# installs (postgresql, redis-server, rabbitmq-server) and the jars (scripts/mvn package); run as root.
#
#   load-tests/faults/stack.sh up|down|status        or: source it and call the functions
#
# Settings (environment, defaults below): FAULTS_DIR, FAULTS_PG_PORT, FAULTS_REDIS_PORT, FAULTS_AMQP_PORT,
# FAULTS_MGMT_PORT, FAULTS_DIST_PORT, FAULTS_API_PORT, FAULTS_WORKER_PORT, FAULTS_REDIS_AOF (yes|no),
# FAULTS_JAVA_OPTS, and the worker's retry budget APP_WORKER_MAX_ATTEMPTS, APP_MESSAGING_RETRY_DELAY and
# reconciler's APP_RECONCILER_GRACE, APP_RECONCILER_HANDOFF_TIMEOUT, APP_RECONCILER_INTERVAL (unset: the
# worker's own defaults).
fs_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${FAULTS_DIR:=/tmp/flashsale-faults}"
: "${FAULTS_PG_PORT:=5443}" "${FAULTS_PG_CLUSTER:=faults}"
: "${FAULTS_REDIS_PORT:=6398}" "${FAULTS_REDIS_AOF:=yes}"
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
fs_redis_start() {
  mkdir -p "$FAULTS_DIR/redis"
  local aof=(--appendonly no)
  [ "$FAULTS_REDIS_AOF" = yes ] && aof=(--appendonly yes --appendfsync everysec)
  redis-server --port "$FAULTS_REDIS_PORT" --bind 127.0.0.1 --dir "$FAULTS_DIR/redis" --save '' "${aof[@]}" \
    --maxmemory-policy noeviction --daemonize yes --pidfile "$FAULTS_DIR/redis/redis.pid" \
    --logfile "$FAULTS_DIR/redis/redis.log" >/dev/null || fs_die "redis-server did not start ($FAULTS_DIR/redis/redis.log)"
  local i
  for ((i = 0; i < 150; i++)); do
    [ "$(redis-cli -p "$FAULTS_REDIS_PORT" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.2
  done
  fs_say "redis did not answer PONG within 30 s (still loading its AOF?)"
  return 1
}
fs_redis_pid() { cat "$FAULTS_DIR/redis/redis.pid" 2>/dev/null || true; }
fs_redis_down() {
  if fs_reachable "$FAULTS_REDIS_PORT"; then redis-cli -p "$FAULTS_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true; fi
  local pid; pid=$(fs_redis_pid)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -CONT "$pid"; kill "$pid"; fi
  rm -rf "$FAULTS_DIR/redis"
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
  for p in "$FAULTS_PG_PORT" "$FAULTS_REDIS_PORT" "$FAULTS_AMQP_PORT" "$FAULTS_MGMT_PORT" "$FAULTS_API_PORT" "$FAULTS_WORKER_PORT"; do
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
  fs_say "postgres :$FAULTS_PG_PORT, redis :$FAULTS_REDIS_PORT (AOF $FAULTS_REDIS_AOF), rabbitmq $FAULTS_RABBIT_NODE :$FAULTS_AMQP_PORT (mgmt :$FAULTS_MGMT_PORT), api :$FAULTS_API_PORT, worker :$FAULTS_WORKER_PORT; files in $FAULTS_DIR"
  fs_pg_up
  fs_redis_start
  fs_rabbit_start || fs_die "rabbitmq node $FAULTS_RABBIT_NODE did not start ($FAULTS_DIR/rabbit/log)"
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
  fs_redis_down
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
