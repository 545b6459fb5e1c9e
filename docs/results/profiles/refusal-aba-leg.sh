#!/bin/bash
# usage: leg.sh NAME JAR — restart the stack on JAR, warm 60 s of refusals, then profile ping and refusals (25 s each at 1500/s)
set -e
cd /work/main
name=$1; jar=$2
cp order-api/target/order-api.jar /tmp/prof/order-api-current.jar 2>/dev/null || true
scripts/down.sh > /dev/null 2>&1 || true
cp "$jar" order-api/target/order-api.jar
scripts/up.sh --skip-build > /tmp/prof/$name-up.log 2>&1
KIND=purchase RATE=1500 SECONDS=60 SALE_ID=245 EXPECT=409 TOKENS=/tmp/prof/tokens.json BASE_URL=http://127.0.0.1:8080 \
  RUN_ID=warm-$name OFFSET=0 SUMMARY=/tmp/prof/$name-warm.json ~/.cache/flashsale/bin/k6 run -q load-tests/drills/flash-sale.js > /dev/null 2>&1
KIND=ping RATE=1500 SECONDS=30 SALE_ID=245 TOKENS=/tmp/prof/tokens.json BASE_URL=http://127.0.0.1:8080 RUN_ID=p-$name OFFSET=0 \
  SUMMARY=/tmp/prof/$name-ping.json ~/.cache/flashsale/bin/k6 run -q load-tests/drills/flash-sale.js > /dev/null 2>&1 &
sleep 3; scripts/profile.sh $(cat .run/order-api.pid) 25 /tmp/prof/$name-ping.collapsed > /tmp/prof/$name-ping.breakdown 2>&1; wait
KIND=purchase RATE=1500 SECONDS=30 SALE_ID=245 EXPECT=409 TOKENS=/tmp/prof/tokens.json BASE_URL=http://127.0.0.1:8080 \
  RUN_ID=r-$name OFFSET=20000 SUMMARY=/tmp/prof/$name-refusal.json ~/.cache/flashsale/bin/k6 run -q load-tests/drills/flash-sale.js > /dev/null 2>&1 &
sleep 3; scripts/profile.sh $(cat .run/order-api.pid) 25 /tmp/prof/$name-refusal.collapsed > /tmp/prof/$name-refusal.breakdown 2>&1; wait
p=$(head -2 /tmp/prof/$name-ping.breakdown | tail -1 | grep -o '[0-9]* samples' | cut -d' ' -f1)
r=$(head -2 /tmp/prof/$name-refusal.breakdown | tail -1 | grep -o '[0-9]* samples' | cut -d' ' -f1)
echo "$name: API CPU samples (1 ms each) in 25 s at 1500/s: ping $p, refusal $r, ratio $(python3 -c "print(round($r/$p,3))")"
