#!/bin/bash
# The line-cost steps twice on one fresh stack: is a first attempt's tail the JVM's or the sale's first
# seconds? The second run meets warm code and a new sale.
#   docs/results/bench/line-p99-20261207/twice.sh T
set -u
cd "$(dirname "$0")/../../../.."
here=docs/results/bench/line-p99-20261207
name=$1
scripts/down.sh >/dev/null 2>&1
scripts/up.sh --skip-build > /tmp/lp/up-$name.log 2>&1
for run in 1 2; do
  load-tests/run.sh flash-sale --no-stack --warmup 90 --knee-rates "" --shapes step --modes SYNC --stock 200 \
    --per-unit 10 --cost-seconds 20 --line-cost --keyed 0.7 --out /tmp/lp/out-$name$run > /tmp/lp/$name$run.log 2>&1
  cp /tmp/lp/out-$name$run/summary.md "$here/twice-$name$run.md" 2>/dev/null
  echo "== $name run $run on one stack"; grep -E "line answer,|cost:" /tmp/lp/$name$run.log
done
scripts/down.sh >/dev/null 2>&1
