#!/bin/bash
# API CPU per ping with and without connection reuse, interleaved
cd /work/main
api=$(cat .run/order-api.pid)
TOKEN=$(scripts/token.py --user bob)
cpu() { awk '{print $14+$15}' /proc/$api/stat; }
for leg in 1 0 1 0 1 0; do
  a=$(cpu)
  out=$(~/.cache/flashsale/bin/k6 run -q --summary-export /tmp/reuse/s.json -e TOKEN=$TOKEN -e REUSE=$leg /tmp/reuse/ping.js 2>&1)
  b=$(cpu)
  python3 - $leg $a $b <<'PY'
import json,sys
s=json.load(open('/tmp/reuse/s.json'))
n=s['metrics']['http_reqs']['count']; d=s['metrics']['http_req_duration']
ticks=int(sys.argv[3])-int(sys.argv[2])
print(f"reuse={sys.argv[1]} requests={n} api ms/request={ticks*10/n:.3f} p99={d['p(99)']:.1f} ms fails={s['metrics']['http_req_failed']['value'] if 'value' in s['metrics']['http_req_failed'] else s['metrics']['http_req_failed']}")
PY
  sleep 3
done
