#!/bin/bash
# The line-cost steps twice on one fresh stack: is a first attempt's tail the JVM's or the sale's first
# seconds? The second run meets warm code and a new sale.
#   docs/results/bench/line-p99-20261207/twice.sh T
source "$(dirname "$0")/line-cost.sh"
name=$1
fresh_stack "$name"
for run in 1 2; do
  line_cost "$name$run"
  cp /tmp/lp/out-$name$run/summary.md "$here/twice-$name$run.md" 2>/dev/null
  echo "== $name run $run on one stack"; grep -E "line answer,|cost:" /tmp/lp/$name$run.log
done
scripts/down.sh >/dev/null 2>&1
