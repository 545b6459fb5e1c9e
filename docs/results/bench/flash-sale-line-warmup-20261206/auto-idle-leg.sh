#!/usr/bin/env bash
# One leg: JAR on a fresh stack, the drill's 60 s warm-up, then 3 AUTO step crowds; AUTO's capacity gauges every second.
leg=$1 jar=$2 stamp=$(date +%H%M%S)
cd /work/main
cp $jar order-api/target/order-api.jar
scripts/down.sh >/dev/null 2>&1; scripts/up.sh --skip-build >/dev/null 2>&1
python3 docs/results/bench/flash-sale-line-warmup-20261206/autocap.py http://127.0.0.1:8080/actuator/prometheus 900 /tmp/autocap-$leg-$stamp.tsv &
sampler=$!
for i in 1 2 3; do
  W=0; [ $i = 1 ] && W=60
  out=/tmp/autoleg-$leg-$stamp-$i
  load-tests/run.sh flash-sale --no-stack --warmup $W --knee-rates "" --shapes step --modes AUTO --cost-seconds 0 --out $out >/dev/null 2>&1
  python3 -c "
import json; v=json.load(open('$out/flash-sale.json'))['modes']['AUTO step']
print('$leg', $i, v['soldOutMs'], round(v['winnersP99']), round(v['firstArrivalsShare']*100,1), v['oversold'], v['lost'])"
  sleep 10
done
kill $sampler
echo "$leg sampler: /tmp/autocap-$leg-$stamp.tsv"
grep "AUTO switched" .run/order-api.log | sed "s/^/$leg /"
