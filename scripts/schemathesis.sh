#!/usr/bin/env bash
# Fuzzes the running API against its published OpenAPI document (order-api/openapi.json, the one the
# OpenApiIntegrationTests keep equal to /v3/api-docs) with schemathesis: no 5xx, and every response must
# conform to the document (status, content type, schema). Bounded in time. Needs the built jar
# (mvn verify) and the local services; starts its own API on a free port, in the local profile, on queue
# names and a mode key of its own, and stops it again.
#
# Its API has a database (flashsale_schemathesis) and a Redis database (1) of its own: the fuzzer draws
# sale ids at random, and on the shared ones it found other runs' open sales whose Redis state a test
# deleted, which answer the designed 503 SALE_REBUILDING until rebuilt. One more designed 5xx is switched
# off: after a rebuild (POST .../admin/sales/{id}/rebuild, which the stateful phase links to purchases of
# the same sale) purchases answer 503 SALE_REBUILDING for app.rebuild.freeze, so orders still in flight land
# in Postgres first. The fuzzer sends one request at a time, so nothing is ever in flight: its API runs
# with that freeze at 0, and any 5xx left is a defect.
#
#   scripts/schemathesis.sh [--max-time SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/java-env.sh
max_time=${1:-}
[ "$max_time" = --max-time ] && max_time=$2 || max_time=${SCHEMATHESIS_MAX_TIME:-45}

tools=${FLASHSALE_TOOLS_DIR:-$HOME/.cache/flashsale}
venv=$tools/schemathesis-venv
version=4.32.5
# Read whole, not through grep -q: grep -q exits at the first match, pip dies of SIGPIPE, and under pipefail
# the installed version looked missing, so every run reinstalled it.
installed=$([ -x "$venv/bin/pip" ] && "$venv/bin/pip" show schemathesis 2>/dev/null | sed -n 's/^Version: //p' || true)
if [ ! -x "$venv/bin/st" ] || [ "$installed" != "$version" ]; then
  echo "[schemathesis] installing schemathesis $version into $venv"
  mkdir -p "$tools"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "schemathesis==$version"
fi

db=flashsale_schemathesis
DB_NAME=$db scripts/services.sh up >/dev/null # creates the database if it is missing

jar=order-api/target/order-api.jar
[ -f "$jar" ] || { echo "[schemathesis] $jar is missing: run mvn verify (scripts/test.sh) first" >&2; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
out=$root/order-api/target/schemathesis
mkdir -p "$out"
prefix=flashsale.schemathesis
DB_NAME=$db SPRING_PROFILES_ACTIVE=local java -Xmx512m -XX:TieredStopAtLevel=1 -jar "$jar" \
  --server.port="$port" \
  --app.mode.redis-key=flashsale:schemathesis:mode \
  --app.rebuild.freeze=0s --spring.data.redis.database=1 \
  --app.messaging.exchange=$prefix.orders --app.messaging.queue=$prefix.requested \
  --app.messaging.retry-exchange=$prefix.retry --app.messaging.retry-queue=$prefix.retry \
  --app.messaging.dead-letter-exchange=$prefix.dlx --app.messaging.dead-letter-queue=$prefix.dead \
  >"$out/api.log" 2>&1 &
api=$!
trap 'kill $api 2>/dev/null; wait $api 2>/dev/null || true' EXIT

for _ in $(seq 1 240); do
  curl -fsS "http://127.0.0.1:$port/actuator/health/readiness" >/dev/null 2>&1 && break
  kill -0 $api 2>/dev/null || { echo "[schemathesis] the API exited; see $out/api.log" >&2; tail -n 30 "$out/api.log"; exit 1; }
  sleep 0.5
done

# An admin token may call every operation (a shopper's would only see 403s on the admin ones).
admin=$(python3 scripts/token.py --admin --ttl 3600)
echo "[schemathesis] fuzzing http://127.0.0.1:$port against order-api/openapi.json for at most ${max_time}s"
"$venv/bin/st" --no-color run order-api/openapi.json \
  --url "http://127.0.0.1:$port" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance \
  --header "Authorization: Bearer $admin" \
  --max-examples 25 --max-time "$max_time" --seed 13 --workers 1 \
  --request-timeout 15 \
  --report junit --report-dir "$out"
