#!/usr/bin/env bash
# The operator-side tests against the real running system: starts order-api and order-worker from their
# jars (scripts/up.sh --skip-build) on their own ports, queues and mode flag, drives the ops console in
# headless Chromium (ops-tests/test_console.py), saves both apps' /actuator/prometheus scrapes for the
# metric-name check of scripts/validate-deploy.sh, and stops what it started.
#
#   ops-tests/run.sh            (after a build: scripts/test.sh runs it after mvn verify)
#
# Environment (all optional):
#   OPS_TEST_API_PORT, OPS_TEST_WORKER_PORT   ports of the stack under test (28080, 28081)
#   OPS_TEST_API_METRICS_URL, OPS_TEST_WORKER_METRICS_URL
#                      where each app's Prometheus scrape is (default: /actuator/prometheus on its port)
#   SPRING_PROFILES_ACTIVE   profile the apps run with (default: local)
#   OPS_TEST_RESULTS   where the screenshots, scrapes and logs go (default: ops-tests/results)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

api_port=${OPS_TEST_API_PORT:-28080}
worker_port=${OPS_TEST_WORKER_PORT:-28081}
results=${OPS_TEST_RESULTS:-$root/ops-tests/results}
run=$(date +%s)-$$
mkdir -p "$results"

scripts/ops-tools.sh

# A topology and mode flag of their own: the stack under test never takes another stack's orders or
# flips another stack's mode on the shared local services.
export FLASHSALE_RUN_DIR=$results/run
export SPRING_PROFILES_ACTIVE=${SPRING_PROFILES_ACTIVE:-local}
export APP_MESSAGING_EXCHANGE=flashsale.opstest.$run.orders
export APP_MESSAGING_QUEUE=flashsale.opstest.$run.requested
export APP_MESSAGING_RETRY_EXCHANGE=flashsale.opstest.$run.retry
export APP_MESSAGING_RETRY_QUEUE=flashsale.opstest.$run.retry
export APP_MESSAGING_DEAD_LETTER_EXCHANGE=flashsale.opstest.$run.dlx
export APP_MESSAGING_DEAD_LETTER_QUEUE=flashsale.opstest.$run.dead
export APP_MODE_REDISKEY=flashsale:opstest:$run:mode
export JAVA_OPTS=${JAVA_OPTS:--Xmx384m -XX:TieredStopAtLevel=1}
export UP_READY_TIMEOUT=${UP_READY_TIMEOUT:-240}

cleanup() {
  scripts/down.sh || true
  python3 - "$APP_MESSAGING_QUEUE" "$APP_MESSAGING_RETRY_QUEUE" "$APP_MESSAGING_DEAD_LETTER_QUEUE" \
    "$APP_MESSAGING_EXCHANGE" "$APP_MESSAGING_RETRY_EXCHANGE" "$APP_MESSAGING_DEAD_LETTER_EXCHANGE" <<'PY' || true
import base64, sys, urllib.request
auth = base64.b64encode(b"flashsale:flashsale").decode()
for i, name in enumerate(sys.argv[1:]):
    kind = "queues" if i < 3 else "exchanges"
    req = urllib.request.Request(f"http://127.0.0.1:15672/api/{kind}/%2F/{name}", method="DELETE",
                                 headers={"Authorization": "Basic " + auth})
    try:
        urllib.request.urlopen(req, timeout=5)
    except Exception:
        pass
PY
}
trap cleanup EXIT

SERVER_PORT=$api_port WORKER_PORT=$worker_port scripts/up.sh --skip-build >"$results/up.log" 2>&1 \
  || { cat "$results/up.log"; exit 1; }

export OPS_TEST_BASE_URL=http://127.0.0.1:$api_port
export OPS_TEST_RESULTS=$results
status=0
python3 -m pytest -q -p no:cacheprovider ops-tests || status=$?

# The scrapes the metric-name check reads (taken after the tests, so the purchase, mode and drain
# series exist).
curl -fsS "${OPS_TEST_API_METRICS_URL:-http://127.0.0.1:$api_port/actuator/prometheus}" >"$results/scrape-order-api.prom"
curl -fsS "${OPS_TEST_WORKER_METRICS_URL:-http://127.0.0.1:$worker_port/actuator/prometheus}" >"$results/scrape-order-worker.prom"
echo "[ops-tests] scrapes saved: $results/scrape-order-api.prom, $results/scrape-order-worker.prom"
exit $status
