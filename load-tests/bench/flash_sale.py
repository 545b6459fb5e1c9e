#!/usr/bin/env python3
"""The flash-sale drill (issue 31), the project's headline benchmark: a sale of S units and N = 50 x S
shoppers arriving as fast as this box allows, one attempt each, so that 98 % of the answers are refusals.
Started by `load-tests/run.sh flash-sale` (which provides k6, the stack, ADMIN_TOKEN and restores the mode).

In one run, beside /ping measured in the same run:
  1. warm-up: ping, purchases and sold-out refusals (C2 needs minutes on two cores);
  2. per mode (SYNC, ASYNC, AUTO): the sale itself, ramped from 0 to --rate in --ramp seconds. Time to
     sold out; winners' and refusals' p50/p99; fairness (the share of units won by the first 1.5 x S
     arrivals, the 503s of arrivals before the last winner); then, once drained: oversold, lost and the
     conservation view (all must be 0, 0, balanced);
  3. cost after sell-out: /ping and purchases of the sold-out sale at the same rate, CPU per request per
     process from /proc, and Redis commands per request (INFO commandstats, scripts' inner commands too);
  4. knees: /ping and the sold-out refusal stepped up in rate, interleaved and repeated at each rate; a knee
     is the highest rate whose median step has p99 under --knee-p99 ms, under 1 % unexpected answers and
     at least 85 % of the arrivals answered.
Writes flash-sale.json and summary.md to --out and exits 1 when an invariant fails (oversold, lost,
unbalanced, unexpected answers in the sale), or with --check when a --check target is missed.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from statistics import median
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procs  # noqa: E402
from bench import Redis  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "pylib"))
from flashtools import k6summary, stack, tokens, web  # noqa: E402
from flashtools.percentiles import percentile  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOAD_TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(LOAD_TESTS)
LINE = re.compile(r"R (\d+) (\d+) (\S+) (\d+) ([\d.]+) (\S+)(?: (\d+) (\d+) (\S+)(?: (\d+) (\S+))?)?")
# 503s that are true answers of an overloaded or still-selling sale: no order, nothing held, ask again.
LINE_ANSWERS = ("UNAVAILABLE", "IN_LINE", "BEYOND_STOCK", "UNITS_HELD")
# Each shopper of the line-retries step asks again with its Line-Place this many times: about what a loser of
# the step crowd at S = 1,000 does (36,000 line answers to 9,000 losers).
LINE_AGAIN = 4
# The line-cost step's rows: the result's key, the targets' name for it, the summary's description.
LINE_ROWS = (("lineCost", "first attempts", "a first attempt joining the line behind the stock, told BEYOND_STOCK"),
             ("lineRetryCost", f"first attempts and {LINE_AGAIN} retries each",
              f"a first attempt, then {LINE_AGAIN} retries with its Line-Place at once, as a crowd's losers send them"))


def log(msg):
    print(f"[flash-sale] {msg}", flush=True)


def parse_args(argv):
    p = stack.drill_parser("load-tests/run.sh flash-sale", __doc__)
    p.add_argument("--quick", action="store_true",
                   help="CI: stock 100, 20 shoppers per unit at 1000/s, no knees, 10 s warm-up (~1 minute)")
    p.add_argument("--modes", default="SYNC,ASYNC,AUTO")
    p.add_argument("--stock", type=int, default=None, help="units of the sale (default 1000)")
    p.add_argument("--per-unit", type=int, default=None, help="shoppers per unit (default 50)")
    p.add_argument("--rate", type=int, default=None,
                   help="arrivals/s at the sale's peak (default 2000: about ping's knee on this box, k6 sharing its two "
                        "cores; at 2500/s the backlog grew for the whole crowd and k6 ran out of its 8,000 VUs, "
                        "dropping 5,584 arrivals at d495f30)")
    p.add_argument("--ramp", type=float, default=1.0, help="seconds from 0 to --rate")
    p.add_argument("--shapes", default="step,ramp",
                   help="the crowds per mode: step (--crowd-rate new shoppers a second from t = 0, each retrying as "
                        "the 503 tells it, carrying its place in the line) and ramp (--rate reached in --ramp s, one "
                        "attempt each)")
    p.add_argument("--crowd-rate", type=int, default=None, help="the step crowd's new shoppers a second (default 2500)")
    p.add_argument("--crowd-seconds", type=float, default=None,
                   help="how long the step crowd arrives (default 4 s, and at least 2 x stock shoppers)")
    p.add_argument("--crowd-retries", type=int, default=10, help="retries of a step-crowd shopper told 503")
    p.add_argument("--redis-oom", default=None, metavar="AT:SECONDS",
                   help="a quiet fault in each step crowd: AT s after it starts, Redis refuses writes (maxmemory just "
                        "under its use, noeviction) for SECONDS s, e.g. 1:8; SOLD_OUT must still wait for every "
                        "unit that may come back")
    p.add_argument("--kill-api", type=float, default=None, metavar="AT",
                   help="SIGKILL the last of --instances AT seconds after the first step crowd's first place (issue 37: an API "
                        "instance killed mid-crowd loses no place); it stays down for the rest of the run")
    p.add_argument("--line-cost", action="store_true", default=None,
                   help="measure a line answer's CPU and p99 against ping at --cost-rate (default: on unless --quick)")
    p.add_argument("--keyed", type=float, default=0.7, help="share of shoppers sending an Idempotency-Key")
    p.add_argument("--warmup", type=int, default=None, help="seconds of warm-up (default 150)")
    p.add_argument("--cost-rate", type=int, default=None, help="arrivals/s of the cost steps (default 1500)")
    p.add_argument("--cost-seconds", type=int, default=None, help="length of each cost step: ping, refusal, ping (default 20; 0 skips the cost and line-cost steps)")
    p.add_argument("--knee-rates", default=None, help="rates of the knee steps (default 1250,1500,...,3000)")
    p.add_argument("--step-seconds", type=int, default=10, help="length of each knee step")
    p.add_argument("--knee-p99", type=float, default=50.0)
    p.add_argument("--knee-repeats", type=int, default=3,
                   help="runs of each knee step, ping and refusal interleaved; the median p99 decides")
    p.add_argument("--drain-bound", type=int, default=300, help="longest wait for the sale to settle (s)")
    p.add_argument("--redis", default=f"{os.environ.get('REDIS_HOST', '127.0.0.1')}:{os.environ.get('REDIS_PORT', '6379')}")
    p.add_argument("--pid", action="append", default=[], metavar="ROLE=PID",
                   help="override process discovery (roles: api worker rabbitmq redis postgres)")
    p.add_argument("--instances", default=None,
                   help="comma-separated base URLs of every API instance behind --base-url (a fleet): each one's "
                        "refusals from memory and from Redis are read from its /actuator/prometheus, and its CPU "
                        "from /proc (default: --base-url alone)")
    p.add_argument("--edge-log", default=None, metavar="HOST:PORT",
                   help="receive the balancer's request log (HAProxy httplog over UDP: a stack started with "
                        "HAPROXY_LOG=HOST:PORT scripts/up.sh --api N) and also report fairness by the order the keyed "
                        "shoppers' first attempts reached the balancer, and how late k6 sent them (k6 shares the cores)")
    p.add_argument("--check", action="store_true",
                   help="also fail on the issue's targets (refusal CPU <= 1.5 x ping, Redis commands per "
                        "refusal <= 0.01, >= 90 %% of units to the first 1.5 x S, refusal knee >= 0.8 x ping's)")
    a = p.parse_args(argv)
    q = a.quick
    a.stock = a.stock or (100 if q else 1000)
    a.per_unit = a.per_unit or (20 if q else 50)
    a.rate = a.rate or (1000 if q else 2000)
    a.warmup = a.warmup if a.warmup is not None else (10 if q else 150)
    a.cost_rate = a.cost_rate or (500 if q else 1500)
    a.cost_seconds = a.cost_seconds if a.cost_seconds is not None else (5 if q else 20)
    if a.knee_rates is None:
        a.knee_rates = "" if q else "1250,1500,1750,2000,2250,2500,2750,3000"
    a.knee_rates = [int(r) for r in a.knee_rates.split(",") if r]
    a.modes = [m for m in a.modes.split(",") if m]
    a.shapes = [x for x in a.shapes.split(",") if x]
    a.crowd_rate = a.crowd_rate or (1000 if q else 2500)
    a.crowd_seconds = a.crowd_seconds or (2 if q else 4)
    a.line_cost = (not q) if a.line_cost is None else a.line_cost
    a.pids = {k: int(v) for k, v in (s.split("=", 1) for s in a.pid)}
    return a


class Drill:
    def __init__(self, a):
        self.a = a
        self.stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.admin = os.environ["ADMIN_TOKEN"]
        self.redis = Redis(a.redis)
        api_port = int(a.base_url.rsplit(":", 1)[1].split("/")[0]) if a.base_url.count(":") == 2 else 8080
        self.disc = procs.Discovery({"api": api_port, "worker": int(os.environ.get("WORKER_PORT", "8081")),
                                     "redis": int(a.redis.rsplit(":", 1)[1]),
                                     "postgres": int(os.environ.get("DB_PORT", "5432")),
                                     "rabbitmq": int(os.environ.get("RABBITMQ_PORT", "5672"))}, a.pids)
        self.instances = [u.rstrip("/") for u in (a.instances or a.base_url).split(",") if u]
        if a.instances:
            # Every API instance's CPU, each under its own role (api-1, api-2, ...), instead of --base-url's.
            self.disc.roots.pop("api", None)
            for n, url in enumerate(self.instances, 1):
                pid = procs.pid_listening_on(int(url.rsplit(":", 1)[1]))
                if pid:
                    self.disc.roots[f"api-{n}"] = pid
                    self.disc.notes.append(f"api-{n}: pid {pid} listens on {url}")
            # The balancer the requests go through (scripts/up.sh --api N: HAProxy) is server CPU too.
            balancer = procs.pid_listening_on(api_port)
            if balancer and balancer not in self.disc.roots.values():
                self.disc.roots["balancer"] = balancer
                self.disc.notes.append(f"balancer: pid {balancer} listens on {a.base_url}: {procs.cmdline(balancer)[:60]}")
        self.edge = EdgeLog(a.edge_log) if a.edge_log else None
        # The step crowd's arrivals are shoppers too: with fewer tokens than arrivals, arrival i + N was shopper i
        # again, whose replays counted as accepted answers without an order of their own ("lost") and as
        # SOLD_OUT before a later reservation (--stock 200 --per-unit 10: 10,000 arrivals on 4,000 tokens).
        self.shoppers = max(a.stock * a.per_unit, self.step_arrivals() if "step" in a.shapes else 0)
        self.result = {"command": os.environ.get("FLASH_COMMAND", "load-tests/run.sh flash-sale"),
                       "commit": git_commit(), "startedAt": self.stamp, "stock": a.stock, "shoppers": self.shoppers,
                       "rate": a.rate, "ramp": a.ramp, "keyed": a.keyed, "processes": self.disc.notes, "modes": {},
                       "instances": self.instances, "kneeRepeats": a.knee_repeats}
        self.failures = []

    # -- the API --------------------------------------------------------------------------------------
    def call(self, method, path, body=None):
        return web.call(method, self.a.base_url + path, body, token=self.admin, timeout=30)

    def create_sale(self, label, stock, limit=1):
        starts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
        ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 6 * 3600))
        sale = self.call("POST", "/api/v1/sales", {
            "sku": f"flash-{self.stamp}-{label}", "name": f"flash-sale drill {label}", "priceCents": 999,
            "stock": stock, "perUserLimit": limit, "startsAt": starts, "endsAt": ends})
        return int(sale["id"])

    def set_mode(self, mode):
        self.call("PUT", "/api/v1/admin/mode", {"mode": mode, "reason": "flash-sale drill"})

    def stock(self, sale):
        for attempt in range(10):
            try:
                return self.call("GET", f"/api/v1/admin/sales/{sale}/stock")
            except (urllib.error.URLError, OSError) as e:  # a busy balancer or instance: ask again
                if attempt == 9:
                    raise
                log(f"stock view of sale {sale} not read ({e}); again in 1 s")
                time.sleep(1)

    def refusal_counts(self):
        """Per instance: purchases refused SOLD_OUT from memory, and by Redis (any mode)."""
        counts = []
        for url in self.instances:
            known = redis = 0.0
            try:
                text = web.get_text(url + "/actuator/prometheus", timeout=10)
            except (OSError, urllib.error.URLError):
                counts.append(None)
                continue
            for line in text.splitlines():
                if line.startswith("flashsale_refusals_known_total") and 'code="SOLD_OUT"' in line:
                    known += float(line.rsplit(" ", 1)[1])
                elif line.startswith("flashsale_purchases_total") and 'outcome="SOLD_OUT"' in line:
                    redis += float(line.rsplit(" ", 1)[1])
            counts.append((known, redis))
        return counts

    def redis_calls(self):
        """Calls of every command since Redis started, commands run inside scripts included."""
        info = self.redis.cmd("INFO", "commandstats")
        return sum(int(m.group(1)) for m in re.finditer(r"calls=(\d+)", info))

    # -- one k6 step ----------------------------------------------------------------------------------
    def k6(self, label, kind, rate, seconds, sale=None, ramp=0.0, arrivals=0, offset=0, log_answers=False,
           expect="201,202,409", retries=0, vus=None, again=0):
        step_dir = os.path.join(self.a.out, "steps", label)
        os.makedirs(step_dir, exist_ok=True)
        summary = os.path.join(step_dir, "summary.json")
        answers = os.path.join(step_dir, "answers.log")
        env = dict(os.environ, KIND=kind, RATE=str(rate), SECONDS=str(seconds), RAMP=str(ramp),
                   ARRIVALS=str(arrivals), OFFSET=str(offset), KEYED=str(self.a.keyed), TOKENS=self.tokens,
                   BASE_URL=self.a.base_url, SALE_ID=str(sale or 0), SUMMARY=summary, EXPECT=expect,
                   RUN_ID=f"flash-{self.stamp}-{label}", LOG="1" if log_answers else "0",
                   # A sale's shoppers wait in the door's line until it sells out: a VU each (~0.2 MB).
                   PRE_VUS=str(vus or (min(8000, 3 * rate) if log_answers else max(50, rate // 4))),
                   MAX_VUS=str(vus or (8000 if log_answers else 4000)), RETRIES=str(retries), AGAIN=str(again))
        cmd = [self.a.k6, "run", "--quiet", "--no-usage-report"]
        if log_answers:
            cmd += ["--console-output", answers]
        if os.environ.get("FLASH_SAMPLES"):  # every request's timing, to see when in a step a tail comes
            cmd += ["--out", "csv=" + os.path.join(step_dir, "samples.csv.gz")]
        cmd.append("drills/flash-sale.js")
        calls0, cpu0, t0 = self.redis_calls(), self.disc.cpu(), time.time()
        proc = subprocess.Popen(cmd, cwd=LOAD_TESTS, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        cpu = procs.cpu_seconds(cpu0, self.disc.cpu())
        cpu["k6"] = usage.ru_utime + usage.ru_stime
        calls = self.redis_calls() - calls0
        with open(os.path.join(step_dir, "k6.log"), "w") as f:
            f.write(out)
        metrics = k6summary.read(summary)
        duration = k6summary.values(metrics, "http_req_duration")
        step = {"label": label, "kind": kind, "rate": rate, "seconds": seconds, "wall": time.time() - t0,
                "k6Exit": os.waitstatus_to_exitcode(status), **k6summary.answers(metrics),
                "p50": duration.get("p(50)"), "p99": duration.get("p(99)"), "cpu": cpu, "redisCalls": calls}
        step["requests"] = step["expected"] + step["unavailable"] + step["other"]
        if log_answers:
            step["answers"] = answers
        return step

    # -- the run --------------------------------------------------------------------------------------
    def tokens_file(self):
        self.tokens = os.path.join(self.a.out, "tokens.json")
        # The sale's shoppers (arrival i is shopper i+1), then as many others for the later steps.
        tokens.write_shoppers(self.tokens, 2 * self.shoppers, f"fs-{self.stamp}-")

    def warm_up(self):
        if self.a.warmup <= 0:
            return
        log(f"warm-up: {self.a.warmup} s of ping, purchases and sold-out refusals")
        big = self.create_sale("warmup", 10_000_000, limit=1000)
        sold_out = self.create_sale("warmup-sold-out", 1)
        self.set_mode("SYNC")
        self.k6("warmup-sold-out", "purchase", 20, 2, sale=sold_out, offset=self.shoppers)
        third = max(1, self.a.warmup // 3)
        self.k6("warmup-ping", "ping", 1500, third, offset=self.shoppers)
        for mode in ("SYNC", "ASYNC"):
            self.set_mode(mode)
            self.k6(f"warmup-{mode}", "purchase", 300, max(1, third // 2), sale=big, offset=self.shoppers)
        self.k6("warmup-refusals", "purchase", 1500, third, sale=sold_out, offset=self.shoppers)
        self.settle(big, bound=self.a.drain_bound)

    def settle(self, sale, bound):
        """Waits until nothing of the sale is held or queued; returns the stock view."""
        deadline = time.time() + bound
        view = self.stock(sale)
        while time.time() < deadline and (view["queued"] or not view["balanced"]):
            time.sleep(1)
            view = self.stock(sale)
        return view

    def redis_oom(self, mode):
        """Starts the quiet fault of --redis-oom: Redis refuses every write (OOM, noeviction) for a while
        mid-crowd, then takes them again. Its own connection: the drill's is busy reading counters."""
        at, seconds = (float(x) for x in self.a.redis_oom.split(":"))
        redis = Redis(self.a.redis)

        def fault():
            time.sleep(at)
            before = redis.cmd("CONFIG", "GET", "maxmemory")[1], redis.cmd("CONFIG", "GET", "maxmemory-policy")[1]
            used = int(re.search(r"used_memory:(\d+)", redis.cmd("INFO", "memory")).group(1))
            redis.cmd("CONFIG", "SET", "maxmemory-policy", "noeviction")
            redis.cmd("CONFIG", "SET", "maxmemory", str(used - 1024 * 1024))
            log(f"{mode} step: Redis refuses writes (maxmemory {used - 1024 * 1024} under {used} used) for {seconds} s")
            try:
                time.sleep(seconds)
            finally:
                redis.cmd("CONFIG", "SET", "maxmemory", before[0])
                redis.cmd("CONFIG", "SET", "maxmemory-policy", before[1])
                log(f"{mode} step: Redis takes writes again")
            self.result.setdefault("faults", []).append({"mode": mode, "fault": "redis-oom", "at": at,
                                                         "seconds": seconds})

        thread = threading.Thread(target=fault, daemon=True)
        thread.start()
        return thread

    def kill_api(self, mode, sale):
        """--kill-api: the last instance of the fleet dies mid-crowd without a word (SIGKILL), once per run, AT
        seconds after the crowd's first shopper reached the sale's line (k6 takes a second or more to start
        a crowd's VUs: counted from k6's start, the instance died before the crowd came)."""
        url = self.instances[-1]
        pid = procs.pid_listening_on(int(url.rsplit(":", 1)[1]))
        if len(self.instances) < 2 or not pid:
            raise SystemExit(f"--kill-api needs a fleet (--instances) whose last instance runs; {url}: pid {pid}")
        self.a.kill_api, at = None, self.a.kill_api

        def fault():
            self.first_place(sale)
            time.sleep(at)
            os.kill(pid, signal.SIGKILL)
            log(f"{mode} step: API instance {url} (pid {pid}) killed {at} s after the crowd's first place, at "
                f"{time.strftime('%H:%M:%S', time.gmtime())} UTC")
            self.result.setdefault("faults", []).append({"mode": mode, "fault": "api-kill", "at": at, "instance": url})

        thread = threading.Thread(target=fault, daemon=True)
        thread.start()
        return thread

    def first_place(self, sale, bound=60):
        """Returns once the sale's line has handed out its first place (an API took a block of places for the
        crowd's first arrival), or after bound seconds. A connection of its own: it runs beside the drill's."""
        redis = Redis(self.a.redis)
        deadline = time.time() + bound
        while time.time() < deadline and int(redis.cmd("HGET", "{sale:%d}:line" % sale, "next") or 0) == 0:
            time.sleep(0.01)

    def step_arrivals(self):
        """The step crowd's arrivals, each a shopper of its own: a rate for a while, at least 2 x S."""
        return max(int(self.a.crowd_rate * self.a.crowd_seconds), 2 * self.a.stock)

    def sale(self, mode, shape):
        a = self.a
        sale = self.create_sale(f"{mode}-{shape}", a.stock)
        self.set_mode(mode)
        time.sleep(1.5)  # every instance re-reads the mode flag (app.mode.refresh-interval)
        counts0 = self.refusal_counts()
        if shape == "step":
            shoppers = self.step_arrivals()
            log(f"{mode} step: sale {sale}, {a.stock} units, {shoppers} shoppers at {a.crowd_rate}/s from t = 0, "
                f"each retrying up to {a.crowd_retries} times as told, with its place")
            # Each shopper a chain of promises, not a VU (drills/flash-sale.js: crowd): waiting holds nothing.
            fault = self.redis_oom(mode) if a.redis_oom else None
            kill = self.kill_api(mode, sale) if a.kill_api is not None else None
            step = self.k6(f"sale-{mode}-step", "purchase", a.crowd_rate, shoppers / a.crowd_rate + 2, sale=sale,
                           arrivals=shoppers, log_answers=True, retries=a.crowd_retries)
            for thread in (fault, kill):
                if thread:
                    thread.join()
        else:
            shoppers = self.shoppers
            # Two seconds more than the arrivals need: on a saturated box k6 starts its iterations late and does
            # not count them dropped; arrivals past N return at once.
            seconds = max(1, round(shoppers / a.rate - a.ramp / 2 + 0.5)) + 2
            log(f"{mode} ramp: sale {sale}, {a.stock} units, {shoppers} shoppers at up to {a.rate}/s, one attempt each")
            step = self.k6(f"sale-{mode}-ramp", "purchase", a.rate, seconds, sale=sale, ramp=a.ramp, arrivals=shoppers,
                           log_answers=True)
        view = self.settle(sale, a.drain_bound)
        per_instance = [None if c0 is None or c1 is None else
                        {"fromMemory": int(c1[0] - c0[0]), "fromRedis": int(c1[1] - c0[1])}
                        for c0, c1 in zip(counts0, self.refusal_counts())]
        rows = []
        with open(step["answers"]) as f:
            for line in f:
                m = LINE.search(line)
                if m:
                    # arrival, status, code, first attempt's start, final attempt's duration, order, attempts,
                    # final attempt's start, when the answer was in, when the order's unit was reserved (the
                    # API's createdAt; a replay's is its first attempt's)
                    last_start = int(m.group(8) or m.group(4))
                    answered = int(m.group(10)) if m.group(10) else last_start + float(m.group(5))
                    reserved = int(m.group(11)) if m.group(11) and m.group(11).isdigit() else last_start
                    rows.append((int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4)), float(m.group(5)),
                                 m.group(6), int(m.group(7) or 1), last_start, answered, reserved))
        # How late k6 began each arrival against its schedule (the step crowd's arrival i is due at
        # i / rate after the first): a crowd offered late is a smaller crowd than the one asked for.
        first_due = min((r[3] - r[0] * 1000 / a.crowd_rate for r in rows), default=0)
        lag_p99 = percentile([r[3] - r[0] * 1000 / a.crowd_rate - first_due for r in rows], 99) \
            if shape == "step" else None
        # Arrival order is the order of first attempts.
        rows.sort(key=lambda r: (r[3], r[0]))
        rows = [(rank,) + r[1:] + (r[0],) for rank, r in enumerate(rows)]  # and k6's index of the shopper, last
        first = min(r[3] for r in rows) if rows else 0
        winners = [r for r in rows if r[1] in (201, 202)]
        refusals = [r for r in rows if r[1] == 409]
        sold_out_at = min((r[8] for r in refusals if r[2] == "SOLD_OUT"), default=None)
        last_reserved = max((r[9] for r in winners), default=None)
        last_win_end = max((r[8] for r in winners), default=None)
        last_winner = max((r[0] for r in winners), default=-1)
        early = int(1.5 * a.stock)
        by_status = {}
        for r in rows:
            key = str(r[1]) + ("" if r[1] < 400 else " " + r[2])
            by_status[key] = by_status.get(key, 0) + 1
        accepted = len(winners)
        confirmed = view["confirmed"]
        killed = any(f["fault"] == "api-kill" and f["mode"] == mode for f in self.result.get("faults", []))
        res = {
            "shape": shape, "retries": a.crowd_retries if shape == "step" else 0,
            "sale": sale, "arrivals": len(rows), "answers": by_status, "view": view, "instances": per_instance,
            "soldOutMs": None if sold_out_at is None else sold_out_at - first,
            "lastWinMs": None if last_win_end is None else last_win_end - first,
            "timeToWinP99": percentile([r[8] - r[3] for r in winners], 99),
            "attemptsP99": percentile([r[6] for r in rows], 99),
            "firstSShare": sum(1 for r in winners if r[0] < a.stock) / a.stock,
            # SOLD_OUT is final: none may be in before a unit is reserved (by the API's clock, on this box).
            "soldOutBeforeLastWin": sum(1 for r in refusals if r[2] == "SOLD_OUT" and last_reserved is not None
                                        and r[8] < last_reserved),
            "winnersP50": percentile([r[4] for r in winners], 50), "winnersP99": percentile([r[4] for r in winners], 99),
            "refusalsP50": percentile([r[4] for r in refusals], 50), "refusalsP99": percentile([r[4] for r in refusals], 99),
            "lastWinner": last_winner + 1,
            "firstArrivalsShare": sum(1 for r in winners if r[0] < early) / a.stock,
            "shedBeforeLastWinner": sum(1 for r in rows if r[1] == 503 and r[0] < last_winner),
            "shedWhileUnitsLeft": sum(1 for r in rows if r[1] == 503 and (sold_out_at is None or r[3] < sold_out_at)),
            "accepted": accepted, "confirmed": confirmed,
            "oversold": max(0, confirmed - a.stock) + max(0, -view["redisRemaining"]),
            "lost": max(0, accepted - confirmed),
            "balanced": bool(view["balanced"]) and view["queued"] == 0,
            # An instance killed mid-crowd: the balancer answers 502 for what died with it (a keyed shopper
            # asks again; one without a key cannot know whether it bought).
            "unexpected": sum(n for k, n in by_status.items() if not (k in ("201", "202") or k.startswith("409")
                                                                      or k.split(" ")[-1] in LINE_ANSWERS
                                                                      or (killed and k.split(" ")[0] in ("502", "504")))),
            "wall": step["wall"], "dropped": step["dropped"], "arrivalLagP99": lag_p99,
            "k6CpuSeconds": step["cpu"]["k6"],
        }
        if self.edge and shape == "step":
            res["edge"] = self.edge.fairness(f"flash-{self.stamp}-sale-{mode}-step-", rows, early)
            self.edge.save(os.path.join(self.a.out, "steps", f"sale-{mode}-{shape}", "balancer.log"))
        if len(rows) + step["dropped"] < shoppers or step["dropped"] > 0.01 * shoppers:
            # The measurement is then of a smaller crowd; on CI's loaded box (--quick) that is no failure.
            (log if a.quick else self.failures.append)(
                f"{mode} {shape}: k6 offered {len(rows)} of {shoppers} arrivals ({step['dropped']} dropped)")
        if res["soldOutBeforeLastWin"]:
            self.failures.append(f"{mode} {shape}: {res['soldOutBeforeLastWin']} told SOLD_OUT before a later "
                                 "unit was reserved")
        if res["oversold"] or res["lost"] or not res["balanced"] or res["unexpected"] or confirmed != a.stock:
            self.failures.append(f"{mode} {shape}: oversold {res['oversold']}, lost {res['lost']}, balanced {res['balanced']}, "
                                 f"unexpected {res['unexpected']}, confirmed {confirmed} of {a.stock}")
        self.result["modes"][f"{mode} {shape}"] = res
        if res.get("edge"):
            e = res["edge"]
            log(f"{mode} {shape}: by arrival at the balancer (keyed shoppers), first 1.5xS won {fmt(e['share'], 3)}; "
                f"k6 sent first attempts late by {fmt(e['lagP50'], 0)} / {fmt(e['lagP90'], 0)} / {fmt(e['lagMax'], 0)} ms "
                "(p50 / p90 / max)")
        log(f"{mode} {shape}: last win after {res['lastWinMs']} ms, sold out after {res['soldOutMs']} ms; {by_status}; first 1.5xS won "
            f"{res['firstArrivalsShare']:.1%}; oversold {res['oversold']} lost {res['lost']} balanced {res['balanced']}"
            + (f"; arrivals begun late by {lag_p99:.0f} ms (p99)" if lag_p99 is not None else ""))
        return sale

    def cost(self, sold_out):
        a = self.a
        log(f"cost after sell-out: ping, refusals, ping at {a.cost_rate}/s for {a.cost_seconds} s each")
        # ping, refusal, ping: the background (the reconciler, a drain finishing, the mode flag) moves, and
        # the two pings around the refusals measure it on both sides.
        pings = [self.k6("cost-ping-1", "ping", a.cost_rate, a.cost_seconds, offset=self.shoppers)]
        refusal = self.k6("cost-refusal", "purchase", a.cost_rate, a.cost_seconds, sale=sold_out,
                          offset=self.shoppers, expect="409")
        pings.append(self.k6("cost-ping-2", "ping", a.cost_rate, a.cost_seconds, offset=self.shoppers))
        ping = {"requests": sum(p["requests"] for p in pings), "redisCalls": sum(p["redisCalls"] for p in pings),
                "p99": max(p["p99"] or 0 for p in pings), "other": sum(p["other"] for p in pings),
                "unavailable": sum(p["unavailable"] for p in pings),
                "cpu": {k: sum(p["cpu"].get(k, 0) for p in pings) for k in pings[0]["cpu"]}}
        rows = {"pingSteps": [{"requests": p["requests"], "msPerRequest": server_ms_per_request(p),
                               "redisCallsPerRequest": redis_calls_per_request(p)} for p in pings]}
        for name, step in (("ping", ping), ("refusal", refusal)):
            n = max(1, step["requests"])
            server = {k: v * 1000 / n for k, v in step["cpu"].items() if k != "k6"}
            rows[name] = {"requests": step["requests"], "msPerRequest": server, "total": sum(server.values()),
                          "redisCallsPerRequest": redis_calls_per_request(step), "p99": step["p99"],
                          "unexpected": step["other"] + step["unavailable"], "k6Ms": step["cpu"]["k6"] * 1000 / n}
        rows["ratio"] = rows["refusal"]["total"] / rows["ping"]["total"] if rows["ping"]["total"] else None
        # Redis also serves what runs whatever the traffic (the mode flag, the reconciler, the sold-out
        # belief's own reading): the ping step, at the same rate and length, measures that background.
        rows["redisCallsPerRefusal"] = max(0.0, rows["refusal"]["redisCallsPerRequest"]
                                           - rows["ping"]["redisCallsPerRequest"])
        self.result["cost"] = rows
        log(f"cost: ping {rows['ping']['total']:.3f} ms, refusal {rows['refusal']['total']:.3f} ms of server CPU "
            f"({rows['ratio']:.2f} x); Redis calls per refusal beyond ping's {rows['redisCallsPerRefusal']:.4f}")

    def line_cost(self):
        """A line answer's cost: first attempts at a sale whose line's places ahead cover its one unit (a place
        handed to a shopper who has not come back, for a round of 10 minutes), so that each one joins the line
        and is told BEYOND_STOCK; then the same with each shopper asking again at once with its Line-Place,
        AGAIN times (a crowd's line answers are mostly such retries); /ping before, between and after, at the
        same rate of requests."""
        a = self.a
        sale = self.full_line("line-cost")
        log(f"line answers: ping, first attempts told BEYOND_STOCK, ping, first attempts and {LINE_AGAIN} retries "
            f"each, ping, at {a.cost_rate} requests/s for {a.cost_seconds} s each")
        pings = [self.k6("line-ping-1", "ping", a.cost_rate, a.cost_seconds, offset=self.shoppers)]
        line = self.k6("line-answers", "purchase", a.cost_rate, a.cost_seconds, sale=sale, offset=self.shoppers,
                       expect="503")
        pings.append(self.k6("line-ping-2", "ping", a.cost_rate, a.cost_seconds, offset=self.shoppers))
        again = self.k6("line-retries", "purchase", max(1, a.cost_rate // (1 + LINE_AGAIN)), a.cost_seconds,
                        sale=sale, offset=self.shoppers, expect="503", again=LINE_AGAIN)
        pings.append(self.k6("line-ping-3", "ping", a.cost_rate, a.cost_seconds, offset=self.shoppers))
        ping_ms = sum(server_ms_per_request(p) for p in pings) / len(pings)
        ping_p99 = max(p["p99"] or 0 for p in pings)
        ping_calls = redis_calls_per_request(*pings)
        for (key, name, _), step in zip(LINE_ROWS, (line, again)):
            row = self.result[key] = line_row(step, ping_ms, ping_p99, ping_calls)
            log(f"line answer, {name}: {row['msPerRequest']:.3f} ms of server CPU ({fmt(row['ratio'], 2)} x ping), "
                f"p99 {fmt(row['p99'])} ms against ping's {fmt(ping_p99)} ms, "
                f"{row['redisCallsPerRequest']:.4f} Redis calls beyond ping's")

    def full_line(self, label):
        """A sale of one unit whose line's places ahead cover it (a place handed to a shopper who has not come
        back, for a round of 10 minutes): every first attempt joins the line behind the front."""
        sale = self.create_sale(label, 1)
        seconds, micros = self.redis.cmd("TIME")
        now = int(seconds) * 1000 + int(micros) // 1000
        key = "{sale:%d}:line" % sale
        self.redis.cmd("HSET", key, "next", "1", "front", "1", "roundEnd", str(now + 600_000), "mark", "0",
                       "markRemaining", "1", "givenUp", "0")
        self.redis.cmd("PEXPIRE", key, "3600000")
        return sale

    def knees(self, sold_out):
        """Ping and the sold-out refusal, interleaved at each rate (ABBA...) and repeated --knee-repeats times,
        so that the box's drift falls on both alike; a rate is under the knee when the median of its repeats
        meets the bounds. Stops at the first rate over the knee for both."""
        a = self.a
        if not a.knee_rates:
            return
        kinds = {"ping": ("ping", "204"), "refusal": ("purchase", "409")}
        out = {name: {"knee": None, "steps": [], "open": True} for name in kinds}
        for rate in a.knee_rates:
            runs = {name: [] for name in kinds}
            for repeat in range(a.knee_repeats):
                order = list(kinds) if repeat % 2 == 0 else list(reversed(list(kinds)))
                for name in order:
                    if not out[name]["open"]:
                        continue
                    kind, expect = kinds[name]
                    step = self.k6(f"knee-{name}-{rate}-{repeat + 1}", kind, rate, a.step_seconds, sale=sold_out,
                                   offset=self.shoppers, expect=expect)
                    runs[name].append(step)
                    time.sleep(2)
            for name, steps in runs.items():
                if not steps:
                    continue
                p99 = median([s["p99"] if s["p99"] is not None else float("inf") for s in steps])
                bad = median([(s["other"] + s["unavailable"]) / max(1, s["requests"]) for s in steps])
                answered = median([s["requests"] for s in steps])
                ok = p99 < a.knee_p99 and bad < 0.01 and answered >= 0.85 * rate * a.step_seconds
                out[name]["steps"].append({"rate": rate, "p99": p99, "p99s": [s["p99"] for s in steps],
                                           "bad": bad, "requests": answered, "ok": ok})
                log(f"knee {name} {rate}/s: median p99 {p99:.1f} ms of {[round(s['p99'] or -1, 1) for s in steps]}, "
                    f"unexpected {bad:.2%}, {answered} answered -> {'ok' if ok else 'over'}")
                if ok:
                    out[name]["knee"] = rate
                else:
                    out[name]["open"] = False
            if not any(o["open"] for o in out.values()):
                break
        for o in out.values():
            del o["open"]
        ping_knee = out["ping"]["knee"]
        out["ratio"] = out["refusal"]["knee"] / ping_knee if ping_knee and out["refusal"]["knee"] else None
        self.result["knees"] = out

    def run(self):
        a = self.a
        os.makedirs(a.out, exist_ok=True)
        self.tokens_file()
        try:
            self.warm_up()
            sold_out = None
            for mode in a.modes:
                for shape in a.shapes:
                    sale = self.sale(mode, shape)
                    sold_out = sold_out or sale
                    time.sleep(3)
            if sold_out and a.cost_seconds > 0:
                self.cost(sold_out)
                if a.line_cost:
                    self.line_cost()
                self.knees(sold_out)
        finally:
            os.remove(self.tokens)  # bearer tokens do not belong in results
        self.result["failures"] = self.failures
        self.result["targets"] = targets(self.result, a)
        if a.check:
            self.failures += [t["name"] for t in self.result["targets"] if t["met"] is False]
        with open(os.path.join(a.out, "flash-sale.json"), "w") as f:
            json.dump(self.result, f, indent=1)
        with open(os.path.join(a.out, "summary.md"), "w") as f:
            f.write(summary(self.result))
        print(summary(self.result), flush=True)
        for failure in self.failures:
            log(f"FAILED: {failure}")
        return 1 if self.failures else 0


def line_row(step, ping_ms, ping_p99, ping_calls):
    """A line-cost step against ping's CPU per request and p99, and its Redis calls per request beyond the
    ping steps' background (ping_calls per request)."""
    ms = server_ms_per_request(step)
    return {"requests": step["requests"], "msPerRequest": ms, "pingMsPerRequest": ping_ms,
            "ratio": ms / ping_ms if ping_ms else None, "p99": step["p99"], "pingP99": ping_p99,
            "p99Ratio": (step["p99"] / ping_p99) if step["p99"] and ping_p99 else None,
            "redisCallsPerRequest": max(0.0, redis_calls_per_request(step) - ping_calls),
            "unexpected": step["other"]}


def redis_calls_per_request(*steps):
    """Redis commands per request answered, over one or more k6 steps."""
    return sum(s["redisCalls"] for s in steps) / max(1, sum(s["requests"] for s in steps))


def server_ms_per_request(step):
    """A k6 step's server CPU (every process but k6), in ms per request answered."""
    return sum(v for k, v in step["cpu"].items() if k != "k6") * 1000 / max(1, step["requests"])


class EdgeLog:
    """The balancer's request log, received over UDP for the whole drill (HAProxy's httplog: scripts/up.sh with
    HAPROXY_LOG), read for when each keyed shopper's first attempt reached it."""

    DATE = re.compile(r"\[(\d+/\w+/\d+:\d+:\d+:\d+)\.(\d+)\] .*?\{([^}|]*)")

    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind((host, int(port)))
        self.lines = []
        threading.Thread(target=self._receive, daemon=True).start()

    def _receive(self):
        while True:
            self.lines.append(self.sock.recv(65535).decode("utf-8", "replace"))

    def save(self, path):
        """Writes the log received so far, for a run's diagnosis."""
        with open(path, "w") as f:
            f.writelines(line if line.endswith("\n") else line + "\n" for line in list(self.lines))

    def arrivals(self, prefix):
        """{shopper: epoch ms} of the first request the balancer began receiving with a key of prefix + shopper."""
        first = {}
        for line in list(self.lines):
            m = self.DATE.search(line)
            if not m or not m.group(3).startswith(prefix):
                continue
            at = time.mktime(time.strptime(m.group(1), "%d/%b/%Y:%H:%M:%S")) * 1000 + int(m.group(2))
            shopper = int(m.group(3)[len(prefix):])
            first[shopper] = min(first.get(shopper, at), at)
        return first

    def fairness(self, prefix, rows, early):
        """The share of keyed winners among the first early x (keyed share) keyed shoppers to reach the balancer,
        and how late their first attempts reached it after k6 began them. rows: the drill's answer rows (arrival
        rank, status, ..., first attempt's start at [3]) with the shopper's index as k6 numbered them in [-1]."""
        reached = self.arrivals(prefix)
        keyed = [r for r in rows if r[-1] in reached]
        if not keyed:
            return {"share": None, "winners": 0, "seen": 0, "lagP50": None, "lagP90": None, "lagMax": None}
        top = {r[-1] for r in sorted(keyed, key=lambda r: reached[r[-1]])[:round(early * len(keyed) / len(rows))]}
        winners = [r for r in keyed if r[1] in (201, 202)]
        lags = [reached[r[-1]] - r[3] for r in keyed]
        return {"share": sum(1 for r in winners if r[-1] in top) / max(1, len(winners)), "winners": len(winners),
                "seen": len(keyed), "lagP50": percentile(lags, 50), "lagP90": percentile(lags, 90),
                "lagMax": max(lags)}


def targets(r, a):
    cost, knees = r.get("cost") or {}, r.get("knees") or {}
    rows = []

    def add(name, value, met):
        rows.append({"name": name, "value": value, "met": met})

    if cost:
        add("CPU per refusal after sell-out <= 1.5 x ping's", cost.get("ratio"),
            None if cost.get("ratio") is None else cost["ratio"] <= 1.5)
        calls = cost["redisCallsPerRefusal"]
        add("Redis commands per refusal after sell-out <= 0.01 (beyond the ping steps' background)", calls,
            calls <= 0.01)
    for name, m in r["modes"].items():
        add(f"{name}: >= 95 % of units to the first 1.5 x S arrivals, by first attempt", m["firstArrivalsShare"],
            m["firstArrivalsShare"] >= 0.95)
        if m.get("edge"):
            add(f"{name}: >= 95 % of units to the first 1.5 x S arrivals at the balancer (keyed shoppers)",
                m["edge"]["share"], None if m["edge"]["share"] is None else m["edge"]["share"] >= 0.95)
        add(f"{name}: no SOLD_OUT in before a later unit was reserved", m.get("soldOutBeforeLastWin"),
            m.get("soldOutBeforeLastWin") == 0)
    for key, name, _ in LINE_ROWS:
        line = r.get(key)
        what = f"a line answer ({name})"
        if line:
            add(f"{what}: server CPU <= 1.5 x ping's", line.get("ratio"),
                None if line.get("ratio") is None else line["ratio"] <= 1.5)
            add(f"{what}: p99 <= 2 x ping's at the same rate", line.get("p99Ratio"),
                None if line.get("p99Ratio") is None else line["p99Ratio"] <= 2)
    if knees:
        add("sold-out refusal knee >= 0.8 x ping's knee", knees.get("ratio"),
            None if knees.get("ratio") is None else knees["ratio"] >= 0.8)
    return rows


def fmt(v, digits=1, unit=""):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}{unit}"
    return f"{v}{unit}"


def summary(r):
    lines = [f"# Flash-sale drill {r['startedAt']} at `{r['commit']}`", "",
             f"`{r['command']}`: {r['stock']} units, {r['shoppers']} shoppers (one attempt each, "
             f"{int(r['keyed'] * 100)} % keyed), arrivals ramped to {r['rate']}/s in {r['ramp']} s, "
             f"{len(r.get('instances') or [1])} API instance(s).", "",
             "Two crowds per mode: **step**, new shoppers at a constant rate from t = 0, each asking again as a 503 "
             "tells it (Retry-After, carrying its Line-Place); **ramp**, the rate reached in the ramp, one attempt each. "
             "Arrival order is the order of first attempts; a winner's answer time is its final attempt's, its time "
             "to win counts from its first. A SOLD_OUT counts against the truth when it was in before a later "
             "winner's unit was reserved (the order's createdAt).", ""]
    for f in r.get("faults", []):
        what = (f"API instance {f['instance']} killed (SIGKILL) {f['at']} s after its first place, not restarted"
                if f["fault"] == "api-kill" else f"Redis refused writes (OOM) from {f['at']} s for {f['seconds']} s")
        lines += [f"Fault in the {f['mode']} step crowd: {what}.", ""]
    lines += [
             "| mode crowd | arrivals | last win after | sold out after | winners p50 / p99 | time to win p99 | "
             "refusals p50 / p99 | first S / 1.5xS won | last winner | SOLD_OUT before a later reservation | oversold | lost | "
             "balanced | answers |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, m in r["modes"].items():
        answers = ", ".join(f"{n} x {k}" for k, n in sorted(m["answers"].items()))
        lines.append(f"| {name} | {m['arrivals']} | {fmt(m.get('lastWinMs'), 0, ' ms')} | {fmt(m['soldOutMs'], 0, ' ms')} | "
                     f"{fmt(m['winnersP50'])} / {fmt(m['winnersP99'])} ms | {fmt(m.get('timeToWinP99'), 0, ' ms')} | "
                     f"{fmt(m['refusalsP50'])} / {fmt(m['refusalsP99'])} ms | "
                     f"{m.get('firstSShare', 0):.1%} / {m['firstArrivalsShare']:.1%} | "
                     f"#{m['lastWinner']} | {m.get('soldOutBeforeLastWin', '-')} | {m['oversold']} | {m['lost']} | "
                     f"{m['balanced']} | {answers} |")
    fleet = {mode: m.get("instances") for mode, m in r["modes"].items() if m.get("instances")}
    if fleet:
        lines += ["", "Sold-out refusals per API instance, from memory / by Redis (what each had to learn):", ""]
        for mode, per in fleet.items():
            cells = ", ".join(f"#{n}: {c['fromMemory']} / {c['fromRedis']}" if c else f"#{n}: not read"
                              for n, c in enumerate(per, 1))
            lines.append(f"- {mode}: {cells}")
    edges = {mode: m["edge"] for mode, m in r["modes"].items() if m.get("edge")}
    if edges:
        lines += ["", "Arrival order at the balancer (its request log; keyed shoppers, whose Idempotency-Key it logs): "
                      "the units won by the first 1.5 x S of them to reach it, and how late k6 sent each one's first "
                      "attempt after it began it (k6 shares the two cores with everything it measures):", ""]
        for mode, e in edges.items():
            lines.append(f"- {mode}: {fmt(e['share'], 3)} of {e['winners']} keyed winners ({e['seen']} keyed shoppers "
                         f"seen); sent late by {fmt(e['lagP50'], 0)} / {fmt(e['lagP90'], 0)} / {fmt(e['lagMax'], 0)} ms "
                         "(p50 / p90 / max)")
    cost = r.get("cost")
    if cost:
        roles = sorted({k for row in ("ping", "refusal") for k in cost[row]["msPerRequest"]})
        lines += ["", "Server CPU per request after sell-out (ms, from /proc), same rate; ping is the mean of the steps "
                      "before and after the refusals (" + ", ".join(f"{p['msPerRequest']:.3f} ms and "
                                                                     f"{p['redisCallsPerRequest']:.4f} Redis calls"
                                                                     for p in cost.get("pingSteps", [])) + "):", "",
                  "| step | requests | " + " | ".join(roles) + " | total | x ping | Redis calls / request | p99 |",
                  "|---|---|" + "---|" * len(roles) + "---|---|---|---|"]
        for row in ("ping", "refusal"):
            c = cost[row]
            ratio = 1.0 if row == "ping" else cost["ratio"]
            lines.append(f"| {row} | {c['requests']} | " + " | ".join(fmt(c['msPerRequest'].get(k), 3) for k in roles)
                         + f" | {c['total']:.3f} | {fmt(ratio, 2)} | {c['redisCallsPerRequest']:.4f} | "
                           f"{fmt(c['p99'])} ms |")
        lines += ["", f"Redis commands per refusal beyond the ping steps' background: {cost['redisCallsPerRefusal']:.4f}. "
                      "The background includes each instance's reading of a sold-out sale it is refusing (one command every "
                      "app.known-refusals.refresh, 150 ms: about 7 a second)."]
    for key, _, what in LINE_ROWS:
        line = r.get(key)
        if line:
            lines += ["", f"A line answer ({what}): "
                          f"{line['msPerRequest']:.3f} ms of server CPU per request, {fmt(line['ratio'], 2)} x ping's "
                          f"{line['pingMsPerRequest']:.3f} ms; p99 {fmt(line['p99'])} ms against ping's "
                          f"{fmt(line['pingP99'])} ms ({fmt(line['p99Ratio'], 2)} x); "
                          + (f"{line['redisCallsPerRequest']:.4f} Redis calls per answer beyond ping's; "
                             if "redisCallsPerRequest" in line else "")
                          + f"{line['requests']} answers, {line['unexpected']} unexpected."]
    knees = r.get("knees")
    if knees:
        lines += ["", f"Knees (median of {r.get('kneeRepeats', 1)} interleaved steps per rate: p99 < 50 ms, < 1 % unexpected): ping {fmt(knees['ping']['knee'])}/s, sold-out refusal "
                      f"{fmt(knees['refusal']['knee'])}/s, ratio {fmt(knees.get('ratio'), 2)}", "",
                  "| rate | ping p99 | refusal p99 |", "|---|---|---|"]
        by_rate = {}
        for name in ("ping", "refusal"):
            for s in knees[name]["steps"]:
                by_rate.setdefault(s["rate"], {})[name] = s
        for rate in sorted(by_rate):
            cells = [fmt((by_rate[rate].get(n) or {}).get("p99")) + (" ms" if by_rate[rate].get(n) else "")
                     for n in ("ping", "refusal")]
            lines.append(f"| {rate}/s | {cells[0]} | {cells[1]} |")
    lines += ["", "Targets (issues 31 and 37):", ""]
    for t in r["targets"]:
        mark = "met" if t["met"] else ("missed" if t["met"] is False else "not measured")
        lines.append(f"- {t['name']}: {fmt(t['value'], 3)} ({mark})")
    if r["failures"]:
        lines += ["", "Invariants FAILED: " + "; ".join(r["failures"])]
    else:
        lines += ["", "Invariants held: 0 oversold, 0 lost, every sale balanced."]
    return "\n".join(lines) + "\n"


def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    a = parse_args(sys.argv[1:])
    return Drill(a).run()


if __name__ == "__main__":
    sys.exit(main())
