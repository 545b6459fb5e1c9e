#!/bin/bash
cd /work/main
out=/tmp/prof-F; rm -rf $out; mkdir -p $out
pid=$(cat .run/order-api.pid)
(until ls -d $out/bench/steps/*-SYNC-700 >/dev/null 2>&1; do sleep 1; done; sleep 5; scripts/profile/jvm.sh $pid 20 $out/api-sync.collapsed > $out/prof-sync.txt 2>&1
 until ls -d $out/bench/steps/*-ASYNC-700 >/dev/null 2>&1; do sleep 1; done; sleep 5; scripts/profile/jvm.sh $pid 20 $out/api-async.collapsed > $out/prof-async.txt 2>&1) &
load-tests/run.sh bench --no-stack --warmup 90 --step-seconds 30 --ramp PING=700:700:1 --ramp SYNC=700:700:1 \
    --ramp ASYNC=700:700:1 --modes SYNC,ASYNC --refine 0 --overload "" --flash 0 --drain-seconds 30 --out $out/bench > $out/bench.log 2>&1
wait
echo DONE
