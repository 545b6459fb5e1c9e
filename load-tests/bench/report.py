"""The bench's tables (summary.txt, pasteable as Markdown) and its pass/fail line per issue-11 target.

  python3 load-tests/bench/report.py RESULTS/bench.json    prints the summary again from a run's data
"""
import json
import sys

ROLES = ["api", "worker", "rabbitmq", "redis", "postgres"]
MIB = 1024 * 1024


def ms(v):
    return "-" if v is None else f"{v:.1f}" if v < 10 else str(round(v))


def num(v, digits=0):
    return "-" if v is None else f"{v:.{digits}f}"


def ratio(v, base):
    return None if v is None or not base else v / base


def table(head, body):
    widths = [max(len(h), *(len(str(r[i])) for r in body)) if body else len(h) for i, h in enumerate(head)]
    fmt = lambda cells: "| " + " | ".join(str(c).ljust(widths[i]) for i, c in enumerate(cells)) + " |"  # noqa: E731
    return [fmt(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [fmt(r) for r in body]


def saturation(row):
    """The highest accepted rate (served, for ping) of any of the row's steps, with its step."""
    best = None
    for s in row["steps"]:
        if best is None or s["acceptedPerSecond"] > best["acceptedPerSecond"]:
            best = s
    return best


def reference(row):
    """The step overload goodput is compared with: the knee, or the first ramp step when none passed."""
    return row["knee"] or next((s for s in row["steps"] if s.get("kind") == "ramp"), None)


def captured(step):
    """Whether the step was captured on the wire and its capture read."""
    return bool((step or {}).get("wire")) and "error" not in step["wire"]


def wire_p99(step, kind):
    """The server's own p99 (ms) on the loopback for a step's accepted purchases or overload refusals."""
    w = (step or {}).get("wire") or {}
    return (w.get(kind) or {}).get("p99")


def wire_text(step):
    """accepted / refused p99 on the wire for the steps table (pings: their p99); '-' where not captured."""
    if not captured(step):
        return "-"
    if step.get("mode") == "PING":
        return f"ping {ms(wire_p99(step, 'get'))}"
    return f"{ms(wire_p99(step, 'accepted'))} / {ms(wire_p99(step, 'refused'))}"


def confirm_p95(step):
    """(server-side p95 or None, client-polled p95 or None) of 202 -> CONFIRMED in a step, in ms."""
    if not step:
        return None, None
    server = (step.get("serverConfirm") or {}).get("p95")
    return server, step.get("confirmP95")


def knee_text(row):
    k = row["knee"]
    first_broken = next((s for s in row["steps"] if s.get("kind") == "ramp" and not s["kneeOk"]), None)
    if k is None:
        return f"<{row['steps'][0]['rate']}", first_broken
    above = [s for s in row["steps"] if s.get("kind") == "ramp" and s["rate"] > k["rate"] and not s["kneeOk"]]
    after = min(above, key=lambda s: s["rate"]) if above else None
    return (str(k["rate"]) if after else f">={k['rate']}"), after


def cpu_step(name, row):
    """The step whose CPU per order represents the row: ASYNC's long drain step, else the knee step."""
    if name == "ASYNC" and row.get("drainStep"):
        return row["drainStep"]
    return row["knee"] or (row["steps"][0] if row["steps"] else None)


def nearest_ping(ping, rate):
    """The measured ping step whose rate is nearest `rate` (the lower on a tie), with its net CPU."""
    steps = [s for s in (ping or {}).get("steps", []) if s.get("measured", True) and s.get("cpuMsPerOrderNet")]
    return min(steps, key=lambda s: (abs(s["rate"] - rate), s["rate"])) if steps else None


def build(result, rows):
    opts = result["options"]
    lines = []
    ping = rows.get("PING")
    ping_knee = ping["knee"]["rate"] if ping and ping["knee"] else None
    ping_sat = saturation(ping)["acceptedPerSecond"] if ping else None
    ping_cpu = cpu_step("PING", ping)["cpuMsPerOrder"]["total"] if ping and cpu_step("PING", ping) else None
    lines.append(f"bench {result['startedAt']} commit {result['commit']}, {result['cpus']} CPUs, load average before "
                 f"{' '.join(f'{x:.2f}' for x in result['loadavgBefore'])}, {result['seconds'] / 60:.1f} min"
                 f"{' (--quick: a self-test of the tool, not a measurement)' if opts['quick'] else ''}")
    lines.append(f"command: {result['command']}")
    lines.append(f"knee = highest step with p99 < {opts['knee_p99']:g} ms, errors < {opts['knee_errors'] * 100:g} %, "
                 f">= {opts['knee_offered'] * 100:g} % of arrivals offered; steps {opts['step_seconds']} s, "
                 f"warm-up {opts['warmup']} s at {opts['warmup_rate']}/s; (x) = ratio to ping")
    lines.append("")
    head = ["row", "knee /s (x ping knee)", "saturation /s (x ping sat)", "goodput at knee /s",
            "goodput 2x / 4x knee /s (% of knee)", "confirmed 2x / 4x /s", "accepted p99 2x / 4x ms",
            "refusal p99 2x / 4x ms (Retry-After)", "on the wire p99 2x / 4x ms (accepted; refusal)", "drain s", "confirm p95 ms (server / polled)", "CPU ms/order (x ping)",
            "lost"]
    body = []
    for name, row in rows.items():
        if not row["steps"]:
            continue
        kt, _ = knee_text(row)
        k = row["knee"]
        sat = saturation(row)
        kr = ratio(k["rate"] if k else None, ping_knee)
        sr = ratio(sat["acceptedPerSecond"], ping_sat)
        cs = cpu_step(name, row)
        cpu = cs["cpuMsPerOrder"]["total"] if cs else None
        ref = reference(row)
        cells = [name, f"{kt} ({num(kr, 2)})", f"{num(sat['acceptedPerSecond'])} ({num(sr, 2)})",
                 (num(ref["acceptedPerSecond"]) + ("" if k else f" (at {ref['rate']}, no knee)")) if ref else "-"]
        over = row.get("overload", {})
        if name == "PING":
            cells += ["-", "-", "-", "-", "-", "-", "-"]
        else:
            good, conf, acc, refused, wired = [], [], [], [], []
            for f, s in over.items():
                pct = ratio(s["acceptedPerSecond"], ref["acceptedPerSecond"] if ref else None)
                good.append(f"{num(s['acceptedPerSecond'])} ({num(pct * 100 if pct is not None else None)}%)")
                conf.append(num(s.get("confirmedPerSecond")))
                acc.append(ms(s.get("acceptedP99")))
                refused.append("none" if not s["refusalCount"] else
                           f"{ms(s['refusalP99'])} ({num((s['refusalRetryAfter'] or 0) * 100)}%)")
                wired.append((ms(wire_p99(s, "accepted")), ms(wire_p99(s, "refused"))))
            ds = row.get("drainStep")
            drain = num(ds["drainSeconds"], 1) if ds and ds.get("drainSeconds") is not None else ("-" if not ds else "not drained")
            server, polled = confirm_p95(ds or k)
            wire_cell = (" / ".join(a for a, _ in wired) + "; " + " / ".join(r for _, r in wired)) if wired else "-"
            cells += [" / ".join(good), " / ".join(conf), " / ".join(acc), " / ".join(refused), wire_cell, drain,
                      f"{ms(server)} / {ms(polled)}"]
        cells.append(f"{num(cpu, 2)} ({num(ratio(cpu, ping_cpu), 1)})")
        cells.append("-" if name == "PING" else num(lost(result, name)[0]))
        body.append(cells)
    lines += table(head, body)
    if not any(s.get("wire") for s in result["steps"]):
        lines.append(f"on the wire: not captured ({result.get('wireOff') or 'a run from before the bench captured it'})")
    else:
        lines.append("on the wire: the server's own answer time, from a request's first segment in to its answer's first "
                     "segment out on the loopback (tcpdump, load-tests/bench/wire.py); k6's times add its own wait for a CPU")

    lines.append("")
    lines.append("CPU per order (ms; utime+stime from /proc from the step's first arrival until its backlog drained, / orders accepted; "
                 "ping: / pings served; total = api+worker+rabbitmq+redis+postgres, k6 and the wire capture's tcpdump apart)")
    head = ["row", "step", "accepted", "api", "worker", "rabbitmq", "redis", "postgres", "total", "k6", "tcpdump"]
    body = []
    for name, row in rows.items():
        cs = cpu_step(name, row)
        if not cs:
            continue
        c = cs["cpuMsPerOrder"]
        body.append([name, f"{cs['label']} ({cs['seconds']}s)", cs["accepted"]] +
                    [num(c.get(r), 3) for r in ROLES] + [num(c.get("total"), 3), num(c.get("k6"), 3),
                                                          num(c.get("tcpdump"), 3)])
    lines += table(head, body)

    idle = result.get("idleCores")
    if idle:
        lines.append("")
        lines.append(f"CPU per order net of idle (ms; each process's CPU with no load, measured for {result['idleSeconds']} s "
                     "after the warm-up, times the step's window, taken out first: what the orders themselves cost). "
                     "A request's cost falls with the rate (wake-ups and system calls are shared by more requests), so "
                     "each row is also set against the ping step nearest its rate. Idle cores: "
                     + ", ".join(f"{r} {idle[r]:.3f}" for r in ROLES if r in idle))
        head = ["row", "step", "accepted", "api", "worker", "rabbitmq", "redis", "postgres", "total (x PING row)",
                "ping at the nearest rate: step, ms", "total x that ping", "api x that ping"]
        body = []
        ping_net = (cpu_step("PING", ping) or {}).get("cpuMsPerOrderNet", {}).get("total") if ping else None
        for name, row in rows.items():
            cs = cpu_step(name, row)
            net = cs.get("cpuMsPerOrderNet") if cs else None
            if not net:
                continue
            near = nearest_ping(ping, cs["rate"]) if name != "PING" else None
            near_net = near["cpuMsPerOrderNet"]["total"] if near else None
            body.append([name, f"{cs['label']} ({cs['seconds']}s)", cs["accepted"]] +
                        [num(net.get(r), 3) for r in ROLES] +
                        [f"{num(net['total'], 3)} ({num(ratio(net['total'], ping_net), 1)})",
                         f"{near['label']}, {num(near_net, 3)}" if near else "-",
                         num(ratio(net["total"], near_net), 1) if near else "-",
                         num(ratio(net.get("api"), near_net), 1) if near else "-"])
        lines += table(head, body)

    lines.append("")
    lines.append("Memory (max over the run, sampled every second): heap used = sum of jvm_memory_used_bytes{area=\"heap\"}, "
                 "live = jvm_gc_live_data_size_bytes (after the last GC), both from /actuator/prometheus; "
                 "RSS = VmRSS (postgres: summed over its processes)")
    head = ["process", "heap used MiB", "live after GC MiB", "RSS MiB"]
    body = []
    for role in ROLES:
        heap = result["heapMax"].get(role)
        live = result.get("liveMax", {}).get(role)
        rss = result["rssMax"].get(role)
        app = role in ("api", "worker")
        body.append([role, num(heap / MIB) if heap else ("n/a" if app else "-"),
                     num(live / MIB) if live else ("n/a" if app else "-"), num(rss / MIB) if rss else "-"])
    lines += table(head, body)

    lines.append("")
    lines.append("Steps (each its own k6 run; the next starts when the sale holds nothing)")
    head = ["#", "step", "rate /s", "s", "offered /s", "accepted /s", "confirmed /s", "errors %", "p99 ms",
            "accepted p99", "refusals (p99 ms, Retry-After %)", "wire p99 acc / ref", "dropped", "unexp", "knee", "CPU ms/order", "k6 ms/order",
            "steal %", "drain s", "held max", "queue max", "confirm p95 server/polled", "invariant"]
    body = []
    for s in result["steps"]:
        if "mode" not in s:
            body.append([s["n"], s["label"], s["rate"], s["seconds"]] + ["-"] * 19)
            continue
        refs = " ".join(f"{c}:{int(n)}" for c, n in s["refusals"].items()) or "-"
        if s["refusalCount"]:
            refs += f" ({ms(s['refusalP99'])}, {num((s['refusalRetryAfter'] or 0) * 100)}%)"
        inv = s.get("invariant")
        body.append([s["n"], s["label"], s["rate"], s["seconds"], num(s["offeredPerSecond"], 1),
                     num(s["acceptedPerSecond"], 1), num(s.get("confirmedPerSecond"), 1), num(s["errorRate"] * 100, 1),
                     ms(s["p99"]), ms(s.get("acceptedP99")), refs, wire_text(s), int(s["dropped"]), int(s["unexpected"]),
                     "ok" if s["kneeOk"] else ", ".join(s["kneeReasons"]), num(s["cpuMsPerOrder"].get("total"), 3),
                     num(s["cpuMsPerOrder"].get("k6"), 3), num(s.get("stealPercent"), 0), num(s.get("drainSeconds"), 1),
                     num(s.get("heldMax")),
                     "-" if s.get("queueMax") is None else int(s["queueMax"]),
                     "/".join(ms(x) for x in confirm_p95(s)),
                     "-" if inv is None else ("OK" if inv == 1 else "FAIL")])
    lines += table(head, body)

    verdict = targets(result, rows, ping_knee, ping_sat)
    lines.append("")
    lines.append("Conservation and loss (per sale, after the last step: the admin stock view)")
    for mode in (m for m in rows if m != "PING"):
        _, text, _ = lost(result, mode)
        lines.append(f"- {mode}: {text}")
    lines.append(f"- broker queue {opts['queue']}: {result.get('finalQueue')} messages at the end")
    lines.append("")
    lines.append("Targets (issue 11)")
    for ok, text in verdict["lines"]:
        lines.append(f"- {'PASS' if ok is True else 'FAIL' if ok is False else 'n/a '} {text}")
    lines.append("")
    lines.append(f"correctness: {'OK' if verdict['correct'] else 'FAILED'}; targets: "
                 f"{'all met' if verdict['targetsMet'] else 'not all met'}")
    for note in result["processes"]:
        lines.append(f"process {note}")
    for role, err in result["heapErrors"].items():
        if role not in result["heapMax"]:
            lines.append(f"heap of {role} not read: {err}")
    if result.get("queueError"):
        lines.append(f"RabbitMQ queue depth not read: {result['queueError']}")
    return "\n".join(lines) + "\n", verdict


def lost(result, mode):
    """(units lost, description, ok): units clients saw accepted (201/202) against units the sale confirmed
    or rejected; ok also needs nothing failed or queued, a balanced view and every step's invariant OK."""
    units = sum(s.get("unitsByMode", {}).get(mode, 0) for s in result["steps"])
    view = result["final"].get(mode) or {}
    if "confirmed" not in view:
        return None, f"FAILED: stock view unavailable: {view.get('error')}", False
    confirmed, rejected, failed, queued = view["confirmed"], view["rejected"], view["failed"], view["queued"]
    missing = max(0, units - confirmed - rejected)
    invariants = [s.get("invariant") for s in result["steps"] if s.get("mode") == mode]
    bad = [i for i in invariants if i != 1]
    ok = missing == 0 and failed == 0 and queued == 0 and bool(view.get("balanced")) and not bad
    text = (f"{'OK' if ok else 'FAILED'}: clients saw {int(units)} units accepted, the sale confirmed {confirmed}, "
            f"rejected {rejected}, failed {failed}, queued {queued}, balanced {view.get('balanced')}, "
            f"invariant OK in {len(invariants) - len(bad)}/{len(invariants)} steps")
    return int(missing + failed), text, ok


def targets(result, rows, ping_knee, ping_sat):
    out = []

    def check(ok, text):
        out.append((ok, text))

    def knee_of(m):
        r = rows.get(m)
        return r["knee"]["rate"] if r and r["knee"] else None

    def sat_of(m):
        r = rows.get(m)
        return saturation(r)["acceptedPerSecond"] if r and r["steps"] else None

    def cmp(value, limit):
        if value is None or limit is None:
            return None
        return value >= limit

    ak, sk, asat = knee_of("ASYNC"), knee_of("SYNC"), sat_of("ASYNC")

    def label(m):
        return knee_text(rows[m])[0] if rows.get(m) and rows[m]["steps"] else "-"

    check(cmp(ak, ping_knee and 0.6 * ping_knee), f"ASYNC knee {label('ASYNC')}/s >= 0.6 x ping knee {ping_knee}/s")
    check(cmp(asat, ping_sat and 0.6 * ping_sat), f"ASYNC saturation {num(asat)}/s >= 0.6 x ping saturation {num(ping_sat)}/s")
    check(cmp(sk, ping_knee and 0.4 * ping_knee), f"SYNC knee {label('SYNC')}/s >= 0.4 x ping knee {ping_knee}/s (one sale)")
    a = rows.get("ASYNC")
    cpu = cpu_step("ASYNC", a)["cpuMsPerOrder"]["total"] if a and cpu_step("ASYNC", a) else None
    check(None if cpu is None else cpu <= 1.0, f"CPU per ASYNC order {num(cpu, 3)} ms <= 1 ms (all processes but k6)")
    good, refused, ra, acc, wire_refused, wire_acc = [], [], [], [], [], []
    for m in (m for m in rows if m != "PING"):
        r = rows[m]
        ref = reference(r)
        for f, s in r.get("overload", {}).items():
            pct = ratio(s["acceptedPerSecond"], ref["acceptedPerSecond"] if ref else None)
            good.append((pct is not None and pct >= 0.9, f"{m} {f}x {num(pct * 100 if pct is not None else None)}%"))
            if s["refusalCount"]:
                refused.append((s["refusalP99"] < 50, f"{m} {f}x {ms(s['refusalP99'])}ms"))
                ra.append(((s["refusalRetryAfter"] or 0) == 1, f"{m} {f}x {num((s['refusalRetryAfter'] or 0) * 100)}%"))
            acc.append((s.get("acceptedP99") is not None and s["acceptedP99"] < 100, f"{m} {f}x {ms(s.get('acceptedP99'))}ms"))
            if captured(s):
                wr, wa = wire_p99(s, "refused"), wire_p99(s, "accepted")
                if wr is not None:
                    wire_refused.append((wr < 50, f"{m} {f}x {ms(wr)}ms"))
                wire_acc.append((wa is not None and wa < 100, f"{m} {f}x {ms(wa)}ms"))

    def all_of(items, text, empty=None):
        if not items:
            check(empty, f"{text}: no refusals" if empty else f"{text}: no such step")
            return
        check(all(ok for ok, _ in items), f"{text}: {', '.join(t for _, t in items)}")

    all_of(good, "overload goodput >= 90 % of the knee's")
    all_of(refused, "refusal p99 < 50 ms at overload", empty=True)
    all_of(ra, "every refusal at overload carries Retry-After", empty=True)
    all_of(acc, "accepted p99 < 100 ms at overload")
    if wire_acc:
        all_of(wire_refused, "on the wire (the server's own time): refusal p99 < 50 ms at overload", empty=True)
        all_of(wire_acc, "on the wire (the server's own time): accepted p99 < 100 ms at overload")
    losses = {m: lost(result, m) for m in rows if m != "PING"}
    correct = all(ok for _, _, ok in losses.values()) and result.get("finalQueue") == 0
    check(correct, "0 accepted orders lost, conservation balanced, nothing queued or failed: "
          + ", ".join(f"{m} {num(n)} lost{'' if ok else ' (see above)'}" for m, (n, _, ok) in losses.items())
          + f", broker queue {result.get('finalQueue')}")
    ds = a.get("drainStep") if a else None
    d = ds.get("drainSeconds") if ds else None
    check(None if not ds else (d is not None and d <= 10),
          f"ASYNC backlog drained within 10 s of a {ds['seconds'] if ds else '-'} s step at its knee: {num(d, 1)} s")
    server, polled = confirm_p95(ds)
    c95 = server if server is not None else polled
    n = ((ds or {}).get("serverConfirm") or {}).get("count") if server is not None else (ds or {}).get("finalConfirmed")
    check(None if c95 is None else c95 < 1000,
          f"ASYNC confirm p95 < 1 s at the knee: {ms(c95)} ms ({'server-side, created_at -> updated_at' if server is not None else 'polled by clients'}, "
          f"{num(n)} orders)")
    auto_vs_fixed(rows, check)
    heaps = {r: result["heapMax"].get(r) for r in ("api", "worker")}
    check(None if any(v is None for v in heaps.values()) else all(v <= 512 * MIB for v in heaps.values()),
          "heap <= 512 MiB per process: " + ", ".join(f"{r} {num(v / MIB) if v else '?'} MiB" for r, v in heaps.items()))
    met = all(ok is True for ok, _ in out)
    return {"lines": out, "correct": correct, "targetsMet": met,
            "checks": [{"ok": ok, "text": t} for ok, t in out]}


def auto_vs_fixed(rows, check):
    """AUTO against the better fixed mode at the same offered load: every ramp rate all three ran, and the
    flash spike. Within 10 %: goodput >= 0.9 x the better goodput, accepted p99 <= 1.1 x the better p99."""
    if not all(rows.get(m) for m in ("SYNC", "ASYNC", "AUTO")):
        return

    def compare(name, steps):
        if any(s is None for s in steps.values()):
            return None
        good = max(steps["SYNC"]["acceptedPerSecond"], steps["ASYNC"]["acceptedPerSecond"])
        p99s = [steps[m].get("acceptedP99") for m in ("SYNC", "ASYNC")]
        best = min(x for x in p99s if x is not None) if any(x is not None for x in p99s) else None
        auto = steps["AUTO"]
        ok = (auto["acceptedPerSecond"] >= 0.9 * good
              and (best is None or (auto.get("acceptedP99") is not None and auto["acceptedP99"] <= 1.1 * best)))
        return ok, (f"{name}: AUTO {num(auto['acceptedPerSecond'])}/s p99 {ms(auto.get('acceptedP99'))}ms"
                    f" vs best {num(good)}/s p99 {ms(best)}ms")

    def ramp_at(m, rate):
        return next((s for s in rows[m]["steps"] if s.get("kind") == "ramp" and s["rate"] == rate), None)

    rates = sorted({s["rate"] for s in rows["AUTO"]["steps"] if s.get("kind") == "ramp"})
    ramp = [c for c in (compare(f"{r}/s", {m: ramp_at(m, r) for m in ("SYNC", "ASYNC", "AUTO")}) for r in rates) if c]
    if ramp:
        check(all(ok for ok, _ in ramp), "AUTO within 10 % of the better fixed mode on the ramp (goodput, accepted p99): "
              + ", ".join(f"{t}{'' if ok else ' (FAIL)'}" for ok, t in ramp))
    else:
        check(None, "AUTO within 10 % of the better fixed mode on the ramp: no rate all three modes ran")
    flash = compare("flash", {m: rows[m].get("flash") for m in ("SYNC", "ASYNC", "AUTO")})
    check(None if flash is None else flash[0],
          f"AUTO within 10 % of the better fixed mode on the flash spike: {flash[1] if flash else 'not run'}")


def rows_of(result):
    """The rows (PING, SYNC, ASYNC, AUTO) with their steps, from bench.json's step numbers."""
    by_n = {s["n"]: s for s in result["steps"]}
    rows = {}
    for name, r in result["rows"].items():
        rows[name] = {
            "knee": by_n.get(r["knee"]), "steps": [by_n[n] for n in r["steps"]],
            "overload": {f: by_n[n] for f, n in r.get("overload", {}).items()},
            "drainStep": by_n.get(r.get("drainStep")),
            "flash": by_n.get(r.get("flash")),
        }
    return rows


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print(build(data, rows_of(data))[0], end="")
