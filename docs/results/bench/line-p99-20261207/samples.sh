#!/bin/bash
# One leg of the line-cost steps with every request's timing kept (FLASH_SAMPLES=1: k6's CSV output per
# step), then a first attempt's latency by 250 ms of its step: is its tail at the start of the sale?
#   docs/results/bench/line-p99-20261207/samples.sh S1
source "$(dirname "$0")/line-cost.sh"
name=$1
fresh_stack "$name"
FLASH_SAMPLES=1 K6_CSV_TIME_FORMAT=unix_milli line_cost "$name"
scripts/down.sh >/dev/null 2>&1
echo "== $name"; grep -E "line answer,|cost:" /tmp/lp/$name.log
for step in line-ping-1 line-answers line-retries; do
  python3 load-tests/bench/samples_by_time.py "/tmp/lp/out-$name/steps/$step/samples.csv.gz" "$step"
done | tee "$here/samples-$name.txt"
