#!/usr/bin/env bash
# Builds and runs the whole system on this machine: services up, order-api and order-worker started.
# Prints the API URL and sample tokens. Stop with scripts/down.sh.
#
#   scripts/up.sh [--skip-build]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/java-env.sh
run_dir=${FLASHSALE_RUN_DIR:-$root/.run}
mkdir -p "$run_dir"
api_port=${SERVER_PORT:-8080}
worker_port=${WORKER_PORT:-8081}
ready_timeout=${UP_READY_TIMEOUT:-60}  # seconds per app; a loaded 2-core box can need more

scripts/services.sh up

if [ "${1:-}" != "--skip-build" ] || [ ! -f order-api/target/order-api.jar ]; then
  echo "[up] building (mvn package, tests skipped: scripts/test.sh runs them)"
  scripts/mvn -B -q -DskipTests package
fi

start() { # name port jar
  local name=$1 port=$2 jar=$3
  if [ -f "$run_dir/$name.pid" ] && kill -0 "$(cat "$run_dir/$name.pid")" 2>/dev/null; then
    echo "[up] $name already running (pid $(cat "$run_dir/$name.pid"))"
    return
  fi
  echo "[up] starting $name on :$port (log: $run_dir/$name.log)"
  SERVER_PORT=$port nohup java ${JAVA_OPTS:--XX:+UseZGC -Xmx1g} -jar "$jar" >"$run_dir/$name.log" 2>&1 &
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
start order-api "$api_port" order-api/target/order-api.jar
wait_ready order-api "$api_port"
start order-worker "$worker_port" order-worker/target/order-worker.jar
wait_ready order-worker "$worker_port"

cat <<EOT

order-api:    http://127.0.0.1:$api_port   (health: /actuator/health, metrics: /actuator/prometheus)
order-worker: http://127.0.0.1:$worker_port (health only)

Admin token:   $(python3 scripts/token.py --admin)
Shopper token: $(python3 scripts/token.py --user alice)

Try:
  ADMIN=\$(scripts/token.py --admin); ALICE=\$(scripts/token.py --user alice)
  curl -s -XPOST localhost:$api_port/api/v1/sales -H "Authorization: Bearer \$ADMIN" -H 'Content-Type: application/json' \\
    -d '{"sku":"demo-'\$RANDOM'","name":"Demo","priceCents":999,"stock":100,"perUserLimit":2,"startsAt":"2020-01-01T00:00:00Z","endsAt":"2100-01-01T00:00:00Z"}'
  curl -s -XPOST localhost:$api_port/api/v1/sales/1/orders -H "Authorization: Bearer \$ALICE" -H 'Content-Type: application/json' -d '{"quantity":1}'
Stop: scripts/down.sh
EOT
