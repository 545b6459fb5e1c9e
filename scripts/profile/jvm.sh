#!/usr/bin/env bash
# CPU (or allocation) profile of a running JVM (the API or a worker) with async-profiler: collapsed stacks,
# the same samples as a flame graph (OUT.html), and a breakdown of where its CPU went
# (scripts/profile/breakdown.py). async-profiler comes from Maven Central (tools.profiler:async-profiler)
# into ~/.cache/flashsale/async-profiler on first use.
#
#   scripts/profile/jvm.sh PID SECONDS OUT.collapsed [cpu|alloc]
#     e.g. scripts/profile/jvm.sh $(cat .run/order-api.pid) 30 /tmp/api.collapsed
#   cpu (the default) samples CPU time every 1 ms; alloc samples every 512 KiB allocated (bytes in the stacks).
#
# Run it while a drill holds a steady load (load-tests/run.sh bench --no-stack --modes ASYNC --no-ping
# --ramp ASYNC=400:400:1 --step-seconds 60 --refine 0 --overload "").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/scripts/java-env.sh"
[ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: scripts/profile/jvm.sh PID SECONDS OUT.collapsed [cpu|alloc]" >&2; exit 2; }
pid=$1 seconds=$2 out=$(realpath -m "$3") event=${4:-cpu}
case $event in
  cpu) start="start,event=cpu,interval=1ms" counter="" ;;
  alloc) start="start,event=alloc,alloc=512k" counter=",total" ;;
  *) echo "event: cpu or alloc, not $event" >&2; exit 2 ;;
esac
version=4.2
cache=${FLASHSALE_CACHE:-$HOME/.cache/flashsale}/async-profiler/$version
lib=$cache/linux-x64/libasyncProfiler.so
if [ ! -f "$lib" ]; then
  mkdir -p "$cache"
  "$root/scripts/mvn" -B -q dependency:copy -Dartifact=tools.profiler:async-profiler:$version \
    -DoutputDirectory="$cache" -Dmdep.stripVersion=true
  (cd "$cache" && unzip -q -o async-profiler.jar 'linux-x64/*')
fi
attach() { java "$root/scripts/profile/Attach.java" "$pid" "$lib" "$1"; }
attach "$start"
sleep "$seconds"
attach "dump,file=$out,collapsed$counter"
attach "stop,file=${out%.collapsed}.html,flamegraph$counter"
echo "[profile] $(wc -l <"$out") stacks in $out, flame graph ${out%.collapsed}.html"
if [ "$event" = cpu ]; then python3 "$root/scripts/profile/breakdown.py" "$out"; fi
