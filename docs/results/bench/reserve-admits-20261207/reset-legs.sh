#!/bin/bash
# The same legs as aba.sh, each on emptied services (scripts/services.sh reset): without the sales earlier runs
# left in Postgres, whose background reads (the rebuild watch's and the reconciler's per-sale polls) count in
# Redis's commands per order.   reset-legs.sh E3=E D3=D
cd /work/main
for leg in "$@"; do
  scripts/down.sh >/dev/null 2>&1
  scripts/services.sh reset > /dev/null 2>&1
  "$(dirname "$0")/aba.sh" "$leg"
done
