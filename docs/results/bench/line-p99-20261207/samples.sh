#!/bin/bash
# One leg of the line-cost steps with every request's timing kept (FLASH_SAMPLES=1: k6's CSV output per
# step), then a first attempt's latency by 250 ms of its step: is its tail at the start of the sale?
#   docs/results/bench/line-p99-20261207/samples.sh S1
set -u
cd "$(dirname "$0")/../../../.."
here=docs/results/bench/line-p99-20261207
name=$1
scripts/down.sh >/dev/null 2>&1
scripts/up.sh --skip-build > /tmp/lp/up-$name.log 2>&1
FLASH_SAMPLES=1 K6_CSV_TIME_FORMAT=unix_milli load-tests/run.sh flash-sale --no-stack --warmup 90 --knee-rates "" --shapes step --modes SYNC \
  --stock 200 --per-unit 10 --cost-seconds 20 --line-cost --keyed 0.7 --out /tmp/lp/out-$name > /tmp/lp/$name.log 2>&1
scripts/down.sh >/dev/null 2>&1
echo "== $name"; grep -E "line answer,|cost:" /tmp/lp/$name.log
for step in line-ping-1 line-answers line-retries; do
  python3 "$here/by-time.py" "/tmp/lp/out-$name/steps/$step/samples.csv.gz" "$step"
done | tee "$here/samples-$name.txt"
