#!/usr/bin/env bash
# Runs every test from nothing: local services up (installed if missing), then the Maven build with
# unit and integration tests (JDK 25, formatter check), the integration tests of the redis-cluster subset
# again on a local Redis Cluster, then schemathesis against the built API and its
# published OpenAPI document (bounded in time), then the ops console in a real browser and two APIs and
# two workers behind HAProxy against the running apps, then the offline deployment validation against the
# console's metric scrapes. Beside Maven, at the lowest priority: the deployment validator's own tests and
# the seeds drill's report on a recorded run. Everything runs in the local profile: the committed secrets
# are refused anywhere else.
#
#   scripts/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/java-env.sh
# Each stage's start, and the seconds since the run began: what CI's 15 minutes are spent on.
stage() { echo "== $* [$(date -u +%H:%M:%S), ${SECONDS} s in]"; }

stage "documentation: README.md within 300 lines, every link and cited section resolves"
python3 scripts/check-links.py

stage "services"
scripts/services.sh up --pooler --cluster

# The checks that need no services and no build (the deployment validator's own tests, the seeds report's
# self-test) run beside Maven, at the lowest CPU priority: they take the cycles the integration tests leave
# idle while they wait (about 190 s of CPU that ran after Maven before), and the integration tests keep
# the CPU whenever they want it. Their output is printed, and judged, after the console.
side_log=$(mktemp)
no_scrapes=$(mktemp -d)  # the console writes the scrapes meanwhile: these checks read none
side() {
  # The validator once first: it installs its tools (pip, go install) before the cases run it in parallel.
  export FLASHSALE_METRICS_SCRAPE_DIR=$no_scrapes
  nice -n 19 scripts/validate-deploy.sh >/dev/null &&
    # Each case runs the whole validator on its own copy: one process per core.
    nice -n 19 python3 -m pytest -q -n "$(nproc)" deploy-tests scripts/test_check_links.py scripts/pylib &&
    nice -n 19 load-tests/test-seeds-report.sh
}
side >"$side_log" 2>&1 &
side_pid=$!
trap 'kill "$side_pid" 2>/dev/null || true; rm -rf "$no_scrapes"' EXIT

stage "maven verify (unit + integration tests) on $(java -version 2>&1 | head -n1)"
SPRING_PROFILES_ACTIVE=local scripts/mvn -B verify

# The integration tests tagged redis-cluster once more, on the local Redis Cluster: every script, the rebuild
# and its watch, the reconciler's reads, the mode flag and the pipelines with the keys on three masters
# (docs/testing.md#the-redis-cluster-subset).
stage "maven verify -Predis-cluster (the redis-cluster subset on a cluster of three masters)"
SPRING_PROFILES_ACTIVE=local scripts/mvn -B -Predis-cluster verify

# The apps' AOT caches for the stacks the next stages start (scripts/up.sh uses them: each start takes half
# the time), trained beside schemathesis; a failed training only means slower starts.
scripts/aot-cache.sh >"$root/order-api/target/aot-cache.log" 2>&1 &
aot_pid=$!

stage "schemathesis (OpenAPI contract fuzzing: no 5xx, every response conforms)"
scripts/schemathesis.sh

wait "$aot_pid" || echo "[test] the AOT caches were not built (the apps start from their jars): $(tail -n 3 "$root/order-api/target/aot-cache.log")"

stage "ops console in headless Chromium against the running apps (and the metric scrapes)"
ops-tests/run.sh

stage "two APIs and two workers behind HAProxy: crowd, mode flips, one API killed"
ops-tests/run-fleet.sh

stage "deployment validation (compose, kustomize overlays, CRDs, config mapping)"
FLASHSALE_REQUIRE_SCRAPE=1 scripts/validate-deploy.sh  # metric names against the scrapes just taken

stage "beside Maven: the deployment validator's tests, the seeds drill's report on a recorded run"
side_status=0
wait "$side_pid" || side_status=$?
cat "$side_log"
rm -f "$side_log"
[ "$side_status" = 0 ] || { echo "== the checks beside Maven failed (exit $side_status)"; exit 1; }

echo "== scripts/test.sh passed in ${SECONDS} s"
