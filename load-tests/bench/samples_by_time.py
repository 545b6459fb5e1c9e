"""A k6 step's request durations by 250 ms of the step (k6's CSV output): count, p50, p99, max, and the
step's p99 without its first second."""
import csv, gzip, sys

path, label = sys.argv[1], sys.argv[2]
rows = []
with gzip.open(path, "rt") as f:
    for r in csv.DictReader(f):
        if r["metric_name"] == "http_req_duration":
            rows.append((float(r["timestamp"]), float(r["metric_value"])))
if not rows:
    sys.exit(f"{label}: no samples")
if rows[0][0] > 1e11:  # K6_CSV_TIME_FORMAT=unix_milli
    rows = [(t / 1000, v) for t, v in rows]
t0 = min(t for t, _ in rows)


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


print(f"{label}: {len(rows)} requests, p99 {pct([v for _, v in rows], 0.99):.1f} ms, "
      f"p99 after its first second {pct([v for t, v in rows if t - t0 >= 1], 0.99):.1f} ms")
buckets = {}
for t, v in rows:
    buckets.setdefault(int((t - t0) * 4), []).append(v)
for b in sorted(buckets)[:12]:
    vs = buckets[b]
    print(f"  {b / 4:5.2f} s  n={len(vs):4d}  p50 {pct(vs, 0.5):6.1f}  p99 {pct(vs, 0.99):6.1f}  max {max(vs):6.1f} ms")
