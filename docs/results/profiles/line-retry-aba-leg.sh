#!/bin/bash
# One leg of the A/B/A in docs/results/2026-11-28-auto-sitting-line-retries.md: the API from JAR on a fresh stack, warmed up; ping, keyed retries with a place behind the front,
# ping, 20 s each at 1,500/s; the API's CPU per request from /proc (utime + stime).
set -e
[ $# -eq 2 ] || { echo 'usage: line-retry-aba-leg.sh LEG JAR' >&2; exit 2; }
leg=$1 jar=$(realpath "$2")
cd "$(dirname "$0")/../../.."
scripts/down.sh >/dev/null 2>&1 || true
cp "$jar" order-api/target/order-api.jar
scripts/up.sh --skip-build >/dev/null 2>&1
pid=$(cat .run/order-api.pid); tick=$(getconf CLK_TCK)
ADMIN=$(scripts/token.py --admin); TOKEN=$(scripts/token.py --user rt-shopper)
sale=$(curl -s -XPOST localhost:8080/api/v1/sales -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
  -d '{"sku":"rt-'$leg'-'$RANDOM'","name":"rt","priceCents":999,"stock":1,"perUserLimit":1,"startsAt":"2020-01-01T00:00:00Z","endsAt":"2100-01-01T00:00:00Z"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
now=$(redis-cli TIME | head -1)
redis-cli HSET "{sale:$sale}:line" next 1 front 1 roundEnd $(( (now + 3600) * 1000 )) mark 0 markRemaining 1 givenUp 0 >/dev/null
redis-cli PEXPIRE "{sale:$sale}:line" 7200000 >/dev/null
key=rt-key-$leg
place=$(curl -s -D - -o /tmp/line-retry-first.json -XPOST localhost:8080/api/v1/sales/$sale/orders -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -H "Idempotency-Key: $key" -d '{"quantity":1}' | tr -d '\r' | awk -F': ' 'tolower($1)=="line-place"{print $2}')
grep -q BEYOND_STOCK /tmp/line-retry-first.json || { echo "first attempt: $(cat /tmp/line-retry-first.json)"; exit 1; }
k6=~/.cache/flashsale/bin/k6
run() { $k6 run -q -e TOKEN=$TOKEN -e SALE=$sale -e KEY=$key -e PLACE=$place -e KIND=$1 -e DUR=$2 docs/results/profiles/line-retry-aba.js 2>&1; }
run ping 30s >/dev/null; run retry 30s >/dev/null; run ping 30s >/dev/null; run retry 30s >/dev/null  # warm-up, 2 min
cpu() { awk '{print $14+$15}' /proc/$pid/stat; }
for kind in ping retry ping; do
  sleep 3; c0=$(cpu); out=$(run $kind 20s); c1=$(cpu)
  n=$(echo "$out" | grep -oP 'http_reqs[.: ]+\K[0-9]+' | head -1)
  p99=$(echo "$out" | grep -oP 'p\(99\)=\K[0-9.a-zµ]+' | head -1)
  codes=$(echo "$out" | grep -oP 'http_req_failed[.: ]+\K[0-9.]+%' | head -1)
  awk -v l=$leg -v k=$kind -v d=$((c1-c0)) -v r=$n -v t=$tick -v p=$p99 -v f=$codes 'BEGIN{printf "%s %-5s requests=%d api_cpu_ms_per_request=%.4f p99=%s failed(non-2xx)=%s\n", l, k, r, d*1000/t/r, p, f}'
done
