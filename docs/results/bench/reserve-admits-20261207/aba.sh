#!/bin/bash
# (Copied from records-hash-20261207 for issue 41's admission A/B.) Legs of both paths: each a fresh stack with the leg's jars, the bench's PING, SYNC and ASYNC steps at 700/s,
# Redis's work per order counted in the SYNC and the ASYNC step (scripts/profile/redis-per-order.sh).
#   aba.sh E1=E D1=D E2=E D2=D   (jars /tmp/jars/LEG-api.jar and LEG-worker.jar)
cd /work/main
out=${OUT:-/tmp/aba-records}; mkdir -p $out
for leg in "$@"; do
  name=${leg%%=*}; jars=${leg#*=}
  scripts/down.sh >/dev/null 2>&1
  cp /tmp/jars/$jars-api.jar order-api/target/order-api.jar
  cp /tmp/jars/$jars-worker.jar order-worker/target/order-worker.jar
  scripts/up.sh --skip-build > $out/up-$name.log 2>&1
  rm -rf $out/$name
  (scripts/profile/redis-per-order.sh $out/$name/bench SYNC 700 > $out/$name-redis-sync.txt 2>&1
   scripts/profile/redis-per-order.sh $out/$name/bench ASYNC 700 > $out/$name-redis-async.txt 2>&1) &
  load-tests/run.sh bench --no-stack --warmup 90 --step-seconds 30 --ramp PING=700:700:1 --ramp SYNC=700:700:1 \
    --ramp ASYNC=700:700:1 --modes SYNC,ASYNC --refine 0 --overload "" --flash 0 --drain-seconds 30 \
    --out $out/$name/bench > $out/$name.log 2>&1
  wait
  echo "== $name ($jars)"; head -2 $out/$name-redis-sync.txt; head -2 $out/$name-redis-async.txt
done
