#!/usr/bin/env bash
# Runs every test from nothing: local services up (installed if missing), then the Maven build with
# unit and integration tests (JDK 25, formatter check), then the ops console in a real browser against
# the running apps, then the offline deployment validation and its own tests.
#
#   scripts/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/java-env.sh

echo "== services"
scripts/services.sh up

echo "== maven verify (unit + integration tests) on $(java -version 2>&1 | head -n1)"
scripts/mvn -B verify

echo "== ops console in headless Chromium against the running apps (and the metric scrapes)"
ops-tests/run.sh

echo "== two APIs and two workers behind HAProxy: crowd, mode flips, one API killed"
ops-tests/run-fleet.sh

echo "== deployment validation (compose, kustomize overlays, CRDs, config mapping)"
FLASHSALE_REQUIRE_SCRAPE=1 scripts/validate-deploy.sh  # metric names against the scrapes just taken
python3 -m pytest -q deploy-tests
