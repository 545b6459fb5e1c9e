#!/usr/bin/env bash
# What Redis does per order during a running bench step, counted rather than timed, so hypervisor steal
# cannot distort it: script calls and commands per order (INFO commandstats), wake-ups per order (the
# server's voluntary context switches: one per return from an empty epoll_wait), and its CPU per order and
# per wake-up. Orders are the rows Postgres gained in the window (SYNC writes them at once; at ASYNC rates
# below the knee the worker keeps up). Waits for the bench's step folder, lets it settle 8 s, samples 20 s.
#
#   scripts/profile/redis-per-order.sh BENCH_OUT MODE RATE   e.g. ... /tmp/cost/run SYNC 400
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: scripts/profile/redis-per-order.sh BENCH_OUT MODE RATE" >&2; exit 2; }
out=$1 mode=$2 rate=$3
port=${REDIS_PORT:-6379}
cli=(redis-cli -p "$port")
pid=$("${cli[@]}" info server | tr -d '\r' | sed -n 's/^process_id://p')
orders() { psql -qAt "${DATABASE_URL:-postgresql://flashsale:flashsale@127.0.0.1:5432/flashsale}" \
  -c "select count(*) from purchase_order"; }
cpu() { "${cli[@]}" info cpu | tr -d '\r' | awk -F: '/^used_cpu_(sys|user):/ {s += $2} END {printf "%.6f", s}'; }
wakeups() { awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$pid/status"; }
until ls -d "$out"/steps/*-"$mode"-"$rate" > /dev/null 2>&1; do sleep 1; done
sleep 8
"${cli[@]}" config resetstat > /dev/null
o0=$(orders) c0=$(cpu) w0=$(wakeups)
sleep 20
o1=$(orders) c1=$(cpu) w1=$(wakeups)
stats=$("${cli[@]}" info commandstats | tr -d '\r')
n=$((o1 - o0))
[ "$n" -gt 0 ] || { echo "no orders written in the window" >&2; exit 1; }
echo "$mode at $rate/s: $n orders in 20 s; Redis pid $pid"
awk -v n="$n" -v cpu="$(echo "$c1 - $c0" | bc)" -v w="$((w1 - w0))" '
  BEGIN { printf "Redis CPU per order %.3f ms; wake-ups per order %.2f; CPU per wake-up %.1f us\n", cpu * 1000 / n, w / n, cpu * 1e6 / w }' /dev/null
echo "$stats" | awk -F'[:,=]' -v n="$n" '/^cmdstat_/ && $3 > 0 {
  sub(/^cmdstat_/, "", $1); printf "  %-22s %6.2f calls per order\n", $1, $3 / n }' | sort -k2 -rn
