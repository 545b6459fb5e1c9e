#!/usr/bin/env python3
"""Who lost among the first arrivals at the balancer, from a flash-sale drill's step directory
(steps/sale-MODE-step: answers.log and balancer.log, written with --edge-log):

  edge-losers.py STEP_DIR [STOCK]

The first 1.5 x STOCK x (keyed share) keyed shoppers to reach HAProxy; of those who bought nothing, how
their first attempt ended at the balancer and on which instance; and the winners from further back."""
import collections
import re
import sys
import time

step, stock = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1000
LOG = re.compile(r"\[(\d+/\w+/\d+:\d+:\d+:\d+)\.(\d+)\] api order-api/(\S+) \S+ (\d+) .*?\{([^}|]*)")
attempts = collections.defaultdict(list)
for line in open(f"{step}/balancer.log"):
    m = LOG.search(line)
    if not m or "-step-" not in m.group(5):
        continue
    at = time.mktime(time.strptime(m.group(1), "%d/%b/%Y:%H:%M:%S")) * 1000 + int(m.group(2))
    attempts[int(m.group(5).rsplit("-", 1)[1])].append((at, m.group(3), int(m.group(4))))
answers = {}
for line in open(f"{step}/answers.log"):
    f = re.search(r'msg="R (.*)"', line).group(1).split()
    answers[int(f[0])] = {"status": int(f[1]), "start": int(f[3]), "attempts": int(f[6]), "place": f[8]}
# Ties within a millisecond go by when k6 began the attempt, as the drill breaks them.
keyed = sorted(attempts, key=lambda n: (min(attempts[n])[0], answers.get(n, {}).get("start", 0)))
t0 = min(attempts[keyed[0]])[0]
top = keyed[:round(1.5 * stock * len(keyed) / len(answers))]
won = lambda n: answers.get(n, {}).get("status") in (201, 202)
losers = [n for n in top if not won(n)]
print(f"{len(keyed)} keyed shoppers at the balancer, the first {len(top)} of them: {len(top) - len(losers)} won")
ends = collections.Counter((min(attempts[n])[2], min(attempts[n])[1]) for n in losers)
print("  their first attempt at the balancer, for those who bought nothing (status, instance): "
      + ", ".join(f"{s} {i}: {c}" for (s, i), c in sorted(ends.items())))
cut = [n for n in losers if min(attempts[n])[2] in (502, 504)]
if cut:
    again = sorted(sorted(attempts[n])[1][0] - min(attempts[n])[0] for n in cut if len(attempts[n]) > 1)
    print(f"  of the {len(cut)} cut (502/504): resent after {again[len(again) // 2]:.0f} ms (median), "
          f"final answers {dict(collections.Counter(answers[n]['status'] for n in cut))}" if again else "")
later = [n for n in keyed[len(top):] if won(n)]
print(f"winners from further back: {len(later)} (share of keyed winners from the first: "
      f"{(len(top) - len(losers)) / max(1, len(top) - len(losers) + len(later)):.3f})")
