#!/usr/bin/env python3
"""Every second: AUTO's capacity gauges and recommendation, until SECONDS pass (1/s keeps the box's idle reading)."""
import re, sys, time, urllib.request
url, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
PATS = {
    "sync": r'flashsale_mode_auto_capacity\{[^}]*path="SYNC"[^}]*\}',
    "async": r'flashsale_mode_auto_capacity\{[^}]*path="ASYNC"[^}]*\}',
    "recommended": r'flashsale_mode_auto_recommended(\{[^}]*\})?',
    "pressure": r'flashsale_mode_auto_pressure(\{[^}]*\})?',
    "syncFixed": r'flashsale_mode_auto_cpu_fixed\{[^}]*path="SYNC"[^}]*\}',
    "syncMs": r'flashsale_mode_auto_cpu_per_order\{[^}]*path="SYNC"[^}]*\}',
    "asyncFixed": r'flashsale_mode_auto_cpu_fixed\{[^}]*path="ASYNC"[^}]*\}',
    "asyncMs": r'flashsale_mode_auto_cpu_per_order\{[^}]*path="ASYNC"[^}]*\}',
}
t0 = time.time()
with open(out, "w") as f:
    f.write("t\t" + "\t".join(PATS) + "\n")
    while time.time() - t0 < seconds:
        t = time.time()
        try:
            body = urllib.request.urlopen(url, timeout=1).read().decode()
        except Exception:
            body = ""
        row = []
        for pat in PATS.values():
            m = re.search("^" + pat + r" ([0-9.eE+-]+|NaN)$", body, re.M)
            row.append(m.group(m.lastindex) if m else "")
        f.write(f"{t - t0:.1f}\t" + "\t".join(row) + "\n")
        f.flush()
        time.sleep(max(0, 1 - (time.time() - t)))
