#!/bin/bash
# A/B/A of the SYNC reserve made by the write batch: each leg a fresh stack with the leg's jars, the bench's
# PING and SYNC steps at 700/s, and Redis's work per order counted in the SYNC step (scripts/profile/redis-per-order.sh).
#   aba.sh A1=A B1=B A2=A ...   (jars /tmp/jars/LEG-api.jar and LEG-worker.jar)
cd /work/main
out=${OUT:-/tmp/aba-fold}
for leg in "$@"; do
  name=${leg%%=*}; jars=${leg#*=}
  scripts/down.sh >/dev/null 2>&1
  cp /tmp/jars/$jars-api.jar order-api/target/order-api.jar
  cp /tmp/jars/$jars-worker.jar order-worker/target/order-worker.jar
  scripts/up.sh --skip-build > $out/up-$name.log 2>&1
  rm -rf $out/$name
  scripts/profile/redis-per-order.sh $out/$name/bench SYNC 700 > $out/$name-redis.txt 2>&1 &
  load-tests/run.sh bench --no-stack --warmup 90 --step-seconds 30 --ramp PING=700:700:1 --ramp SYNC=700:700:1 \
    --modes SYNC --refine 0 --overload "" --flash 0 --drain-seconds 10 --out $out/$name/bench > $out/$name.log 2>&1
  wait
  echo "== $name ($jars)"; head -3 $out/$name-redis.txt
  grep -A4 "CPU per order net of idle" $out/$name/bench/*.md 2>/dev/null | grep -E "PING|SYNC" | head -2
done
