#!/usr/bin/env bash
# Self-test of the seeds drill's report (load-tests/bench/charts.py), without services: it is fed a small
# recorded run (load-tests/bench/fixtures/seeds-quick.json) and two copies of it in which AUTO is made
# worse and then as good as the better fixed mode, and must write summary.md and valid PNG charts, and
# judge AUTO as those copies deserve (exit 1 and FAIL; exit 0 and PASS).
#
#   load-tests/test-seeds-report.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixture=$here/bench/fixtures/seeds-quick.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() { # description command...
  local what=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "[test-seeds-report] PASS $what"
  else
    failed=$((failed + 1))
    echo "[test-seeds-report] FAIL $what"
  fi
}

# variant: recorded (as it is), worse (AUTO at half the goodput and twice the p99), matched (AUTO's row
# replaced by the best of SYNC and ASYNC at every rate either ran: goodput the higher, p99 the lower).
python3 - "$fixture" "$work" <<'PY'
import copy, json, os, sys
data = json.load(open(sys.argv[1]))
out = sys.argv[2]
json.dump(data, open(os.path.join(out, "recorded.json"), "w"))
worse = copy.deepcopy(data)
for s in worse["steps"]:
    if s.get("mode") == "AUTO" and s.get("part") == "sweep":
        s["acceptedPerSecond"] *= 0.5
        s["p99"] = (s["p99"] or 1) * 2
json.dump(worse, open(os.path.join(out, "worse.json"), "w"))
matched = copy.deepcopy(data)
steps = matched["steps"]
for p in matched["points"]:
    fixed = [steps[n - 1] for m in ("SYNC", "ASYNC") for n in p["rows"][m]["steps"]]
    auto = []
    for rate in sorted({s["rate"] for s in fixed}):
        twins = [s for s in fixed if s["rate"] == rate]
        best = dict(twins[0], n=len(steps) + 1, mode="AUTO", label=f"AUTO-{rate}",
                    acceptedPerSecond=max(s["acceptedPerSecond"] for s in twins),
                    p99=min(s["p99"] for s in twins), kneeOk=any(s["kneeOk"] for s in twins))
        steps.append(best)
        auto.append(best)
    ok = [s for s in auto if s["kneeOk"]]
    p["rows"]["AUTO"] = {"steps": [s["n"] for s in auto], "knee": max(ok, key=lambda s: s["rate"])["n"] if ok else None}
json.dump(matched, open(os.path.join(out, "matched.json"), "w"))
PY

run() { # variant -> exit status in $work/<variant>.rc, output in $work/<variant>/
  mkdir -p "$work/$1"
  "$here/bench/charts.sh" "$work/$1.json" --out "$work/$1" >"$work/$1.log" 2>&1
  echo $? >"$work/$1.rc"
}
png_ok() { [ -s "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "\\211PNG" ]; }

run recorded
check "the recorded run gives a report (exit 0 or 1)" grep -qx '[01]' "$work/recorded.rc"
for f in summary.md; do check "recorded: $f written" test -s "$work/recorded/$f"; done
for png in knee.png p99.png curves.png claim1.png; do check "recorded: $png is a PNG" png_ok "$work/recorded/$png"; done
for section in '## Sweep: knee and p99 against downstream latency' '### AUTO within 10 % of the better fixed mode' \
  '## Claim 1: SYNC' '## Claim 5: ramp, stress and spike' '| latency ms | PING knee | SYNC knee | ASYNC knee | AUTO knee'; do
  check "recorded: summary has '$section'" grep -qF "$section" "$work/recorded/summary.md"
done
points=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["points"]))' "$fixture")
check "recorded: one check line per sweep point ($points)" test "$(grep -c '^\[check\]' "$work/recorded.log")" = "$points"
check "recorded: claim 5 rows for both modes" grep -qE '^\| (ramp|stress|spike) +\| ASYNC' "$work/recorded/summary.md"

run worse
check "AUTO at half the goodput fails the check (exit 1)" test "$(cat "$work/worse.rc")" = 1
check "AUTO at half the goodput: every point FAIL" test "$(grep -c '^\[check\].*FAIL' "$work/worse.log")" = "$points"

run matched
check "AUTO as good as the better fixed mode passes (exit 0)" test "$(cat "$work/matched.rc")" = 0
check "AUTO as good as the better fixed mode: every point PASS" test "$(grep -c '^\[check\].*PASS' "$work/matched.log")" = "$points"

[ "$failed" = 0 ] || { for v in recorded worse matched; do echo "--- $v"; cat "$work/$v.log"; done; }
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
