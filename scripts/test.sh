#!/usr/bin/env bash
# Runs every test from nothing: local services up (installed if missing), then the Maven build with
# unit and integration tests (JDK 25, formatter check), then schemathesis against the built API and its
# published OpenAPI document (bounded in time), then the ops console in a real browser and two APIs and
# two workers behind HAProxy against the running apps, then the offline deployment validation and its
# own tests, and the seeds drill's report on a recorded run. Everything runs in the local profile: the
# committed secrets are refused anywhere else.
#
#   scripts/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/java-env.sh

echo "== documentation: README within 300 lines, every relative link resolves"
python3 scripts/check-links.py

echo "== services"
scripts/services.sh up

echo "== maven verify (unit + integration tests) on $(java -version 2>&1 | head -n1)"
SPRING_PROFILES_ACTIVE=local scripts/mvn -B verify

echo "== schemathesis (OpenAPI contract fuzzing: no 5xx, every response conforms)"
scripts/schemathesis.sh

echo "== ops console in headless Chromium against the running apps (and the metric scrapes)"
ops-tests/run.sh

echo "== two APIs and two workers behind HAProxy: crowd, mode flips, one API killed"
ops-tests/run-fleet.sh

echo "== deployment validation (compose, kustomize overlays, CRDs, config mapping)"
FLASHSALE_REQUIRE_SCRAPE=1 scripts/validate-deploy.sh  # metric names against the scrapes just taken
python3 -m pytest -q deploy-tests scripts/test_check_links.py

echo "== the seeds drill's report (tables, charts, AUTO check) on a recorded run, no services"
load-tests/test-seeds-report.sh
