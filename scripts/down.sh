#!/usr/bin/env bash
# Stops order-api and order-worker started by scripts/up.sh (services stay up: scripts/services.sh down).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run_dir=${FLASHSALE_RUN_DIR:-$root/.run}
for name in order-worker order-api; do
  if [ -f "$run_dir/$name.pid" ]; then
    pid=$(cat "$run_dir/$name.pid")
    if kill -0 "$pid" 2>/dev/null; then
      echo "[down] stopping $name (pid $pid)"
      kill "$pid"
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    fi
    rm -f "$run_dir/$name.pid"
  fi
done
