#!/usr/bin/env bash
# Several instances on one box: scripts/up.sh --api 2 --workers 2 behind HAProxy on their own ports,
# queues and mode flag, then ops-tests/fleet_check.py drives a crowd through the balancer while it flips
# the mode through one instance and kills the other API instance. Stops what it started.
#
#   ops-tests/run-fleet.sh      (after a build)
#
# Environment (optional): OPS_FLEET_PORT (balancer, 28180), OPS_FLEET_API_FROM (28181),
# OPS_FLEET_WORKER_FROM (28281), SPRING_PROFILES_ACTIVE (local), OPS_TEST_RESULTS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
results=${OPS_TEST_RESULTS:-$root/ops-tests/results}
lb_port=${OPS_FLEET_PORT:-28180}
api_from=${OPS_FLEET_API_FROM:-28181}
worker_from=${OPS_FLEET_WORKER_FROM:-28281}
mkdir -p "$results"
scripts/ops-tools.sh

source ops-tests/isolated-env.sh fleet
export FLASHSALE_RUN_DIR=$results/fleet
# The killed instance's reservations are settled by the reconciler once its lease lapsed (5 s after API 1
# beat on: SYNC ones given back, unpublished ASYNC ones published for a worker); the handoff timeout,
# shortened from 5 min, bounds anything else left to a worker, to keep the check short.
export APP_RECONCILER_HANDOFF_TIMEOUT=30s
trap 'scripts/down.sh || true; delete_isolated_topology' EXIT

SERVER_PORT=$lb_port API_PORTS_FROM=$api_from WORKER_PORTS_FROM=$worker_from \
  scripts/up.sh --skip-build --api 2 --workers 2 >"$results/fleet-up.log" 2>&1 || { cat "$results/fleet-up.log"; exit 1; }

python3 ops-tests/fleet_check.py "http://127.0.0.1:$lb_port" "http://127.0.0.1:$api_from" \
  "http://127.0.0.1:$((api_from + 1))" "$FLASHSALE_RUN_DIR"
