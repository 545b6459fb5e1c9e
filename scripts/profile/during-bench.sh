#!/usr/bin/env bash
# One bench run at a fixed rate (PING, SYNC, ASYNC: 60 s steps after a 150 s warm-up), profiling during each
# step: the API's CPU for 20 s (then its allocations, in SYNC and ASYNC), the worker's CPU in ASYNC, and Redis
# with perf in SYNC. Needs a running stack (scripts/up.sh). The profilers cost CPU themselves: read the
# bench's CPU tables from a run without them.
#
#   scripts/profile/during-bench.sh RATE OUTDIR TAG      e.g. scripts/profile/during-bench.sh 500 /tmp/prof A
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: scripts/profile/during-bench.sh RATE OUTDIR TAG" >&2; exit 2; }
rate=$1 out=$(realpath -m "$2") tag=$3
cd "$(dirname "$0")/../.."
mkdir -p "$out"
load-tests/run.sh bench --no-stack --warmup 150 --step-seconds 60 --modes SYNC,ASYNC \
  --ramp PING=$rate:$rate:1 --ramp SYNC=$rate:$rate:1 --ramp ASYNC=$rate:$rate:1 --refine 0 --overload "" \
  --flash 0 --drain-seconds 20 --out "$out/bench" > "$out/bench.log" 2>&1 &
bench=$!
api=$(cat .run/order-api.pid) worker=$(cat .run/order-worker.pid)
for mode in PING SYNC ASYNC; do
  # the step's folder appears as its k6 starts (its log is written only at the end)
  until log=$(ls -d "$out"/bench/steps/*-$mode-$rate 2>/dev/null | head -1) && [ -n "$log" ]; do
    kill -0 $bench 2>/dev/null || { echo "bench ended early"; exit 1; }
    sleep 1
  done
  sleep 8
  m=$(echo $mode | tr A-Z a-z)
  if [ $mode = SYNC ]; then  # Redis itself: where its CPU per call goes (perf, the kernel included)
    redis=$(redis-cli -p "${REDIS_PORT:-6379}" info server | tr -d '\r' | sed -n 's/^process_id://p')
    perf record -F 999 -g -p "$redis" -o "$out/redis-sync.perf.data" -- sleep 20 \
      > /dev/null 2>&1 &
  fi
  if [ $mode = ASYNC ]; then
    scripts/profile/jvm.sh "$worker" 20 "$out/worker-$m-$rate-$tag.collapsed" > "$out/worker-$m-$rate-$tag.breakdown.txt" 2>&1 &
    wp=$!
  fi
  scripts/profile/jvm.sh "$api" 20 "$out/api-$m-$rate-$tag.collapsed" > "$out/api-$m-$rate-$tag.breakdown.txt" 2>&1
  if [ $mode = ASYNC ]; then wait $wp; fi
  if [ $mode != PING ]; then
    scripts/profile/jvm.sh "$api" 20 "$out/api-$m-$rate-$tag-alloc.collapsed" alloc > /dev/null 2>&1
  fi
done
while kill -0 $bench 2>/dev/null; do sleep 2; done
echo "done: $out"
