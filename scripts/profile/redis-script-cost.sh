#!/usr/bin/env bash
# Redis CPU per call of the purchase path's scripts, on a private redis-server (port 6390, AOF everysec as
# the local services run it), driven by redis-benchmark: utime+stime from INFO cpu / calls. CLIENTS=1 sends
# one command at a time (each its own event-loop turn, as at a few hundred orders a second); CLIENTS=8 lets
# Redis serve several per turn.
#
#   CLIENTS=1 N=20000 scripts/profile/redis-script-cost.sh     (APPENDONLY=no: without the AOF)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
port=${PORT:-6390} n=${N:-50000} c=${CLIENTS:-8}
dir=$(mktemp -d)
redis-server --port "$port" --dir "$dir" --save '' --appendonly "${APPENDONLY:-yes}" --appendfsync everysec --daemonize yes \
  --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
cli() { redis-cli -p "$port" "$@"; }
cpu() { cli INFO cpu | awk -F: '/^used_cpu_(sys|user):/ {s += $2} END {printf "%.6f", s}'; }
res=$root/common/src/main/resources/redis
# As LuaScripts.load does: shared.lua before each script.
reserve=$(cli SCRIPT LOAD "$(cat "$res/shared.lua" "$res/reserve.lua")")
throttle=$(cli SCRIPT LOAD "$(cat "$res/shared.lua" "$root/order-api/src/main/resources/redis/throttle.lua")")
one=$(cli SCRIPT LOAD "return 1")
cli HSET '{sale:1}' remaining 1000000000000 limit 1000000 startsAt 0 endsAt 9000000000000000 held 0 >/dev/null
now=$(date +%s%3N)
measure() {  # name, command...
  local name=$1; shift
  local before after
  before=$(cpu)
  redis-benchmark -p "$port" -n "$n" -c "$c" -r 100000000 -q "$@" >/dev/null
  after=$(cpu)
  printf '%-28s %8.1f us of Redis CPU per call (%d calls, %d clients)\n' "$name" \
    "$(echo "($after - $before) * 1000000 / $n" | bc -l)" "$n" "$c"
}
measure "PING" PING
measure "EVALSHA return 1" EVALSHA "$one" 0
measure "throttle.lua (with a key)" EVALSHA "$throttle" 2 'throttle:purchase:{u:__rand_int__}' \
  'idem:{u:__rand_int__}:k' 60000 100 value 86400000
measure "reserve.lua (reserved)" EVALSHA "$reserve" 5 '{sale:1}' '{sale:1}:users' '{sale:1}:pending' \
  '{sale:1}:orders' '{sale:1}:refusals' 3600 600 api1 __rand_int__ u__rand_int__ 1 "$now" SYNC 1 WRITING 0 '' '' 0 '' ''
# One master: the call counts the attempt and binds its key too, in place of throttle.lua's call.
measure "reserve.lua (admitting)" EVALSHA "$reserve" 7 '{sale:1}' '{sale:1}:users' '{sale:1}:pending' \
  '{sale:1}:orders' '{sale:1}:refusals' 'throttle:purchase:{u:__rand_int__}' 'idem:{u:__rand_int__}:k' \
  3600 600 api1 __rand_int__ u__rand_int__ 1 "$now" SYNC 1 WRITING 6 60000 100 7 value 86400000
cli HSET '{sale:1}' remaining 0 >/dev/null
measure "reserve.lua (sold out)" EVALSHA "$reserve" 5 '{sale:1}' '{sale:1}:users' '{sale:1}:pending' \
  '{sale:1}:orders' '{sale:1}:refusals' 3600 600 api1 __rand_int__ u__rand_int__ 1 "$now" SYNC 0 WRITING 0 '' '' 0 '' ''
