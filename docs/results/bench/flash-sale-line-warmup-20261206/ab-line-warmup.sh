#!/usr/bin/env bash
# A/B/A/B/A/B of the line's warm-up: the first SYNC step crowd (S = 1,000) on a fresh stack whose API runs its
# own warm-up (APP_WARMUP_ENABLED=true, as in Kubernetes and Compose), after the drill's 60 s warm-up; then a
# second crowd on the same JVM. /tmp/jar-A.jar and /tmp/jar-B.jar: each leg's order-api.jar.
cd "$(dirname "$0")/../../../.."  # the repository
for leg in A1 B1 A2 B2 A3 B3; do
  cp /tmp/jar-${leg:0:1}.jar order-api/target/order-api.jar
  scripts/down.sh >/dev/null 2>&1; APP_WARMUP_ENABLED=true scripts/up.sh --skip-build >/dev/null 2>&1
  warm=$(grep -ho "warm-up done in [0-9]* ms" .run/order-api.log | head -1)
  for i in 1 2; do
    W=0; [ $i = 1 ] && W=60
    load-tests/run.sh flash-sale --no-stack --warmup $W --knee-rates "" --shapes step --modes SYNC --cost-seconds 0 --out /tmp/abw-$leg-$i >/dev/null 2>&1
    python3 -c "
import json; v=json.load(open('/tmp/abw-$leg-$i/flash-sale.json'))['modes']['SYNC step']
print('$leg', $i, v['soldOutMs'], round(v['winnersP99']), round(v['firstArrivalsShare']*100,1), v['oversold'], v['lost'], '$warm')"
  done
done
cp /tmp/jar-B.jar order-api/target/order-api.jar
scripts/down.sh >/dev/null 2>&1
