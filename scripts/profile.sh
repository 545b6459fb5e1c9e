#!/usr/bin/env bash
# CPU profile of a running JVM (the API or a worker) with async-profiler, as collapsed stacks, and a
# breakdown of where its CPU went (scripts/profile/breakdown.py). async-profiler comes from Maven Central
# (tools.profiler:async-profiler) into ~/.cache/flashsale/async-profiler on first use.
#
#   scripts/profile.sh PID SECONDS OUT.collapsed      e.g. scripts/profile.sh $(cat .run/order-api.pid) 30 /tmp/api.collapsed
#
# Run it while a drill holds a steady load (load-tests/run.sh bench --no-stack --modes ASYNC --no-ping
# --ramp ASYNC=400:400:1 --step-seconds 60 --refine 0 --overload ""); it samples CPU time every 1 ms.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/java-env.sh"
[ $# -eq 3 ] || { echo "usage: scripts/profile.sh PID SECONDS OUT.collapsed" >&2; exit 2; }
pid=$1 seconds=$2 out=$(realpath -m "$3")
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
attach "start,event=cpu,interval=1ms"
sleep "$seconds"
attach "stop,file=$out,collapsed"
echo "[profile] $(wc -l <"$out") stacks in $out"
python3 "$root/scripts/profile/breakdown.py" "$out"
