#!/bin/bash
# A/B/A of the line answer's cost: each leg a fresh API with the leg's jar, the flash-sale drill's line-cost steps
cd /work/main
for leg in "$@"; do
  name=${leg%%=*}; jar=${leg#*=}
  scripts/down.sh >/dev/null 2>&1
  cp /tmp/jars/$jar.jar order-api/target/order-api.jar
  scripts/up.sh --skip-build > /tmp/lc/up-$name.log 2>&1
  load-tests/run.sh flash-sale --no-stack --warmup 90 --knee-rates "" --shapes step --modes SYNC --stock 200 --per-unit 10 \
     --cost-seconds 20 --line-cost --keyed 0.7 --out /tmp/lc/out-$name > /tmp/lc/$name.log 2>&1
  echo "== $name ($jar)"; grep -E "line answer,|cost:" /tmp/lc/$name.log
done
cp /tmp/jars/B.jar order-api/target/order-api.jar
