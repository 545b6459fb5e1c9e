#!/usr/bin/env bash
# The operator-side tests against the real running system: starts order-api and order-worker from their
# jars (scripts/up.sh --skip-build) on their own ports, queues and mode flag, drives the ops console in
# headless Chromium (ops-tests/test_console.py) while Debian's Prometheus scrapes both apps, saves both
# apps' /actuator/prometheus scrapes for the metric-name check of scripts/validate-deploy.sh, renders the
# dashboard's queries from that Prometheus (render_dashboard.py), and stops what it started.
#
#   ops-tests/run.sh            (after a build: scripts/test.sh runs it after mvn verify)
#
# Environment (all optional):
#   OPS_TEST_API_PORT, OPS_TEST_WORKER_PORT   ports of the stack under test (28080, 28081)
#   OPS_TEST_API_METRICS_URL, OPS_TEST_WORKER_METRICS_URL
#                      where each app's Prometheus scrape is (default: /actuator/prometheus on its port)
#   SPRING_PROFILES_ACTIVE   profile the apps run with (default: local)
#   OPS_TEST_PROMETHEUS_PORT   the Prometheus that scrapes them during the tests (29090)
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

prometheus_pid=
cleanup() {
  if [ -n "$prometheus_pid" ]; then kill "$prometheus_pid" 2>/dev/null || true; fi
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

api_metrics=${OPS_TEST_API_METRICS_URL:-http://127.0.0.1:$api_port/actuator/prometheus}
worker_metrics=${OPS_TEST_WORKER_METRICS_URL:-http://127.0.0.1:$worker_port/actuator/prometheus}

# A real Prometheus (Debian's) scrapes both apps every second during the tests, with the alert rules
# loaded: afterwards it evaluates the dashboard's queries (render_dashboard.py).
prometheus_port=${OPS_TEST_PROMETHEUS_PORT:-29090}
rm -rf "$results/prometheus-data"
python3 - "$api_metrics" "$worker_metrics" "$root/monitoring/rules.yml" >"$results/prometheus.yml" <<'PY'
import json, sys, urllib.parse
jobs = []
for job, url in (("order-api", sys.argv[1]), ("order-worker", sys.argv[2])):
    u = urllib.parse.urlsplit(url)
    jobs.append({"job_name": job, "scheme": u.scheme, "metrics_path": u.path, "static_configs": [{"targets": [u.netloc]}]})
print(json.dumps({"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                  "rule_files": [sys.argv[3]], "scrape_configs": jobs}))
PY
prometheus --config.file="$results/prometheus.yml" --storage.tsdb.path="$results/prometheus-data" \
  --web.listen-address="127.0.0.1:$prometheus_port" >"$results/prometheus.log" 2>&1 &
prometheus_pid=$!
started=$(date +%s)

export OPS_TEST_BASE_URL=http://127.0.0.1:$api_port
export OPS_TEST_RESULTS=$results
status=0
python3 -m pytest -q -p no:cacheprovider ops-tests || status=$?

# The scrapes the metric-name check reads (taken after the tests, so the purchase, mode and drain
# series exist).
curl -fsS "$api_metrics" >"$results/scrape-order-api.prom"
curl -fsS "$worker_metrics" >"$results/scrape-order-worker.prom"
echo "[ops-tests] scrapes saved: $results/scrape-order-api.prom, $results/scrape-order-worker.prom"

sleep 3
python3 ops-tests/render_dashboard.py "http://127.0.0.1:$prometheus_port" "$started" "$(date +%s)" \
  "$results/dashboard.png" || status=1
exit $status
