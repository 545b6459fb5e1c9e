"""What a mode switch costs (issue 39): purchases at a steady 400/s for 70 s on a sale that never sells out,
the mode forced SYNC -> ASYNC -> SYNC ... every 10 s through the admin API, each purchase's answer time by
when it began; then the p99 of the second after each switch against that of seconds 3-9 after it.
Against a running, warmed-up stack (scripts/up.sh; k6 as load-tests/run.sh installs it):

  python3 load-tests/bench/switch_cost.py OUT_DIR
"""
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "pylib"))
from flashtools import tokens, web  # noqa: E402
from flashtools.percentiles import percentile  # noqa: E402
BASE = "http://127.0.0.1:8080"


def main(out):
    admin = tokens.admin()
    os.makedirs(out, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    sale = web.call("POST", BASE + "/api/v1/sales", {"sku": f"switch-{stamp}", "name": "switch cost", "priceCents": 1,
          "stock": 1_000_000, "perUserLimit": 1000, "startsAt": "2020-01-01T00:00:00Z", "endsAt": "2100-01-01T00:00:00Z"},
          token=admin)["id"]
    tok = os.path.join(out, "tokens.json")
    tokens.write_shoppers(tok, 30000, f"sw-{stamp}-")
    def mode(m):
        web.call("PUT", BASE + "/api/v1/admin/mode", {"mode": m, "reason": "switch-cost drill"}, token=admin)
    mode("SYNC")
    env = dict(os.environ, KIND="purchase", RATE="400", SECONDS="70", OFFSET="0", KEYED="0.7", TOKENS=tok, BASE_URL=BASE,
               SALE_ID=str(sale), SUMMARY=os.path.join(out, "summary.json"), EXPECT="201,202", RUN_ID=f"sw-{stamp}", LOG="1",
               PRE_VUS="200", MAX_VUS="1000", RETRIES="0")
    k6 = os.path.join(os.environ.get("FLASHSALE_CACHE", os.path.expanduser("~/.cache/flashsale")), "bin", "k6")
    answers = os.path.join(out, "answers.log")
    p = subprocess.Popen([k6, "run", "--quiet", "--no-usage-report", "--console-output", answers, "drills/flash-sale.js"],
                         cwd=os.path.join(ROOT, "load-tests"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    t0 = time.time() * 1000
    switches = []
    m = "SYNC"
    for k in range(1, 7):
        time.sleep(max(0, (t0 + k * 10_000 - time.time() * 1000) / 1000))
        m = "ASYNC" if m == "SYNC" else "SYNC"
        mode(m)
        switches.append((time.time() * 1000, m))
    p.wait()
    mode("SYNC")
    rows = []
    for line in open(answers):
        g = re.search(r'R (\d+) (\d+) (\S+) (\d+) ([\d.]+)', line)
        if g:
            rows.append((int(g.group(4)), float(g.group(5)), int(g.group(2))))
    res = {"sale": sale, "switches": switches, "requests": len(rows), "windows": []}
    print(f"{len(rows)} purchases; statuses {sorted(set(r[2] for r in rows))}")
    print("switch to | n after (0-1 s) | p99 after | n steady (3-9 s) | p99 steady | max after")
    for at, to in switches:
        after = [d for s, d, st in rows if at <= s < at + 1000]
        steady = [d for s, d, st in rows if at + 3000 <= s < at + 9000]
        w = {"to": to, "p99After": percentile(after, 99) if after else None, "p99Steady": percentile(steady, 99) if steady else None,
             "nAfter": len(after), "nSteady": len(steady), "maxAfter": max(after) if after else None}
        res["windows"].append(w)
        print(f"{to:6s} | {w['nAfter']} | {w['p99After']:.1f} ms | {w['nSteady']} | {w['p99Steady']:.1f} ms | {w['maxAfter']:.1f} ms")
    json.dump(res, open(os.path.join(out, "switch-cost.json"), "w"), indent=1)
    os.remove(tok)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 load-tests/bench/switch_cost.py OUT_DIR")
    main(sys.argv[1])
