#!/bin/bash
# Issue 37: a line answer's cost in a fleet (two APIs behind HAProxy), with the place blocks as they were (A:
# a block served a window from when its call was made, and arrivals that found it spent while another took
# the next each called Redis) and as they are (B: a window from when the call returned; those arrivals wait
# for that call). One stack per run, emptied services; the jar under test is copied in place first.
#   aba.sh LABEL=JAR ...   e.g. aba.sh A2=/tmp/api-A.jar B2=/tmp/api-B.jar (output: LABEL.md beside this script)
set -u
here=$(dirname "$(readlink -f "$0")")
cd "$here/../../../.."
for run in "$@"; do
  label=${run%%=*}
  cp "${run#*=}" order-api/target/order-api.jar
  scripts/down.sh >/dev/null 2>&1
  scripts/services.sh reset >/dev/null 2>&1
  scripts/up.sh --skip-build --api 2 >/dev/null 2>&1 || { echo "$label: stack did not start"; continue; }
  out=$(mktemp -d)
  load-tests/run.sh flash-sale --no-stack --warmup 60 --knee-rates "" --shapes step --modes SYNC \
    --instances http://127.0.0.1:18081,http://127.0.0.1:18082 --cost-seconds 20 --out "$out" >"$out/run.log" 2>&1
  cp "$out"/summary.md "$here/$label.md" 2>/dev/null || echo "$label: no summary (see $out/run.log)"
  grep -h "^A line answer" "$here/$label.md" | cut -c1-260 | sed "s/^/$label: /"
done
scripts/down.sh >/dev/null 2>&1
