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
mkdir -p "$results"

scripts/ops-tools.sh

source ops-tests/isolated-env.sh console
export FLASHSALE_RUN_DIR=$results/run

prometheus_pid=
cleanup() {
  if [ -n "$prometheus_pid" ]; then kill "$prometheus_pid" 2>/dev/null || true; fi
  scripts/down.sh || true
  delete_isolated_topology
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
