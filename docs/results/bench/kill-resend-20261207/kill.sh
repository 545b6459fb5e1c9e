#!/bin/bash
# Issue 37: two APIs behind HAProxy, the second SIGKILLed 1 s after the crowd's first place, with the
# balancer resending keyed purchases whose instance died with them (decision 0027) and the place blocks of
# this change. As ../kill-repeats-20261207/kill.sh, and each run's losers among the first arrivals at the
# balancer are read from its request log (../line-blocks-20261207/edge-losers.py).
#   kill.sh SYNC-1 ASYNC-1 AUTO-1 ...   (MODE-label; the outputs are MODE-label.md and .losers beside this)
set -u
here=$(dirname "$(readlink -f "$0")")
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
  cp "$out"/summary.md "$here/$run.md" 2>/dev/null || echo "$run: no summary (see $out/run.log)"
  python3 "$here/../line-blocks-20261207/edge-losers.py" "$out/steps/sale-$mode-step" >"$here/$run.losers" 2>&1
  grep -h " step | \|keyed winners" "$here/$run.md" 2>/dev/null | cut -c1-200 | sed "s/^/$run: /"
  sed "s/^/$run: /" "$here/$run.losers"
done
scripts/down.sh >/dev/null 2>&1
