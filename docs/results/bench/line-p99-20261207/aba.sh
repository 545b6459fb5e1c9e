#!/bin/bash
# A/B/A/B of a first attempt's line answer (issue 37): each leg a fresh stack with the leg's API jar, the
# flash-sale drill's line-cost steps on a sale of 200 units. A = the API before the blocks taken ahead, B = with.
#   docs/results/bench/line-p99-20261207/aba.sh A1=A B1=B A2=A B2=B   (jars in /tmp/jars/NAME.jar)
source "$(dirname "$0")/line-cost.sh"
for leg in "$@"; do
  name=${leg%%=*}; jar=${leg#*=}
  fresh_stack "$name" "$jar"
  line_cost "$name"
  cp /tmp/lp/out-$name/summary.md "$here/aba-$name.md" 2>/dev/null
  echo "== $name ($jar)"; grep -E "line answer,|cost:" /tmp/lp/$name.log
done
scripts/down.sh >/dev/null 2>&1
cp /tmp/jars/B.jar order-api/target/order-api.jar
