#!/bin/bash
# The flash-sale drill's full shape (SYNC, S = 1,000, 50,000 shoppers, 70 % keyed, its cost and line-cost
# steps) run again on a fresh stack per run, to read the line answer's p99 against ping's over several runs.
#   docs/results/bench/line-p99-20261207/repeat.sh R1 R2 R3
source "$(dirname "$0")/line-cost.sh"
for run in "$@"; do
  fresh_stack "$run"
  load-tests/run.sh flash-sale --no-stack --warmup 150 --knee-rates "" --shapes step --modes SYNC \
    --out /tmp/lp/out-$run > /tmp/lp/$run.log 2>&1
  cp /tmp/lp/out-$run/summary.md "$here/$run.md" 2>/dev/null
  echo "== $run at $(git rev-parse --short HEAD)"; grep -E "line answer|cost:" /tmp/lp/$run.log
done
scripts/down.sh >/dev/null 2>&1
