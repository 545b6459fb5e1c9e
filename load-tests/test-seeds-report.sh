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

def kneed(auto_goodput, auto_p99):
    """Every sweep step a knee step (p99 / 20); AUTO = SYNC's numbers scaled, SYNC the better mode."""
    k = copy.deepcopy(data)
    steps = {s["n"]: s for s in k["steps"]}
    for p in k["points"]:
        for row in p["rows"].values():
            for n in row["steps"]:
                steps[n]["p99"] = (steps[n]["p99"] or 1) / 20
                steps[n]["kneeOk"] = True
            row["knee"] = max(row["steps"], key=lambda n: steps[n]["rate"])
        sync = {steps[n]["rate"]: steps[n] for n in p["rows"]["SYNC"]["steps"]}
        for n in p["rows"]["ASYNC"]["steps"]:
            steps[n]["acceptedPerSecond"] *= 0.5
        for n in p["rows"]["AUTO"]["steps"]:
            twin = sync[steps[n]["rate"]]
            steps[n]["acceptedPerSecond"] = twin["acceptedPerSecond"] * auto_goodput
            steps[n]["p99"] = twin["p99"] * auto_p99
    return k

def repeated(goodput):
    """The recorded run with a second ASYNC ramp per point (seeds --again ASYNC) at this share of the first's goodput."""
    r = copy.deepcopy(data)
    steps = r["steps"]
    for p in r["points"]:
        twins = []
        for n in p["rows"]["ASYNC"]["steps"]:
            s = steps[n - 1]
            twin = dict(s, n=len(steps) + 1, label=s["label"].replace("ASYNC", "ASYNC-again"),
                        acceptedPerSecond=s["acceptedPerSecond"] * goodput)
            steps.append(twin)
            twins.append(twin)
        knee = p["rows"]["ASYNC"]["knee"]
        p["rows"]["ASYNC again"] = {"steps": [t["n"] for t in twins],
                                    "knee": None if knee is None else twins[p["rows"]["ASYNC"]["steps"].index(knee)]["n"]}
    return r

json.dump(repeated(1.0), open(os.path.join(out, "again.json"), "w"))
json.dump(repeated(0.5), open(os.path.join(out, "apart.json"), "w"))
json.dump(kneed(0.95, 1.05), open(os.path.join(out, "near.json"), "w"))
json.dump(kneed(0.95, 1.2), open(os.path.join(out, "slow.json"), "w"))
json.dump(kneed(0.85, 1.0), open(os.path.join(out, "short.json"), "w"))
PY

run() { # variant -> exit status in $work/<variant>.rc, output in $work/<variant>/
  mkdir -p "$work/$1"
  "$here/bench/charts.sh" "$work/$1.json" --out "$work/$1" >"$work/$1.log" 2>&1
  echo $? >"$work/$1.rc"
}
png_ok() { python3 -c 'import sys; sys.exit(open(sys.argv[1], "rb").read(8) != b"\x89PNG\r\n\x1a\n")' "$1"; }

run recorded
check "the recorded run gives a report (exit 0 or 1)" grep -qx '[01]' "$work/recorded.rc"
for f in summary.md; do check "recorded: $f written" test -s "$work/recorded/$f"; done
for png in knee.png p99.png curves.png claim1.png; do check "recorded: $png is a PNG" png_ok "$work/recorded/$png"; done
for section in '## Sweep: knee and p99 against downstream latency' '### AUTO within 10 % of the better fixed mode' \
  '## Claim 1: SYNC' '## Claim 5: ramp, stress and spike'; do
  check "recorded: summary has '$section'" grep -qF "$section" "$work/recorded/summary.md"
done
check "recorded: the sweep table's head" grep -qE '^\| latency ms +\| PING knee +\| SYNC knee +\| ASYNC knee +\| AUTO knee' "$work/recorded/summary.md"
points=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["points"]))' "$fixture")
check "recorded: one check line per sweep point ($points)" test "$(grep -c '^\[check\]' "$work/recorded.log")" = "$points"
check "recorded: claim 5 rows for both modes" grep -qE '^\| (ramp|stress|spike) +\| ASYNC' "$work/recorded/summary.md"

run worse
check "AUTO at half the goodput fails the check (exit 1)" test "$(cat "$work/worse.rc")" = 1
check "AUTO at half the goodput: every point FAIL" test "$(grep -c '^\[check\].*FAIL' "$work/worse.log")" = "$points"

run matched
check "AUTO as good as the better fixed mode passes (exit 0)" test "$(cat "$work/matched.rc")" = 0
check "AUTO as good as the better fixed mode: every point PASS" test "$(grep -c '^\[check\].*PASS' "$work/matched.log")" = "$points"

# With knees: AUTO at 95 % of SYNC's goodput and 105 % of its p99 passes; 120 % of the p99, or 85 % of
# the goodput, fails.
run near
check "knees: AUTO at 95 % goodput and 105 % p99 passes" grep -qx 0 "$work/near.rc"
check "knees: the better fixed mode is SYNC" grep -q 'FAIL\|PASS AUTO goodput [0-9]*/s vs SYNC' "$work/near.log"
run slow
check "knees: AUTO at 120 % of the p99 fails" grep -qx 1 "$work/slow.rc"
check "knees: p99 above 110 % named" grep -qF 'above 110 %' "$work/slow/summary.md"
run short
check "knees: AUTO at 85 % of the goodput fails" grep -qx 1 "$work/short.rc"
check "knees: goodput below 90 % named" grep -qF 'below 90 %' "$work/short/summary.md"

# A/A: a fixed mode's second ramp is judged like AUTO against its first, reported, and leaves the exit
# status to AUTO's check.
run again
check "A/A: a second ASYNC ramp like the first passes, one line per point" \
  test "$(grep -c '^\[check\].*A/A ASYNC again PASS' "$work/again.log")" = "$points"
check "A/A: the summary has its section" grep -qF '### Each fixed mode against a second run of itself' "$work/again/summary.md"
check "A/A: the exit status stays AUTO's" test "$(cat "$work/again.rc")" = "$(cat "$work/recorded.rc")"
run apart
check "A/A: a second ASYNC ramp at half the goodput fails against the first" \
  test "$(grep -c '^\[check\].*A/A ASYNC again FAIL' "$work/apart.log")" = "$points"

[ "$failed" = 0 ] || { for v in recorded worse matched near slow short again apart; do echo "--- $v"; cat "$work/$v.log"; done; }
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
