#!/bin/bash
# One leg of the line-cost steps with the API's timer of a first attempt's join (flashsale.line.join, by
# where the place came from: the line's script call or a block) read every 2 s beside k6's timings.
#   docs/results/bench/line-p99-20261207/join-timer.sh J1
source "$(dirname "$0")/line-cost.sh"
name=$1
fresh_stack "$name"
( while sleep 2; do
    echo "$(date -u +%T) $(curl -fsS -m 2 http://127.0.0.1:8080/actuator/prometheus 2>/dev/null \
      | grep -E '^flashsale_line_join_seconds(_max|\{.*quantile)' | tr '\n' ' ')"
  done ) > /tmp/lp/$name-join.txt &
poller=$!
FLASH_SAMPLES=1 K6_CSV_TIME_FORMAT=unix_milli line_cost "$name"
kill $poller
scripts/down.sh >/dev/null 2>&1
{ echo "== $name"; grep -E "line answer,|cost:|line answers:" /tmp/lp/$name.log
  python3 load-tests/bench/samples_by_time.py "/tmp/lp/out-$name/steps/line-answers/samples.csv.gz" line-answers
  echo "the API's join timer every 2 s, ms (quantiles over Micrometer's decaying window; max since start):"
  python3 - /tmp/lp/$name-join.txt <<'PY'
import re, sys
for line in open(sys.argv[1]):
    values = {}
    for m in re.finditer(r'flashsale_line_join_seconds(_max)?\{[^}]*from="(\w+)"(?:,quantile="([\d.]+)")?\}\s+(\S+)', line):
        values[f"{m.group(2)}-{'max' if m.group(1) else 'p' + m.group(3)}"] = float(m.group(4)) * 1000
    if values:
        print(line.split()[0], " ".join(f"{k}={v:.1f}" for k, v in sorted(values.items())))
PY
} | tee "$here/join-$name.txt"
