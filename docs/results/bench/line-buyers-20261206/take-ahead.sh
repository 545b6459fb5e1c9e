#!/bin/bash
# B/C legs of the line answer's cost in the drill's full shape: each leg a fresh API with the leg's jar
cd /work/main
for leg in "$@"; do
  name=${leg%%=*}; jar=${leg#*=}
  scripts/down.sh >/dev/null 2>&1
  cp /tmp/jars/$jar.jar order-api/target/order-api.jar
  scripts/up.sh --skip-build > /tmp/lc/up2-$name.log 2>&1
  load-tests/run.sh flash-sale --no-stack --warmup 90 --knee-rates "" --shapes step --modes SYNC \
     --out /tmp/lc/ab2-$name > /tmp/lc/ab2-$name.log 2>&1
  echo "== $name ($jar)"; grep -E "line answer,|cost:|sold out after" /tmp/lc/ab2-$name.log | head -5
done
cp /tmp/jars/D.jar order-api/target/order-api.jar
