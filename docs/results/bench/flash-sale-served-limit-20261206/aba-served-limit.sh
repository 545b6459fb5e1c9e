#!/usr/bin/env bash
# A/B/A/B of the served places' limit: SYNC step crowds, S = 1,000, 4 runs per leg on a fresh stack (the first after 60 s of warm-up)
cd "$(dirname "$0")/../../../.."  # the repository; /tmp/jar-A.jar and /tmp/jar-B.jar: each leg's order-api.jar
for leg in A1 B1 A2 B2; do
  cp /tmp/jar-${leg:0:1}.jar order-api/target/order-api.jar
  scripts/down.sh >/dev/null 2>&1; scripts/up.sh --skip-build >/dev/null 2>&1
  for i in 1 2 3 4; do
    W=0; [ $i = 1 ] && W=60
    load-tests/run.sh flash-sale --no-stack --warmup $W --knee-rates "" --shapes step --modes SYNC --cost-seconds 0 --out /tmp/aba-$leg-$i >/dev/null 2>&1
    python3 -c "
import json; v=json.load(open('/tmp/aba-$leg-$i/flash-sale.json'))['modes']['SYNC step']
print('$leg', $i, v['soldOutMs'], round(v['winnersP99']), round(v['firstArrivalsShare']*100,1), v['oversold'], v['lost'])"
  done
done
cp /tmp/jar-B.jar order-api/target/order-api.jar
scripts/down.sh >/dev/null 2>&1
