#!/usr/bin/env bash
# A reserve call of one and of eight orders, admitting (counter and binding, decision 0030) or not, on a private
# redis-server (port 6391): Redis CPU per call from INFO cpu, one client (each call its own event-loop turn).
#   bash batch-cost.sh        AOF=no bash batch-cost.sh        N=10000 calls each
set -euo pipefail
root=$(cd "$(dirname "$0")/../../../.." && pwd); port=6391; n=${N:-10000}
dir=$(mktemp -d)
redis-server --port $port --dir $dir --save '' --appendonly ${AOF:-yes} --appendfsync everysec --daemonize yes --pidfile $dir/p --logfile $dir/l
trap 'redis-cli -p $port shutdown nosave >/dev/null 2>&1; rm -rf $dir' EXIT
until redis-cli -p $port ping >/dev/null 2>&1; do sleep 0.1; done
cli(){ redis-cli -p $port "$@"; }
cpu(){ cli INFO cpu | awk -F: '/^used_cpu_(sys|user):/ {s += $2} END {printf "%.6f", s}'; }
res=$root/common/src/main/resources/redis
sha=$(cli SCRIPT LOAD "$(cat $res/shared.lua $res/reserve.lua)")
cli HSET '{sale:1}' remaining 1000000000000 limit 1000000 startsAt 0 endsAt 9000000000000000 held 0 >/dev/null
now=$(date +%s%3N)
m(){ local name=$1; shift; local b=$(cpu); redis-benchmark -p $port -n $n -c 1 -r 100000000 -q "$@" >/dev/null; local a=$(cpu); printf '%-34s %7.1f us per call\n' "$name" "$(echo "($a-$b)*1000000/$n" | bc -l)"; }
plain(){ local k=$1; local args=(); for i in $(seq $k); do args+=(__rand_int__ u__rand_int__ 1 $now SYNC 1 WRITING 0 '' '' 0 '' ''); done; echo "${args[@]}"; }
m PING PING
for k in 1 8; do
  args=(); keys=(); for i in $(seq $k); do keys+=("t:{u:__rand_int__}" "i:{u:__rand_int__}:k"); args+=(__rand_int__ u__rand_int__ 1 $now SYNC 1 WRITING $((5+2*i-1)) 1000 10 $((5+2*i)) v 86400000); done
  m "reserve x$k (admitting)" EVALSHA $sha $((5+2*k)) '{sale:1}' '{sale:1}:users' '{sale:1}:pending' '{sale:1}:orders' '{sale:1}:refusals' "${keys[@]}" 3600 600 api1 "${args[@]}"
  pargs=(); for i in $(seq $k); do pargs+=(__rand_int__ u__rand_int__ 1 $now SYNC 1 WRITING 0 '' '' 0 '' ''); done
  m "reserve x$k (not admitting)" EVALSHA $sha 5 '{sale:1}' '{sale:1}:users' '{sale:1}:pending' '{sale:1}:orders' '{sale:1}:refusals' 3600 600 api1 "${pargs[@]}"
done
