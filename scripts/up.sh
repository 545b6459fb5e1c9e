#!/usr/bin/env bash
# Builds and runs the whole system on this machine: services up, order-api and order-worker started.
# Prints the API URL and sample tokens. Stop with scripts/down.sh.
#
#   scripts/up.sh [--skip-build] [--api N] [--workers M]
#
# One of each by default: the API on SERVER_PORT (8080), the worker on WORKER_PORT (8081). With --api N
# or --workers M above 1, the instances run side by side (API i on API_PORTS_FROM+i-1, default 18081..;
# worker i on WORKER_PORTS_FROM+i-1, default 18181..) and HAProxy (Debian's package) balances the
# APIs on SERVER_PORT, the one URL for clients, dropping an instance whose readiness fails.
# JVM options: JAVA_OPTS (default G1 with a 512 MiB heap, as the images: the bench measured ~60 MiB live).
# HAPROXY_LOG=127.0.0.1:5514: HAProxy logs each request (httplog: timers, retries, server, the
# Idempotency-Key) to that syslog address over UDP (load-tests/run.sh flash-sale --edge-log reads it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/java-env.sh
run_dir=${FLASHSALE_RUN_DIR:-$root/.run}
mkdir -p "$run_dir"
api_port=${SERVER_PORT:-8080}
worker_port=${WORKER_PORT:-8081}
ready_timeout=${UP_READY_TIMEOUT:-60}  # seconds per app; a loaded 2-core box can need more

skip_build=false
apis=1
workers=1
while [ $# -gt 0 ]; do
  case $1 in
    --skip-build) skip_build=true ;;
    --api) apis=$2; shift ;;
    --workers) workers=$2; shift ;;
    *) echo "usage: scripts/up.sh [--skip-build] [--api N] [--workers M]" >&2; exit 2 ;;
  esac
  shift
done
fleet=false
if [ "$apis" -gt 1 ] || [ "$workers" -gt 1 ]; then fleet=true; fi

scripts/services.sh up

if [ "$skip_build" != true ] || [ ! -f order-api/target/order-api.jar ]; then
  echo "[up] building (mvn package, tests skipped: scripts/test.sh runs them)"
  scripts/mvn -B -q -DskipTests package
fi

start() { # name port jar
  local name=$1 port=$2 jar=$3
  if [ -f "$run_dir/$name.pid" ] && kill -0 "$(cat "$run_dir/$name.pid")" 2>/dev/null; then
    echo "[up] $name already running (pid $(cat "$run_dir/$name.pid"))"
    return
  fi
  # The AOT cache of scripts/aot-cache.sh when it is newer than the jar (as the images start): ready in half
  # the time. Without one, the jar as built.
  local module=${jar%%/target/*} launch=(-jar "$jar")
  local aot=$module/target/aot/$module/$module.aot
  if [ -f "$aot" ] && [ "$aot" -nt "$jar" ]; then launch=(-XX:AOTCache="$root/$aot" -jar "$root/${aot%.aot}.jar"); fi
  echo "[up] starting $name on :$port (log: $run_dir/$name.log)"
  # The local profile admits the committed development secrets; anywhere else the apps refuse them.
  # shellcheck disable=SC2086
  SPRING_PROFILES_ACTIVE=${SPRING_PROFILES_ACTIVE:-local} SERVER_PORT=$port nohup java ${JAVA_OPTS:--XX:+UseG1GC -Xms512m -Xmx512m} "${launch[@]}" >"$run_dir/$name.log" 2>&1 &
  echo $! >"$run_dir/$name.pid"
}

wait_ready() { # name port
  for _ in $(seq 1 $((ready_timeout * 2))); do
    if curl -fsS "http://127.0.0.1:$2/actuator/health/readiness" >/dev/null 2>&1; then
      echo "[up] $1 ready"
      return 0
    fi
    kill -0 "$(cat "$run_dir/$1.pid")" 2>/dev/null || { echo "[up] $1 exited; last log lines:"; tail -n 40 "$run_dir/$1.log"; exit 1; }
    sleep 0.5
  done
  echo "[up] $1 not ready after $ready_timeout s; see $run_dir/$1.log"
  exit 1
}

# The API migrates the schema; the worker validates it, so it starts second.
if [ "$fleet" != true ]; then
  start order-api "$api_port" order-api/target/order-api.jar
  wait_ready order-api "$api_port"
  start order-worker "$worker_port" order-worker/target/order-worker.jar
  wait_ready order-worker "$worker_port"
  instances="order-api :$api_port, order-worker :$worker_port"
else
  if ! command -v haproxy >/dev/null 2>&1; then scripts/ops-tools.sh; fi
  api_from=${API_PORTS_FROM:-18081}
  worker_from=${WORKER_PORTS_FROM:-18181}
  # The first API migrates alone; the others and the workers start together.
  start order-api-1 "$api_from" order-api/target/order-api.jar
  wait_ready order-api-1 "$api_from"
  for i in $(seq 2 "$apis"); do start "order-api-$i" $((api_from + i - 1)) order-api/target/order-api.jar; done
  for i in $(seq 1 "$workers"); do start "order-worker-$i" $((worker_from + i - 1)) order-worker/target/order-worker.jar; done
  for i in $(seq 2 "$apis"); do wait_ready "order-api-$i" $((api_from + i - 1)); done
  for i in $(seq 1 "$workers"); do wait_ready "order-worker-$i" $((worker_from + i - 1)); done
  {
    cat <<CFG
# Written by scripts/up.sh: $apis API instances behind one URL. maxconn: a flash sale keeps thousands of
# shoppers waiting in the API's line at once (two descriptors each, within a 20,000 descriptor limit).
global
    maxconn 9000
$( [ -n "${HAPROXY_LOG:-}" ] && echo "    log $HAPROXY_LOG local0" )
defaults
    mode http
$( [ -n "${HAPROXY_LOG:-}" ] && printf '    log global\n    option httplog\n' )
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # Retries, on another instance, a request that could not be sent; and one whose instance closed its
    # connection without an answer (it died with the request), unless it is a purchase without an
    # Idempotency-Key: a keyed one is the same purchase however often it is sent, and is sent again at once,
    # before the instance that died with it loses its line's place to later arrivals. A purchase without a
    # key is never sent twice by the balancer: its shopper gets 502.
    # A request is resent only from HAProxy's buffer: it waits for a request's whole body before sending it
    # (a client that writes the headers and the body apart was sent on without a copy, and got 502).
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response
    option http-buffer-request
    # A connection to an API is closed after each answer: the API closes idle ones after 3 s
    # (server.tomcat.keep-alive-timeout), and a request sent on one it just closed would be lost.
    option http-server-close
frontend api
    bind 127.0.0.1:$api_port
$( [ -n "${HAPROXY_LOG:-}" ] && echo "    http-request capture req.hdr(Idempotency-Key) len 80" )
    http-request disable-l7-retry if METH_POST !{ req.hdr(Idempotency-Key) -m found }
    default_backend order-api
backend order-api
    balance roundrobin
    option httpchk GET /actuator/health/readiness
    http-check expect status 200
    # A busy instance answers its check late, not never: 2 s to answer, three misses in a row to be taken
    # out (a flash sale saturating both instances marked them both down at 'fall 2' with the default
    # check timeout, and the balancer answered 503 itself). A killed one refuses connections at once: three
    # refused requests take it out (observe layer4), each of them resent to another instance.
    timeout check 2s
    default-server inter 500ms fall 3 rise 2
    # Should every checked instance be out all the same (the one left after a kill, saturated by the whole
    # crowd, missed three checks: the balancer answered 8,760 purchases 503 itself in 9 s), the same instances
    # serve unchecked, as backups, all of them in turn: no 503 from the balancer while one instance lives, and
    # a dead one's refused connection is resent to the next.
    option allbackups
CFG
    for i in $(seq 1 "$apis"); do
      echo "    server order-api-$i 127.0.0.1:$((api_from + i - 1)) check observe layer4 error-limit 3 on-error mark-down"
    done
    for i in $(seq 1 "$apis"); do echo "    server order-api-$i-unchecked 127.0.0.1:$((api_from + i - 1)) backup"; done
  } >"$run_dir/haproxy.cfg"
  haproxy -c -q -f "$run_dir/haproxy.cfg"
  if [ -f "$run_dir/haproxy.pid" ] && kill -0 "$(cat "$run_dir/haproxy.pid")" 2>/dev/null; then
    kill "$(cat "$run_dir/haproxy.pid")"
    sleep 0.5
  fi
  haproxy -D -f "$run_dir/haproxy.cfg" -p "$run_dir/haproxy.pid"
  wait_balanced() {
    for _ in $(seq 1 40); do
      if curl -fsS "http://127.0.0.1:$api_port/actuator/health/readiness" >/dev/null 2>&1; then return 0; fi
      sleep 0.25
    done
    echo "[up] HAProxy on :$api_port does not answer"; exit 1
  }
  wait_balanced
  instances="HAProxy :$api_port -> order-api x$apis :$api_from.., order-worker x$workers :$worker_from.."
  echo "[up] $instances"
fi

cat <<EOT

order-api:    http://127.0.0.1:$api_port   (health: /actuator/health, metrics: /actuator/prometheus, ops console: /ops)
running:      $instances

Admin token:   $(python3 scripts/token.py --admin)
Shopper token: $(python3 scripts/token.py --user alice)

Try:
  ADMIN=\$(scripts/token.py --admin); ALICE=\$(scripts/token.py --user alice)
  curl -s -XPOST localhost:$api_port/api/v1/sales -H "Authorization: Bearer \$ADMIN" -H 'Content-Type: application/json' \\
    -d '{"sku":"demo-'\$RANDOM'","name":"Demo","priceCents":999,"stock":100,"perUserLimit":2,"startsAt":"2020-01-01T00:00:00Z","endsAt":"2100-01-01T00:00:00Z"}'
  curl -s -XPOST localhost:$api_port/api/v1/sales/1/orders -H "Authorization: Bearer \$ALICE" -H 'Content-Type: application/json' -d '{"quantity":1}'
Stop: scripts/down.sh
EOT
