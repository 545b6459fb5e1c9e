#!/usr/bin/env bash
# Makes PostgreSQL, Redis and RabbitMQ available on loopback for development, tests and drills.
# Idempotent: a service already reachable on its configured port is reused; otherwise it is
# installed with apt-get (root) and started. No Docker engine is needed.
#
#   scripts/services.sh up [--pooler] [--sentinel] [--cluster]|pooler|down [--sentinel|--cluster]|status|reset
#
# up --pooler (or FLASHSALE_POOLER=1) also starts PgBouncer on POOLER_PORT (6432) in front of Postgres, set
# as production's CloudNativePG Pooler sets it: transaction pooling, and ignore_startup_parameters =
# extra_float_digits,options, so a setting sent at connection start (JDBC's options=-c ...) is silently
# dropped, as in production. The worker's timeout tests connect through it (scripts/test.sh starts it).
# pooler starts only that PgBouncer, in front of DB_PORT (the fault drill's private stack starts its own so).
#
# up --sentinel (or FLASHSALE_SENTINEL=1) also starts production's Redis topology on loopback, beside the shared
# Redis: a master, two replicas and three Sentinels with production's settings (the fault drill's code,
# load-tests/faults/stack.sh), on SENTINEL_REDIS_PORTS (6381 6382 6383, the first the master) and
# SENTINEL_PORTS (26381 26382 26383), master name REDIS_SENTINEL_MASTER (flashsale), files in SENTINEL_DIR. The
# apps and their tests reach it with SPRING_PROFILES_ACTIVE=redis-sentinel, REDIS_SENTINEL_MASTER and
# REDIS_SENTINEL_NODES, which up prints. down --sentinel stops that topology only (the shared services stay up).
#
# up --cluster (or FLASHSALE_CLUSTER=1) also starts a Redis Cluster of three masters (no replicas) on loopback,
# beside the shared Redis: three more processes of the same redis-server, on CLUSTER_PORTS (7001 7002 7003),
# with the shared Redis's persistence (AOF, appendfsync everysec), files in CLUSTER_DIR. A cluster already
# whole on those ports is reused; otherwise its nodes are started afresh, empty, and the slots split evenly
# (redis-cli --cluster create). The apps and their tests reach it with SPRING_PROFILES_ACTIVE=redis-cluster
# and REDIS_CLUSTER_NODES, which up prints (docs/operations.md#redis-cluster). down --cluster stops that
# cluster only and deletes its files.
#
# reset empties what the tests and drills leave behind, on loopback only: every Redis database on
# REDIS_PORT (and on the cluster's masters when this script started one), the flashsale* databases (dropped and created again, empty: the applications migrate them),
# and the broker's queues. A fresh machine starts that way; a box that ran CI many times does not (tests
# leave their sales open for an hour and their reservations behind, and the apps' background reads grow
# with them: 439k Redis keys made the API's integration tests 40 % slower here).
#
# Configuration (same variables the applications read, with the same local defaults):
#   DB_HOST DB_PORT DB_NAME DB_USER DB_PASSWORD REDIS_HOST REDIS_PORT
#   RABBITMQ_HOST RABBITMQ_PORT RABBITMQ_USER RABBITMQ_PASSWORD RABBITMQ_MANAGEMENT_PORT POOLER_PORT
set -euo pipefail

DB_HOST=${DB_HOST:-127.0.0.1}
DB_PORT=${DB_PORT:-5432}
DB_NAME=${DB_NAME:-flashsale}
DB_USER=${DB_USER:-flashsale}
DB_PASSWORD=${DB_PASSWORD:-flashsale}
REDIS_HOST=${REDIS_HOST:-127.0.0.1}
REDIS_PORT=${REDIS_PORT:-6379}
RABBITMQ_HOST=${RABBITMQ_HOST:-127.0.0.1}
RABBITMQ_PORT=${RABBITMQ_PORT:-5672}
RABBITMQ_USER=${RABBITMQ_USER:-flashsale}
RABBITMQ_PASSWORD=${RABBITMQ_PASSWORD:-flashsale}
RABBITMQ_MANAGEMENT_PORT=${RABBITMQ_MANAGEMENT_PORT:-15672}
POOLER_PORT=${POOLER_PORT:-6432}
SENTINEL_REDIS_PORTS=${SENTINEL_REDIS_PORTS:-6381 6382 6383}
SENTINEL_PORTS=${SENTINEL_PORTS:-26381 26382 26383}
REDIS_SENTINEL_MASTER=${REDIS_SENTINEL_MASTER:-flashsale}
SENTINEL_DIR=${SENTINEL_DIR:-/tmp/flashsale-sentinel}
CLUSTER_PORTS=${CLUSTER_PORTS:-7001 7002 7003}
CLUSTER_DIR=${CLUSTER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/flashsale/redis-cluster}

say() { printf '[services] %s\n' "$*"; }
die() { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }

reachable() { # host port
  (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

wait_for() { # name host port seconds
  local i
  for ((i = 0; i < $4 * 5; i++)); do
    reachable "$2" "$3" && return 0
    sleep 0.2
  done
  die "$1 did not open $2:$3 within $4 s"
}

need_root() {
  [ "$(id -u)" = 0 ] || die "$1 is not reachable and installing it needs root (run as root, or start it yourself on the configured port)"
}

apt_updated=""
install_packages() { # packages...
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  need_root "${missing[*]}"
  if [ -z "$apt_updated" ]; then
    say "apt-get update"
    apt-get update -qq >/dev/null || die "apt-get update failed"
    apt_updated=1
  fi
  say "installing ${missing[*]}"
  # policy-rc.d keeps the package scripts from starting daemons we start ourselves below.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}

psql_admin() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- psql -p "$DB_PORT" -h /var/run/postgresql -v ON_ERROR_STOP=1 -qtA "$@"
  else psql -p "$DB_PORT" -v ON_ERROR_STOP=1 -qtA "$@"; fi
}

postgres_up() {
  if reachable "$DB_HOST" "$DB_PORT"; then
    say "postgres: reusing the server on $DB_HOST:$DB_PORT"
  else
    install_packages postgresql
    local version
    version=$(ls /usr/lib/postgresql | sort -V | tail -n1)
    [ -n "$version" ] || die "no PostgreSQL installation found under /usr/lib/postgresql"
    if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^$version main$"; then
      say "postgres: creating cluster $version/main"
      pg_createcluster "$version" main --port "$DB_PORT" >/dev/null
    fi
    say "postgres: starting cluster $version/main"
    pg_ctlcluster "$version" main start 2>/dev/null || pg_ctlcluster "$version" main status >/dev/null \
      || die "postgres cluster $version/main did not start (see /var/log/postgresql/)"
    wait_for postgres "$DB_HOST" "$DB_PORT" 30
  fi
  if [ "$(id -u)" = 0 ] && [ -d /var/run/postgresql ]; then
    if [ "$(psql_admin -c "select 1 from pg_roles where rolname = '$DB_USER'")" != 1 ]; then
      say "postgres: creating role $DB_USER"
      psql_admin -c "create role \"$DB_USER\" login password '$DB_PASSWORD'"
    fi
    if [ "$(psql_admin -c "select 1 from pg_database where datname = '$DB_NAME'")" != 1 ]; then
      say "postgres: creating database $DB_NAME"
      psql_admin -c "create database \"$DB_NAME\" owner \"$DB_USER\""
    fi
    # The flash-sale drills open many connections from two applications at once.
    if [ "$(psql_admin -c "show max_connections")" -lt 200 ]; then
      say "postgres: raising max_connections to 200 (restart)"
      psql_admin -c "alter system set max_connections = 200"
      local version; version=$(ls /usr/lib/postgresql | sort -V | tail -n1)
      pg_ctlcluster "$version" main restart
      wait_for postgres "$DB_HOST" "$DB_PORT" 30
    fi
  fi
  PGPASSWORD=$DB_PASSWORD psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d "$DB_NAME" -qtAc 'select 1' >/dev/null \
    || die "postgres: cannot log in as $DB_USER to $DB_NAME on $DB_HOST:$DB_PORT"
  say "postgres: ready ($DB_USER@$DB_HOST:$DB_PORT/$DB_NAME)"
}

# Redis keeps stock, per-user totals and reservation records: it runs with an append-only file fsynced
# every second (appendfsync everysec), so a crash or kill -9 loses at most about the last second of writes;
# the API rebuilds a sale whose state is missing or behind from Postgres (docs/architecture.md#redis-loss-and-failover).
REDIS_DIR=${REDIS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/flashsale/redis-$REDIS_PORT}
REDIS_FSYNC=${REDIS_FSYNC:-everysec}
# The one Redis version of the project: Debian 12's redis-server package, which this script installs; the
# Compose file and every Kubernetes manifest name the same one (deploy-tests/deploy_checks.py checks them).
REDIS_VERSION=7.0.15

# Warns when the Redis on the port is not the project's version (another distribution's package, or a
# server started by hand): the tests and drills then run another Redis than production.
redis_version_check() {
  local running
  running=$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" info server 2>/dev/null | tr -d '\r' | sed -n 's/^redis_version://p')
  [ "$running" = "$REDIS_VERSION" ] ||
    say "redis: WARNING: $REDIS_HOST:$REDIS_PORT runs Redis ${running:-of an unknown version}, the project's is $REDIS_VERSION"
}

redis_up() {
  if reachable "$REDIS_HOST" "$REDIS_PORT"; then
    say "redis: reusing the server on $REDIS_HOST:$REDIS_PORT"
    redis_loaded 300
    redis_persist
  else
    install_packages redis-server
    mkdir -p "$REDIS_DIR"
    say "redis: starting on port $REDIS_PORT (AOF in $REDIS_DIR, appendfsync $REDIS_FSYNC)"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --dir "$REDIS_DIR" --save '' \
      --appendonly yes --appendfsync "$REDIS_FSYNC" --maxmemory-policy noeviction \
      --logfile /tmp/flashsale-redis-$REDIS_PORT.log >/dev/null \
      || die "redis-server did not start (see /tmp/flashsale-redis-$REDIS_PORT.log)"
    wait_for redis "$REDIS_HOST" "$REDIS_PORT" 15
    redis_loaded 300
  fi
  redis_version_check
  say "redis: ready ($REDIS_HOST:$REDIS_PORT)"
}

# An open port is not a ready server: while Redis replays its AOF it accepts connections and answers every
# command with -LOADING (a large dataset kept from earlier drills takes tens of seconds), so tests and
# applications started then fail. Ready means PING answers PONG.
redis_loaded() { # seconds
  command -v redis-cli >/dev/null || install_packages redis-tools
  local i reply said=""
  for ((i = 0; i < $1 * 5; i++)); do
    reply=$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>&1 || true)
    [ "$reply" = PONG ] && return 0
    if [ -z "$said" ] && [[ $reply == LOADING* ]]; then
      say "redis: loading its dataset ($(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" info persistence 2>/dev/null \
        | awk -F: '/^loading_loaded_perc/ {sub(/\r/, "", $2); print $2 "% done"}'))"
      said=1
    fi
    sleep 0.2
  done
  die "redis on $REDIS_HOST:$REDIS_PORT did not answer PING within $1 s (last reply: $reply)"
}

# A server that was already running (started before AOF was the rule, or by hand) is switched to AOF in
# place with CONFIG SET: every key is kept, and the AOF goes to the server's own dir (Redis 7 refuses to
# change dir at run time). The reply is checked: redis-cli exits 0 on an error reply.
redis_persist() {
  command -v redis-cli >/dev/null || install_packages redis-tools
  local cli=(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT")
  [ "$("${cli[@]}" config get appendonly | sed -n 2p)" = yes ] && return 0
  say "redis: switching the running server to AOF (appendfsync $REDIS_FSYNC, in its dir $("${cli[@]}" config get dir | sed -n 2p))"
  [ "$("${cli[@]}" config set appendfsync "$REDIS_FSYNC")" = OK ] \
    && [ "$("${cli[@]}" config set appendonly yes)" = OK ] \
    || die "redis: could not switch $REDIS_HOST:$REDIS_PORT to AOF"
}

# PgBouncer as CloudNativePG runs it (its Pooler always sets ignore_startup_parameters =
# extra_float_digits,options). Debian 12 ships PgBouncer 1.18, which has no max_prepared_statements (the
# prod Pooler sets 200): a JDBC client of this one connects with prepareThreshold=0. PgBouncer will not run
# as root, so root runs it as postgres (postgresql-common, a dependency of the package, creates that user).
POOLER_DIR=${POOLER_DIR:-/tmp/flashsale-pgbouncer-$POOLER_PORT}

pooler_up() {
  if reachable "$DB_HOST" "$POOLER_PORT"; then
    say "pgbouncer: reusing the pooler on $DB_HOST:$POOLER_PORT"
    return 0
  fi
  install_packages pgbouncer
  mkdir -p "$POOLER_DIR"
  printf '"%s" "%s"\n' "$DB_USER" "$DB_PASSWORD" >"$POOLER_DIR/userlist.txt"
  chmod 600 "$POOLER_DIR/userlist.txt"
  cat >"$POOLER_DIR/pgbouncer.ini" <<INI
[databases]
* = host=$DB_HOST port=$DB_PORT

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $POOLER_PORT
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $POOLER_DIR/userlist.txt
pool_mode = transaction
ignore_startup_parameters = extra_float_digits,options
max_client_conn = 400
default_pool_size = 10
logfile = $POOLER_DIR/pgbouncer.log
pidfile = $POOLER_DIR/pgbouncer.pid
INI
  local run=()
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres "$POOLER_DIR"
    run=(runuser -u postgres --)
  fi
  say "pgbouncer: starting on port $POOLER_PORT (transaction pooling, config in $POOLER_DIR)"
  "${run[@]}" pgbouncer -d "$POOLER_DIR/pgbouncer.ini" >/dev/null || die "pgbouncer did not start (see $POOLER_DIR/pgbouncer.log)"
  wait_for pgbouncer "$DB_HOST" "$POOLER_PORT" 15
  PGPASSWORD=$DB_PASSWORD psql -h "$DB_HOST" -p "$POOLER_PORT" -U "$DB_USER" -d "$DB_NAME" -qtAc 'select 1' >/dev/null \
    || die "pgbouncer: cannot log in as $DB_USER to $DB_NAME through $DB_HOST:$POOLER_PORT"
  say "pgbouncer: ready ($DB_USER@$DB_HOST:$POOLER_PORT/$DB_NAME, transaction pooling)"
}

# Production's Redis topology, started by the fault drill's own functions (one copy of that setup).
sentinel_stack() { # function of load-tests/faults/stack.sh, with its arguments
  (
    FAULTS_DIR=$SENTINEL_DIR FAULTS_REDIS_PORT=${SENTINEL_REDIS_PORTS%% *} FAULTS_REPLICA_PORTS=${SENTINEL_REDIS_PORTS#* } \
      FAULTS_SENTINEL_PORTS=$SENTINEL_PORTS FAULTS_SENTINEL_MASTER=$REDIS_SENTINEL_MASTER FAULTS_REDIS_TOPOLOGY=sentinel
    source "$(dirname "$0")/../load-tests/faults/stack.sh"
    "$@"
  )
}
sentinel_up() {
  install_packages redis-server
  local nodes="" port
  for port in $SENTINEL_PORTS; do nodes="$nodes${nodes:+,}127.0.0.1:$port"; done
  if reachable 127.0.0.1 "${SENTINEL_PORTS%% *}"; then
    say "redis-sentinel: reusing the Sentinels on :${SENTINEL_PORTS// /, :}"
    sentinel_stack fs_sentinel_whole 30 || die "redis-sentinel: the running topology is not whole (master, replicas caught up, Sentinels agreeing)"
  else
    say "redis-sentinel: starting a master and two replicas on :${SENTINEL_REDIS_PORTS// /, :}, Sentinels on :${SENTINEL_PORTS// /, :}"
    sentinel_stack fs_sentinel_up || die "redis-sentinel: did not start (files in $SENTINEL_DIR)"
  fi
  say "redis-sentinel: ready (SPRING_PROFILES_ACTIVE=redis-sentinel REDIS_SENTINEL_MASTER=$REDIS_SENTINEL_MASTER REDIS_SENTINEL_NODES=$nodes)"
}

# A local Redis Cluster: the keys were laid out for one (every key of a sale in the slot of its hash tag
# {sale:ID}, a shopper's keys in theirs), and the tests of the redis-cluster profile prove they run there.
cluster_cli() { # port, redis-cli arguments...
  local port=$1; shift
  redis-cli -h 127.0.0.1 -p "$port" "$@"
}
cluster_info() { # port field
  cluster_cli "$1" cluster info 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"
}
# Whole: every node answers, agrees the cluster is ok, and knows every other one.
cluster_whole() {
  local port count
  count=$(echo $CLUSTER_PORTS | wc -w)
  for port in $CLUSTER_PORTS; do
    [ "$(cluster_info "$port" cluster_state)" = ok ] || return 1
    [ "$(cluster_info "$port" cluster_known_nodes)" = "$count" ] || return 1
    [ "$(cluster_info "$port" cluster_slots_assigned)" = 16384 ] || return 1
  done
}
cluster_node_start() { # port
  local dir=$CLUSTER_DIR/node-$1
  mkdir -p "$dir"
  redis-server --port "$1" --bind 127.0.0.1 --daemonize yes --dir "$dir" --pidfile "$dir/redis.pid" \
    --logfile "$dir/redis.log" --save '' --appendonly yes --appendfsync "$REDIS_FSYNC" \
    --maxmemory-policy noeviction --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" \
    --cluster-node-timeout 5000 >/dev/null || die "redis-cluster: node :$1 did not start (see $dir/redis.log)"
}
cluster_down() {
  local port pid
  for port in $CLUSTER_PORTS; do
    pid=$(cat "$CLUSTER_DIR/node-$port/redis.pid" 2>/dev/null || true)
    # The fault drill's way to stop a process (its Sentinel settings do not matter to it).
    if [ -n "$pid" ]; then sentinel_stack fs_stop_pid "$pid"; fi
  done
  rm -rf "$CLUSTER_DIR"
}
cluster_up() {
  install_packages redis-server
  local nodes="" port i
  for port in $CLUSTER_PORTS; do nodes="$nodes${nodes:+,}127.0.0.1:$port"; done
  if cluster_whole; then
    say "redis-cluster: reusing the cluster on :${CLUSTER_PORTS// /, :}"
  else
    for port in $CLUSTER_PORTS; do
      # Only nodes this script started (their pid file in CLUSTER_DIR) are stopped: anything else on the
      # port is someone else's.
      if reachable 127.0.0.1 "$port" && [ ! -f "$CLUSTER_DIR/node-$port/redis.pid" ]; then
        die "redis-cluster: :$port is taken by a server this script did not start (set CLUSTER_PORTS)"
      fi
    done
    cluster_down
    say "redis-cluster: starting three masters on :${CLUSTER_PORTS// /, :} (files in $CLUSTER_DIR)"
    for port in $CLUSTER_PORTS; do cluster_node_start "$port"; done
    for port in $CLUSTER_PORTS; do wait_for redis-cluster 127.0.0.1 "$port" 15; done
    # shellcheck disable=SC2086 # one argument per node
    redis-cli --cluster create ${nodes//,/ } --cluster-replicas 0 --cluster-yes >"$CLUSTER_DIR/create.log" 2>&1 \
      || die "redis-cluster: redis-cli --cluster create failed (see $CLUSTER_DIR/create.log)"
    for ((i = 0; i < 150; i++)); do cluster_whole && break; sleep 0.2; done
    cluster_whole || die "redis-cluster: not ok within 30 s after create (see $CLUSTER_DIR/create.log)"
  fi
  say "redis-cluster: ready (SPRING_PROFILES_ACTIVE=redis-cluster REDIS_CLUSTER_NODES=$nodes)"
}

rabbit_up() {
  if reachable "$RABBITMQ_HOST" "$RABBITMQ_PORT"; then
    say "rabbitmq: reusing the broker on $RABBITMQ_HOST:$RABBITMQ_PORT"
  else
    install_packages rabbitmq-server
    say "rabbitmq: starting"
    if ! rabbitmqctl -q status >/dev/null 2>&1; then
      # No scheduler busy-waiting: on a small shared box, Erlang's spinning schedulers steal the CPU
      # the applications and Postgres need (RabbitMQ's own advice for CPU-constrained hosts).
      (RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=$RABBITMQ_PORT \
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="+sbwt none +sbwtdcpu none +sbwtdio none" \
        setsid rabbitmq-server >/tmp/flashsale-rabbitmq.log 2>&1 &)
    fi
    wait_for rabbitmq "$RABBITMQ_HOST" "$RABBITMQ_PORT" 90
    rabbitmqctl -q await_startup >/dev/null 2>&1 || true
  fi
  if command -v rabbitmqctl >/dev/null && rabbitmqctl -q status >/dev/null 2>&1; then
    if ! rabbitmq-plugins -q is_enabled rabbitmq_management >/dev/null 2>&1; then
      say "rabbitmq: enabling the management plugin"
      rabbitmq-plugins -q enable rabbitmq_management >/dev/null
    fi
    if ! rabbitmqctl -q list_users | awk '{print $1}' | grep -qx "$RABBITMQ_USER"; then
      say "rabbitmq: creating user $RABBITMQ_USER"
      rabbitmqctl -q add_user "$RABBITMQ_USER" "$RABBITMQ_PASSWORD" >/dev/null
      rabbitmqctl -q set_user_tags "$RABBITMQ_USER" administrator >/dev/null
      rabbitmqctl -q set_permissions -p / "$RABBITMQ_USER" '.*' '.*' '.*' >/dev/null
    fi
    wait_for rabbitmq-management "$RABBITMQ_HOST" "$RABBITMQ_MANAGEMENT_PORT" 60
  fi
  say "rabbitmq: ready ($RABBITMQ_USER@$RABBITMQ_HOST:$RABBITMQ_PORT, management :$RABBITMQ_MANAGEMENT_PORT)"
}

status() {
  local rc=0
  for s in "postgres $DB_HOST $DB_PORT" "redis $REDIS_HOST $REDIS_PORT" "rabbitmq $RABBITMQ_HOST $RABBITMQ_PORT" \
    "rabbitmq-management $RABBITMQ_HOST $RABBITMQ_MANAGEMENT_PORT"; do
    set -- $s
    if reachable "$2" "$3"; then say "$1: up ($2:$3)"; else say "$1: down ($2:$3)"; rc=1; fi
  done
  if reachable "$DB_HOST" "$POOLER_PORT"; then say "pgbouncer: up ($DB_HOST:$POOLER_PORT)"; fi
  if reachable 127.0.0.1 "${SENTINEL_PORTS%% *}"; then say "redis-sentinel: up (Sentinels :${SENTINEL_PORTS// /, :})"; fi
  if reachable 127.0.0.1 "${CLUSTER_PORTS%% *}"; then
    if cluster_whole; then say "redis-cluster: up (:${CLUSTER_PORTS// /, :})"; else say "redis-cluster: not whole (:${CLUSTER_PORTS// /, :})"; rc=1; fi
  fi
  return $rc
}

down() {
  if [ -d "$SENTINEL_DIR/sentinel" ]; then say "redis-sentinel: stopping"; sentinel_stack fs_sentinel_down; fi
  if [ -d "$CLUSTER_DIR" ]; then say "redis-cluster: stopping"; cluster_down; fi
  if [ -f "$POOLER_DIR/pgbouncer.pid" ] && kill -0 "$(cat "$POOLER_DIR/pgbouncer.pid")" 2>/dev/null; then
    say "pgbouncer: stopping"; kill "$(cat "$POOLER_DIR/pgbouncer.pid")" || true
  fi
  if command -v rabbitmqctl >/dev/null && rabbitmqctl -q status >/dev/null 2>&1; then
    say "rabbitmq: stopping"; rabbitmqctl -q stop >/dev/null 2>&1 || true
  fi
  if command -v redis-cli >/dev/null && reachable "$REDIS_HOST" "$REDIS_PORT"; then
    say "redis: stopping"; redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  fi
  if command -v pg_lsclusters >/dev/null; then
    pg_lsclusters -h | while read -r version cluster _ state _; do
      [ "$state" = online ] && { say "postgres: stopping $version/$cluster"; pg_ctlcluster "$version" "$cluster" stop; }
    done
  fi
  return 0
}

reset() {
  local host
  for host in "$DB_HOST" "$REDIS_HOST" "$RABBITMQ_HOST"; do
    case "$host" in
      127.0.0.1 | localhost | ::1) ;;
      *) die "reset empties local services only, not $host" ;;
    esac
  done
  [ "$(id -u)" = 0 ] || die "reset needs root (it drops databases as the postgres superuser)"
  postgres_up >/dev/null; redis_up >/dev/null; rabbit_up >/dev/null
  say "redis: FLUSHALL on $REDIS_HOST:$REDIS_PORT"
  redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" flushall >/dev/null
  local port
  if [ -d "$CLUSTER_DIR" ] && cluster_whole; then
    for port in $CLUSTER_PORTS; do
      say "redis-cluster: FLUSHALL on :$port"
      cluster_cli "$port" flushall >/dev/null
    done
  fi
  local db
  for db in $(psql_admin -c "select datname from pg_database where datname like 'flashsale%'"); do
    say "postgres: dropping and creating $db"
    psql_admin -c "drop database \"$db\" with (force)"
    psql_admin -c "create database \"$db\" owner \"$DB_USER\""
  done
  # Through the management API: rabbitmqctl starts an Erlang VM per call (about a second a queue).
  local api=http://$RABBITMQ_HOST:$RABBITMQ_MANAGEMENT_PORT/api queues
  queues=$(curl -fsS -u "$RABBITMQ_USER:$RABBITMQ_PASSWORD" "$api/queues/%2F?columns=name" |
    python3 -c 'import json, sys, urllib.parse; [print(urllib.parse.quote(q["name"], safe="")) for q in json.load(sys.stdin)]')
  say "rabbitmq: deleting $(echo "$queues" | grep -c . || true) queue(s)"
  for q in $queues; do curl -fsS -o /dev/null -u "$RABBITMQ_USER:$RABBITMQ_PASSWORD" -X DELETE "$api/queues/%2F/$q"; done
}

case "${1:-}" in
  up)
    pooler=${FLASHSALE_POOLER:-} sentinel=${FLASHSALE_SENTINEL:-} cluster=${FLASHSALE_CLUSTER:-}
    for option in "${@:2}"; do
      case "$option" in
        --pooler) pooler=1 ;;
        --sentinel) sentinel=1 ;;
        --cluster) cluster=1 ;;
        *) die "unknown option $option (up [--pooler] [--sentinel] [--cluster])" ;;
      esac
    done
    postgres_up
    if [ "$pooler" = 1 ]; then pooler_up; fi
    redis_up
    if [ "$sentinel" = 1 ]; then sentinel_up; fi
    if [ "$cluster" = 1 ]; then cluster_up; fi
    rabbit_up ;;
  pooler) pooler_up ;;
  down)
    case "${2:-}" in
      --sentinel) sentinel_stack fs_sentinel_down; say "redis-sentinel: stopped" ;;
      --cluster) cluster_down; say "redis-cluster: stopped" ;;
      "") down ;;
      *) die "unknown option $2 (down [--sentinel|--cluster])" ;;
    esac ;;
  status) status ;;
  reset) reset ;;
  *) echo "usage: $0 up [--pooler] [--sentinel] [--cluster]|pooler|down [--sentinel|--cluster]|status|reset" >&2; exit 2 ;;
esac
