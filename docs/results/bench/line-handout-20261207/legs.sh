#!/bin/bash
# Line-cost legs (line-p99-20261207/line-cost.sh: SYNC, a sale of 200 units, its line-cost steps), each on a
# fresh stack with the API jar /tmp/jars/JAR.jar: A = 44a44f6; B = the next block sized for the arrivals
# waiting too (tried, not kept); C = waiters handed their places by the call they waited for. With
# --samples, k6 keeps every request's timing and the API's join timer and virtual-thread backlog are read
# every second (they inflate every p99, ping's too); without, the drill's shape as the results pages read it.
#   docs/results/bench/line-handout-20261207/legs.sh [--samples] NAME=JAR ...
source "$(dirname "$0")/../line-p99-20261207/line-cost.sh"
out=docs/results/bench/line-handout-20261207
samples=no
if [ "${1:-}" = --samples ]; then samples=yes; shift; fi
for leg in "$@"; do
  name=${leg%%=*} jar=${leg#*=}
  fresh_stack "$name" "$jar"
  if [ $samples = yes ]; then
    ( while sleep 1; do
        echo "$(date -u +%T) $(curl -fsS -m 1 http://127.0.0.1:8080/actuator/prometheus 2>/dev/null \
          | grep -E '^(flashsale_line_join_seconds\{.*quantile|jvm_threads_virtual_queued)' | tr '\n' ' ')"
      done ) > "/tmp/lp/$name-poll.txt" &
    poller=$!
    FLASH_SAMPLES=1 K6_CSV_TIME_FORMAT=unix_milli line_cost "$name"
    kill $poller
  else
    line_cost "$name"
  fi
  scripts/down.sh >/dev/null 2>&1
  { echo "== $name ($jar)"; grep -E "line answer,|cost:" "/tmp/lp/$name.log"
    if [ $samples = yes ]; then
      python3 load-tests/bench/samples_by_time.py "/tmp/lp/out-$name/steps/line-answers/samples.csv.gz" line-answers | sed -n 1p
      echo "the API's join timer and virtual-thread backlog, when they changed:"
      python3 - "/tmp/lp/$name-poll.txt" <<'PY'
import re, sys
last = None
for line in open(sys.argv[1]):
    v = {f"{m[0]}-p{m[1]}": float(m[2]) * 1000 for m in
         re.findall(r'flashsale_line_join_seconds\{[^}]*from="(\w+)",quantile="([\d.]+)"\}\s+(\S+)', line)}
    q = re.search(r'jvm_threads_virtual_queued\S*\s+(\S+)', line)
    text = " ".join(f"{k}={x:.1f}" for k, x in sorted(v.items()))
    if v and text != last:
        print(line.split()[0], f"queued={q.group(1) if q else '-'}", text)
        last = text
PY
    fi
  } | tee -a "$out/legs.out"
done
