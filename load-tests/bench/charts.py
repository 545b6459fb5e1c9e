#!/usr/bin/env python3
"""The seeds drill's report: summary.md (Markdown tables), the AUTO check per sweep point, and the charts
(PNG), all made from seeds.json. Run through charts.sh, which provides matplotlib in a venv:

  load-tests/bench/charts.sh RESULTS/seeds.json [--out DIR] [--p99-slack-ms MS]

AUTO check, at every downstream latency of the sweep (issue 15: "within 10 % of the better fixed mode"):
  the better fixed mode is the one of SYNC and ASYNC with the higher knee goodput (accepted/s of its knee
  step; on a tie, the lower p99 there; with no knee in either, the lower p99 at the first rate);
  goodput  AUTO's knee goodput >= 90 % of the better mode's (at the first rate when neither has a knee);
  p99      AUTO's p99 at the better mode's knee rate (its nearest measured rate) <= 110 % of the better
           mode's p99 there, plus --p99-slack-ms.
A/A, where the run has a fixed mode's second ramp (seeds --again): the same check with that ramp in AUTO's
  place and the mode's first ramp as the better one, printed and reported but not part of the exit status.
Exit status: 0 when every point passes, 1 when one fails, 2 when the data is unusable.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import ms, num, table  # noqa: E402  (the bench's table helpers)

MODES = ["SYNC", "ASYNC", "AUTO"]
STYLE = {"PING": ("grey", "--", "s"), "SYNC": ("tab:blue", "-", "o"), "ASYNC": ("tab:orange", "-", "^"),
         "AUTO": ("tab:green", "-", "D")}
GOODPUT_SHARE, P99_FACTOR = 0.9, 1.1


class Run:
    def __init__(self, data):
        self.d = data
        self.steps = {s["n"]: s for s in data["steps"]}

    def row(self, point, name):
        r = point["rows"].get(name)
        if r is None:
            return None, []
        steps = sorted((self.steps[n] for n in r["steps"]), key=lambda s: s["rate"])
        return (self.steps[r["knee"]] if r.get("knee") else None), steps

    def first_rate(self, point):
        rates = [self.row(point, m)[1][0]["rate"] for m in MODES if self.row(point, m)[1]]
        return min(rates) if rates else None


def at_rate(steps, rate):
    """The step at this rate, else the nearest measured one."""
    if not steps or rate is None:
        return None
    return min(steps, key=lambda s: (abs(s["rate"] - rate), s["rate"]))


def goodput(step):
    return None if step is None else step.get("acceptedPerSecond")


def again(mode):
    """The row of a fixed mode's second ramp at the same point (seeds --again): the A/A control."""
    return f"{mode} again"


def auto_check(run, point, slack):
    """(verdict dict) for one sweep point, or None when AUTO or both fixed modes are missing."""
    return compare(run, point, "AUTO", ("SYNC", "ASYNC"), slack)


def aa_checks(run, point, slack):
    """The same check for each fixed mode's second ramp against its first: how far one mode moves between two
    runs of itself, so whether the 10 % bound is within what this box can resolve. {mode: verdict}."""
    found = {}
    for m in ("SYNC", "ASYNC"):
        c = compare(run, point, again(m), (m,), slack)
        if c is not None:
            found[m] = c
    return found


def compare(run, point, candidate, fixed_modes, slack):
    """(verdict dict): the candidate row against the better of the fixed rows present, or None."""
    rows = {m: run.row(point, m) for m in (candidate, *fixed_modes) if point["rows"].get(m)}
    fixed = [m for m in fixed_modes if m in rows]
    if candidate not in rows or not fixed:
        return None
    first = run.first_rate(point)

    def rank(m):
        knee, steps = rows[m]
        if knee is not None:
            return (1, goodput(knee), -(knee["p99"] or 1e9))
        s = at_rate(steps, first)
        return (0, 0, -((s or {}).get("p99") or 1e9))

    best = max(fixed, key=rank)
    best_knee, best_steps = rows[best]
    auto_knee, auto_steps = rows[candidate]
    if best_knee is not None:
        ref_rate = best_knee["rate"]
        best_g = goodput(best_knee)
        auto_g = goodput(auto_knee) if auto_knee is not None else 0.0
    else:
        ref_rate = first
        best_g = goodput(at_rate(best_steps, first))
        auto_g = goodput(at_rate(auto_steps, first))
    best_ref, auto_ref = at_rate(best_steps, ref_rate), at_rate(auto_steps, ref_rate)
    best_p99 = (best_ref or {}).get("p99")
    auto_p99 = (auto_ref or {}).get("p99")
    g_ok = best_g is not None and auto_g is not None and auto_g >= GOODPUT_SHARE * best_g
    p_ok = best_p99 is not None and auto_p99 is not None and auto_p99 <= P99_FACTOR * best_p99 + slack
    return {"latencyMs": point["latencyMs"], "better": best, "refRate": ref_rate,
            "autoRate": (auto_ref or {}).get("rate"), "betterGoodput": best_g, "autoGoodput": auto_g,
            "betterP99": best_p99, "autoP99": auto_p99, "goodputOk": g_ok, "p99Ok": p_ok, "pass": g_ok and p_ok}


def knee_cell(knee, steps):
    if knee is not None:
        return f"{knee['rate']} ({num(goodput(knee))}/s)"
    return f"<{steps[0]['rate']}" if steps else "-"


def sweep_section(run, checks, aa, charts):
    d = run.d
    lines = ["## Sweep: knee and p99 against downstream latency", ""]
    if not d["points"]:
        return lines + ["(no sweep in this run)", ""]
    rows = [r for r in ["PING"] + MODES + [again("SYNC"), again("ASYNC")] if any(r in p["rows"] for p in d["points"])]
    head = ["latency ms"] + [f"{r} knee" for r in rows] + [f"{m} p99 @first" for m in rows if m != "PING"] + ["AUTO check"]
    body = []
    for p in d["points"]:
        first = run.first_rate(p)
        cells = [str(p["latencyMs"])]
        for r in rows:
            cells.append(knee_cell(*run.row(p, r)))
        for r in rows:
            if r == "PING":
                continue
            s = at_rate(run.row(p, r)[1], first)
            cells.append(f"{ms((s or {}).get('p99'))} @{(s or {}).get('rate', '-')}")
        c = checks.get(p["latencyMs"])
        cells.append("-" if c is None else ("PASS" if c["pass"] else "FAIL"))
        body.append(cells)
    lines += table(head, body)
    lines += ["", f"knee = highest step with p99 < {d['kneeP99Ms']:g} ms, errors (503/429/5xx/timeouts) < "
              f"{d['kneeErrors'] * 100:g} %, and k6 starting >= {d['kneeOffered'] * 100:g} % of the arrivals; "
              "shown as offered rate (accepted/s). `<N`: not even the first step passed.", ""]
    lines += ["### AUTO within 10 % of the better fixed mode", ""]
    for lat in sorted(checks):
        c = checks[lat]
        lines.append(f"- {lat} ms: **{'PASS' if c['pass'] else 'FAIL'}**, better fixed mode {c['better']}; goodput AUTO "
                     f"{num(c['autoGoodput'])}/s vs {num(c['betterGoodput'])}/s ({'ok' if c['goodputOk'] else 'below 90 %'}); "
                     f"p99 at {c['refRate']}/s AUTO {ms(c['autoP99'])} ms (at {c['autoRate']}/s) vs {ms(c['betterP99'])} ms "
                     f"({'ok' if c['p99Ok'] else 'above 110 %'})")
    if any(aa.values()):
        lines += ["", "### Each fixed mode against a second run of itself (A/A, `--again`)", "",
                  "The same check as AUTO's, with a fixed mode's second ramp (after AUTO's) in AUTO's place: "
                  "where a mode misses the bound against itself, the bound is finer than what this box resolves "
                  "between two runs.", ""]
        for lat in sorted(aa):
            for m, c in aa[lat].items():
                lines.append(f"- {lat} ms, {m}: **{'PASS' if c['pass'] else 'FAIL'}**; goodput {num(c['autoGoodput'])}/s "
                             f"vs {num(c['betterGoodput'])}/s ({'ok' if c['goodputOk'] else 'below 90 %'}); p99 at "
                             f"{c['refRate']}/s {ms(c['autoP99'])} ms (at {c['autoRate']}/s) vs {ms(c['betterP99'])} ms "
                             f"({'ok' if c['p99Ok'] else 'above 110 %'})")
    lines += ["", "### Every step", ""]
    head = ["latency ms", "row", "offered/s", "accepted/s", "p50 ms", "p99 ms", "errors %", "dropped", "CPU ms/order", "steal %", "knee"]
    body = []
    for p in d["points"]:
        for r in rows:
            for s in run.row(p, r)[1]:
                body.append([p["latencyMs"], r, num(s["offeredPerSecond"], 1), num(s["acceptedPerSecond"], 1), ms(s["p50"]),
                             ms(s["p99"]), num(s["errorRate"] * 100, 1), num(s.get("dropped")),
                             num((s.get("cpuMsPerOrder") or {}).get("total"), 2), num(s.get("stealPercent"), 0),
                             "ok" if s["kneeOk"] else ", ".join(s["kneeReasons"])])
    lines += table(head, body) + [""]
    lines += [f"![{c}]({c})" for c in charts if c in ("knee.png", "p99.png", "curves.png")] + [""]
    return lines


def claim1_section(run, charts):
    c1 = run.d.get("claim1")
    lines = ["## Claim 1: SYNC with far more requests than pooled connections, admission on and off", ""]
    if not c1:
        return lines + ["(not run)", ""]
    off = ", ".join(f"{k}={v}" for k, v in c1["admissionOff"].items())
    lines += [f"Downstream latency {c1['latencyMs']} ms, SYNC knee {c1['syncKnee']}/s; admission off = {off}.", ""]
    head = ["admission", "offered/s", "accepted/s", "503/s", "p50 ms", "p99 ms", "refusal p99 ms", "threads (JVM/process)",
            "in flight max", "pool pending max", "pool wait mean ms", "group queue max", "CPU api/total %"]
    body = []
    for variant in ("off", "on"):
        for n in c1["variants"].get(variant, []):
            s = run.steps[n]
            m = s.get("apiMeters") or {}
            cpu = s.get("cpuUtilisation") or {}
            total = sum(v for k, v in cpu.items() if k != "k6")
            body.append([variant, num(s["offeredPerSecond"], 1), num(s["acceptedPerSecond"], 1),
                         num(s["refusalCount"] / s["seconds"], 1), ms(s["p50"]), ms(s["p99"]),
                         ms(s.get("refusalP99")) if s["refusalCount"] else "-",
                         f"{num(m.get('jvm_threads_live_threads'))}/{num(m.get('process_threads'))}",
                         num(m.get("http_server_requests_active_seconds_count")),
                         num(m.get("hikaricp_connections_pending")),
                         num(m.get("poolWaitMeanMs"), 1),
                         num(m.get("flashsale_purchase_group_queued")),
                         f"{num(cpu.get('api', 0) * 100)}/{num(total * 100)}"])
    lines += table(head, body) + [""]
    lines += ["Threads: the API's platform threads (requests run on virtual threads, which neither count shows). "
              "In flight: requests the API was serving (sampled each second). Pool: Hikari's threads waiting for a connection (sampled) and the mean time to get one (its timer over the step). CPU: % of one core over the step "
              "(api, and api + worker + broker + Redis + Postgres).", ""]
    if "claim1.png" in charts:
        lines += ["![claim1](claim1.png)", ""]
    return lines


def claim5_section(run):
    ns = run.d.get("claim5") or []
    lines = ["## Claim 5: ramp, stress and spike on both modes", ""]
    if not ns:
        return lines + ["(not run)", ""]
    head = ["shape", "mode", "intended arrivals", "offered (k6 started)", "dropped by k6", "accepted", "accepted units",
            "confirmed units", "lost units", "confirmed, no answer", "503/429", "timeouts/other", "accept p95/p99 ms",
            "balanced"]
    body = []
    for n in ns:
        s = run.steps[n]
        c = s["claim5"]
        units, confirmed = s.get("unitsAccepted") or 0, c.get("confirmedUnits")
        unanswered = None if confirmed is None else max(0, confirmed - units)
        body.append([c["shape"], s["mode"], c["intendedArrivals"], num(s["offered"]), num(s.get("dropped")),
                     num(s["accepted"]), num(units), num(confirmed), num(c.get("lostUnits")), num(unanswered),
                     num(s["refusalCount"]), num((s.get("refusals") or {}).get("OTHER", 0)),
                     f"{ms(s['p95'])}/{ms(s['p99'])}", c.get("balanced")])
    lines += table(head, body)
    lines += ["", "Offered: arrivals k6 started; dropped: arrivals k6 could not start (no free VU): on a box that runs "
              "k6 beside the system, the load generator is part of the limit. Lost = accepted units - confirmed - "
              "still queued, after the drain. Confirmed, no answer: units confirmed beyond those the client saw "
              "accepted (its 10 s timeout expired first: the order stands, the shopper was not told). "
              "Timeouts/other: answers that were neither an acceptance nor a refusal.", ""]
    return lines


def line_chart(ax, xs, ys, name, label=None):
    color, style, marker = STYLE.get(name, ("black", "-", "o"))
    ax.plot(xs, ys, linestyle=style, marker=marker, color=color, label=label or name)


def draw(run, out):
    d = run.d
    made = []
    points = d["points"]
    if points:
        lats = [p["latencyMs"] for p in points]
        xs = list(range(len(lats)))
        rows = [r for r in ["PING"] + MODES if any(r in p["rows"] for p in points)]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for r in rows:
            ys = [goodput(run.row(p, r)[0]) or 0 for p in points]
            line_chart(ax, xs, ys, r)
        ax.set_xticks(xs, [str(x) for x in lats])
        ax.set_xlabel("downstream latency, apps <-> Postgres (ms)")
        ax.set_ylabel(f"knee: accepted/s with p99 < {d['kneeP99Ms']:g} ms (0: none)")
        ax.set_title("Knee against downstream latency")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out, "knee.png"), dpi=110)
        plt.close(fig)
        made.append("knee.png")

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for r in [r for r in rows if r != "PING"]:
            ys = [(at_rate(run.row(p, r)[1], run.first_rate(p)) or {}).get("p99") for p in points]
            line_chart(ax, xs, ys, r)
        ax.set_xticks(xs, [str(x) for x in lats])
        ax.set_yscale("log")
        ax.set_xlabel("downstream latency, apps <-> Postgres (ms)")
        ax.set_ylabel("accept p99 at the first rate (ms, log)")
        ax.set_title(f"p99 at {points[0] and run.first_rate(points[0])}/s against downstream latency")
        ax.grid(alpha=0.3, which="both")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out, "p99.png"), dpi=110)
        plt.close(fig)
        made.append("p99.png")

        fig, axes = plt.subplots(2, len(points), figsize=(3.2 * len(points) + 1, 6.5), squeeze=False)
        for i, p in enumerate(points):
            for r in [r for r in rows if r != "PING"]:
                steps = run.row(p, r)[1]
                line_chart(axes[0][i], [s["offeredPerSecond"] for s in steps], [s["p99"] for s in steps], r)
                line_chart(axes[1][i], [s["offeredPerSecond"] for s in steps], [s["acceptedPerSecond"] for s in steps], r)
            axes[0][i].set_title(f"{p['latencyMs']} ms")
            axes[0][i].set_yscale("log")
            axes[0][i].axhline(d["kneeP99Ms"], color="red", linewidth=0.8, linestyle=":")
            axes[1][i].set_xlabel("offered/s")
            axes[1][i].set_ylim(bottom=0)
            for ax in (axes[0][i], axes[1][i]):
                ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("p99 ms (log)")
        axes[1][0].set_ylabel("accepted/s (goodput)")
        axes[0][0].legend(fontsize="small")
        fig.suptitle("p99 and goodput against offered load, per downstream latency")
        fig.tight_layout()
        fig.savefig(os.path.join(out, "curves.png"), dpi=110)
        plt.close(fig)
        made.append("curves.png")

    c1 = d.get("claim1")
    if c1 and c1["variants"]:
        fig, axes = plt.subplots(1, 3, figsize=(13, 4))
        for variant, name in (("on", "SYNC"), ("off", "PING")):
            steps = [run.steps[n] for n in c1["variants"].get(variant, [])]
            xs = [s["offeredPerSecond"] for s in steps]
            label = f"admission {variant}"
            line_chart(axes[0], xs, [s["p99"] for s in steps], name, label)
            line_chart(axes[1], xs, [s["acceptedPerSecond"] for s in steps], name, label)
            line_chart(axes[2], xs, [(s.get("apiMeters") or {}).get("poolWaitMeanMs") for s in steps], name, label)
        axes[0].set_ylabel("p99 ms (log)")
        axes[0].set_yscale("log")
        axes[1].set_ylabel("accepted/s (goodput)")
        axes[1].set_ylim(bottom=0)
        axes[2].set_ylabel("Hikari pool wait, mean ms")
        for ax in axes:
            ax.set_xlabel("offered/s")
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
        fig.suptitle(f"Claim 1: SYNC beyond its knee, {c1['latencyMs']} ms downstream latency")
        fig.tight_layout()
        fig.savefig(os.path.join(out, "claim1.png"), dpi=110)
        plt.close(fig)
        made.append("claim1.png")
    return made


def build(data, out, slack=0.0):
    """Writes the charts and summary.md into out; returns (summary text, AUTO's checks by latency, the A/A
    checks by latency: {mode: verdict})."""
    run = Run(data)
    checks = {}
    for p in data["points"]:
        c = auto_check(run, p, slack)
        if c is not None:
            checks[p["latencyMs"]] = c
    aa = {p["latencyMs"]: aa_checks(run, p, slack) for p in data["points"]}
    charts = draw(run, out)
    opts = data.get("options", {})
    head = [f"# seeds drill {data.get('startedAt')}, commit {data.get('commit')}",
            "",
            f"command: `{data.get('command')}`; {data.get('cpus')} CPUs, load average before "
            f"{' '.join(f'{x:.2f}' for x in data.get('loadavgBefore') or [])}, {data.get('seconds', 0) / 60:.1f} min"
            + (" **(--quick: a self-test of the drill, not a measurement)**" if opts.get("quick") else ""),
            "", f"Latency toxic on {', '.join(opts.get('toxic_on') or [])} (toxiproxy, downstream direction: each round "
            f"trip +N ms); apps reach {', '.join(opts.get('proxy') or [])} through the proxy. Step length "
            f"{opts.get('step_seconds')} s; k6 on the same box.", ""]
    lines = head + sweep_section(run, checks, aa, charts) + claim1_section(run, charts) + claim5_section(run)
    text = "\n".join(lines)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    data["autoCheck"] = {str(k): v for k, v in checks.items()}
    return text, checks, aa


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("seeds_json")
    p.add_argument("--out", default=None, help="folder for summary.md and the charts (default: beside seeds.json)")
    p.add_argument("--p99-slack-ms", type=float, default=0.0, help="absolute slack added to the p99 bound (default 0)")
    a = p.parse_args()
    try:
        with open(a.seeds_json) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        print(f"[charts] cannot read {a.seeds_json}: {e}", file=sys.stderr)
        return 2
    out = a.out or os.path.dirname(os.path.abspath(a.seeds_json))
    os.makedirs(out, exist_ok=True)
    _, checks, aa = build(data, out, a.p99_slack_ms)
    for lat in sorted(checks):
        c = checks[lat]
        print(f"[check] {lat:>4} ms: {'PASS' if c['pass'] else 'FAIL'} AUTO goodput {num(c['autoGoodput'])}/s vs "
              f"{c['better']} {num(c['betterGoodput'])}/s, p99 {ms(c['autoP99'])} vs {ms(c['betterP99'])} ms at "
              f"{c['refRate']}/s")
    for lat in sorted(aa):
        for m, c in aa[lat].items():
            print(f"[check] {lat:>4} ms: A/A {m} again {'PASS' if c['pass'] else 'FAIL'} goodput "
                  f"{num(c['autoGoodput'])}/s vs {num(c['betterGoodput'])}/s, p99 {ms(c['autoP99'])} vs "
                  f"{ms(c['betterP99'])} ms at {c['refRate']}/s")
    print(f"[charts] {os.path.join(out, 'summary.md')}")
    return 0 if all(c["pass"] for c in checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
