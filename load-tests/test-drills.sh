#!/usr/bin/env bash
# Tests of the drills themselves: a normal smoke drill must pass (exit 0), and the same drill must fail
# its thresholds (k6 exit 99) when conservation cannot hold: a sale whose Redis stock was tampered with,
# and a check pointed at the wrong stock. Extra options go to every run (e.g. --no-stack, --base-url URL).
#
#   load-tests/test-drills.sh [run.sh options]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
failures=0

expect() { # expected-exit description run.sh-args...
  local want=$1 what=$2
  shift 2
  echo "[test-drills] $what: load-tests/run.sh $*"
  "$here/run.sh" "$@" >"$log" 2>&1
  local got=$?
  tail -n 12 "$log" | sed 's/^/    /'
  if [ "$got" = "$want" ]; then
    echo "[test-drills] PASS $what (exit $got)"
  else
    echo "[test-drills] FAIL $what: exit $got, expected $want (full log: $log)"
    failures=$((failures + 1))
  fi
}

log=$(mktemp)
# The fault drill's checker must catch each breach (oversold, lost, duplicated, stuck, ghost, closed,
# unbalanced, not selling, a crowd sale left unchecked) on fabricated evidence, and pass clean evidence. No services needed.
echo "[test-drills] the fault drill's checker: load-tests/faults/check.py selftest"
if python3 "$here/faults/check.py" selftest; then
  echo "[test-drills] PASS the fault checker catches every breach"
else
  echo "[test-drills] FAIL the fault checker missed a breach or failed clean evidence"
  failures=$((failures + 1))
fi
expect 0 "a normal smoke drill passes" smoke "$@"
# Short single-mode runs: the invariant is what must fail them, so keep load trivial.
# Redis is tampered below Postgres: Redis above it is what the API's rebuild watch repairs (every 2 s), so
# a drill tampered upwards passes once the watch is quick, as it is when no sale loops it.
expect 99 "tampered Redis stock fails the invariant" smoke --modes SYNC --no-baseline --seconds 3 --tamper-stock -5 "$@"
grep -q 'invariant_ok' "$log" || { echo "[test-drills] FAIL the tampered run did not fail on invariant_ok"; failures=$((failures + 1)); }
expect 99 "a wrong expected stock fails the invariant" smoke --modes ASYNC --no-baseline --seconds 3 --expect-stock-offset -1 "$@"
grep -q 'invariant_ok' "$log" || { echo "[test-drills] FAIL the wrong-stock run did not fail on invariant_ok"; failures=$((failures + 1)); }
rm -f "$log"

if [ "$failures" -gt 0 ]; then
  echo "[test-drills] $failures check(s) failed"
  exit 1
fi
echo "[test-drills] all checks passed"
