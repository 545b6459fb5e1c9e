#!/bin/bash
# Issue 37: two APIs behind HAProxy, the second SIGKILLed 1 s after the crowd's first place, repeated to see
# the spread across runs. Each run on a fresh stack (emptied services), HAProxy logging each request to the
# drill (--edge-log), so that fairness is also read by arrival at the balancer.
#   kill.sh SYNC-1 ASYNC-1 AUTO-1 ...   (MODE-label; the output is MODE-label.md beside this script, or in
#                                        KILL_RESULTS; with the drill's balancer log, also MODE-label.losers:
#                                        ../line-blocks-20261207/edge-losers.py)
set -u
here=$(dirname "$(readlink -f "$0")")
results=${KILL_RESULTS:-$here}
losers=$here/../line-blocks-20261207/edge-losers.py
cd "$here/../../../.."
for run in "$@"; do
  mode=${run%%-*}
  scripts/down.sh >/dev/null 2>&1
  scripts/services.sh reset >/dev/null 2>&1
  HAPROXY_LOG=127.0.0.1:5514 scripts/up.sh --skip-build --api 2 >/dev/null 2>&1 || { echo "$run: stack did not start"; continue; }
  out=$(mktemp -d)
  load-tests/run.sh flash-sale --no-stack --warmup 60 --knee-rates "" --shapes step --modes "$mode" \
    --instances http://127.0.0.1:18081,http://127.0.0.1:18082 --kill-api 1 --edge-log 127.0.0.1:5514 \
    --cost-seconds 0 --out "$out" >"$out/run.log" 2>&1
  cp "$out"/summary.md "$results/$run.md" 2>/dev/null || echo "$run: no summary (see $out/run.log)"
  cp "$out"/run.log "$results/$run.log"
  # When the reconciler settled what the dead instance left (UTC, the worker's log), against the kill's time.
  grep -h "Reconciled held\|lapsed: \|) killed " .run/order-worker-*.log "$out/run.log" 2>/dev/null >"$results/$run.reconciler"
  grep -h " step | \|keyed winners" "$results/$run.md" 2>/dev/null | cut -c1-200 | sed "s/^/$run: /"
  if [ -f "$out/steps/sale-$mode-step/balancer.log" ]; then
    python3 "$losers" "$out/steps/sale-$mode-step" >"$results/$run.losers" 2>&1
    sed "s/^/$run: /" "$results/$run.losers"
    # Purchases HAProxy answered 503 itself, no instance being up, by second.
    grep NOSRV "$out/steps/sale-$mode-step/balancer.log" | grep ' 503 ' \
      | sed 's/.*\[[0-9]*\/[A-Za-z]*\/[0-9]*:\([0-9:]*\)\..*/\1/' | sort | uniq -c >"$results/$run.nosrv"
    echo "$run: $(awk '{n += $1} END {print n + 0}' "$results/$run.nosrv") answered 503 by the balancer itself"
  fi
done
scripts/down.sh >/dev/null 2>&1
