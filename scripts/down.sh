#!/usr/bin/env bash
# Stops the order-api and order-worker instances (and HAProxy) started by scripts/up.sh (services stay up: scripts/services.sh down).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run_dir=${FLASHSALE_RUN_DIR:-$root/.run}
shopt -s nullglob
for pidfile in "$run_dir"/haproxy.pid "$run_dir"/order-worker*.pid "$run_dir"/order-api*.pid; do
  name=$(basename "$pidfile" .pid)
  if [ -f "$pidfile" ]; then
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
      echo "[down] stopping $name (pid $pid)"
      kill "$pid"
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    fi
    rm -f "$pidfile"
  fi
done
