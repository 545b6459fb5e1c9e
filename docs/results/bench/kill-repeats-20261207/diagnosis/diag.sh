#!/bin/bash
# One step crowd against two APIs behind HAProxy (no kill unless asked), HAProxy logging every request to
# /tmp/haproxy-NAME.log, and the kernel's listen overflows counted. SERVER_OPTS (e.g. "maxconn 64") and
# DEFAULTS_EXTRA change the HAProxy config for the run.   diag.sh NAME MODE [drill options]
# The runs with one API killed (base2, mc1000) passed --kill-api 1, at 312b9c7, whose drill counted it from k6's start.
cd /work/main
name=$1 mode=$2; shift 2
scripts/down.sh >/dev/null 2>&1; scripts/services.sh reset >/dev/null 2>&1
rm -f /tmp/haproxy-$name.log; pkill -f 'SOCK_DGRAM'; sleep 0.5
nohup python3 -c "import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind((\"127.0.0.1\",5514)); f=open(sys.argv[1],\"a\",buffering=1); [f.write(s.recv(65535).decode(\"utf-8\",\"replace\").rstrip()+\"\\n\") for _ in iter(int,1)]" /tmp/haproxy-$name.log >/dev/null 2>&1 &
HAPROXY_LOG=127.0.0.1:5514 scripts/up.sh --skip-build --api 2 >/dev/null 2>&1 || { echo "no stack"; exit 1; }
if [ -n "${SERVER_OPTS:-}" ]; then
  sed -i "s|^\(    server order-api-[0-9]* 127.0.0.1:[0-9]* check\)$|\1 $SERVER_OPTS|" .run/haproxy.cfg
  [ -n "${DEFAULTS_EXTRA:-}" ] && sed -i "s|^defaults$|defaults\n$DEFAULTS_EXTRA|" .run/haproxy.cfg
  kill "$(cat .run/haproxy.pid)"; sleep 0.5; haproxy -D -f .run/haproxy.cfg -p .run/haproxy.pid; sleep 1
  grep -n "server order-api\|timeout queue" .run/haproxy.cfg
fi
o0=$(nstat -az TcpExtListenOverflows | awk '/Overflows/ {print $2}')
out=/tmp/diag-$name; rm -rf $out
load-tests/run.sh flash-sale --no-stack --warmup 60 --knee-rates "" --shapes step --modes $mode --instances http://127.0.0.1:18081,http://127.0.0.1:18082 "$@" --cost-seconds 0 --out $out > $out.log 2>&1
o1=$(nstat -az TcpExtListenOverflows | awk '/Overflows/ {print $2}')
echo "$name: listen overflows during the run: $((o1 - o0))"
grep "step |" $out/summary.md | cut -c1-220; grep -i killed $out.log | head -1
