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
# Each stage's start, and the seconds since the run began: what CI's 15 minutes are spent on.
stage() { echo "== $* [$(date -u +%H:%M:%S), ${SECONDS} s in]"; }

stage "documentation: README within 300 lines, every relative link resolves"
python3 scripts/check-links.py

stage "services"
scripts/services.sh up

stage "maven verify (unit + integration tests) on $(java -version 2>&1 | head -n1)"
SPRING_PROFILES_ACTIVE=local scripts/mvn -B verify

stage "schemathesis (OpenAPI contract fuzzing: no 5xx, every response conforms)"
scripts/schemathesis.sh

stage "ops console in headless Chromium against the running apps (and the metric scrapes)"
ops-tests/run.sh

stage "two APIs and two workers behind HAProxy: crowd, mode flips, one API killed"
ops-tests/run-fleet.sh

stage "deployment validation (compose, kustomize overlays, CRDs, config mapping)"
FLASHSALE_REQUIRE_SCRAPE=1 scripts/validate-deploy.sh  # metric names against the scrapes just taken
# Each case runs the whole validator on its own copy (about 4 s of CPU): one process per core.
python3 -m pytest -q -n "$(nproc)" deploy-tests scripts/test_check_links.py

stage "the seeds drill's report (tables, charts, AUTO check) on a recorded run, no services"
load-tests/test-seeds-report.sh

echo "== scripts/test.sh passed in ${SECONDS} s"
