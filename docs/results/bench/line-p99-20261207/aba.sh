#!/bin/bash
# A/B/A/B of a first attempt's line answer (issue 37): each leg a fresh stack with the leg's API jar, the
# flash-sale drill's line-cost steps on a sale of 200 units. A = the API before the blocks taken ahead, B = with.
#   docs/results/bench/line-p99-20261207/aba.sh A1=A B1=B A2=A B2=B   (jars in /tmp/jars/NAME.jar)
set -u
cd "$(dirname "$0")/../../../.."
here=docs/results/bench/line-p99-20261207
mkdir -p /tmp/lp
for leg in "$@"; do
  name=${leg%%=*}; jar=${leg#*=}
  scripts/down.sh >/dev/null 2>&1
  cp /tmp/jars/$jar.jar order-api/target/order-api.jar
  scripts/up.sh --skip-build > /tmp/lp/up-$name.log 2>&1
  load-tests/run.sh flash-sale --no-stack --warmup 90 --knee-rates "" --shapes step --modes SYNC --stock 200 \
    --per-unit 10 --cost-seconds 20 --line-cost --keyed 0.7 --out /tmp/lp/out-$name > /tmp/lp/$name.log 2>&1
  cp /tmp/lp/out-$name/summary.md "$here/aba-$name.md" 2>/dev/null
  echo "== $name ($jar)"; grep -E "line answer,|cost:" /tmp/lp/$name.log
done
scripts/down.sh >/dev/null 2>&1
cp /tmp/jars/B.jar order-api/target/order-api.jar
