#!/usr/bin/env python3
"""The issue-11 benchmark: knees, saturation, overload goodput, refusal latency, drain, CPU per order
and memory, for /ping and each mode, in one run, as ratios to /ping. Started by `load-tests/run.sh
bench` (which provides k6, the stack, ADMIN_TOKEN and restores the mode); see load-tests/README.md.

Every measured step is its own k6 run of drills/drill.js (one steady phase, open model), so each step
starts on an empty queue and its CPU is read from /proc around exactly that run; the next step starts
only when the sale has nothing held (Redis `held`, the stock view's `queued`) any more.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procs  # noqa: E402
import report  # noqa: E402
import wire  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "pylib"))
from flashtools import stack, tokens, web  # noqa: E402
from flashtools.web import get_text  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOAD_TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(LOAD_TESTS)
MODES = ["SYNC", "ASYNC", "AUTO"]


def log(msg):
    print(f"[bench] {msg}", flush=True)


def parse_args(argv):
    p = stack.drill_parser("load-tests/run.sh bench", __doc__)
    p.add_argument("--worker-url", default=None,
                   help="the worker's actuator (default http://127.0.0.1:$WORKER_PORT, else 8081)")
    p.add_argument("--quick", action="store_true",
                   help="self-test of the tool: ~2.5 minutes, rates <= 300/s, numbers meaningless")
    p.add_argument("--modes", default="SYNC,ASYNC,AUTO")
    p.add_argument("--no-ping", action="store_true", help="skip the /ping ramp (ratios then missing)")
    p.add_argument("--warmup", type=int, default=None, help="seconds of warm-up over ping and every mode (default 240)")
    p.add_argument("--warmup-rate", type=int, default=None, help="arrivals/s during warm-up (default 300)")
    p.add_argument("--idle-seconds", type=int, default=None,
                   help="seconds without load after the warm-up, measuring each process's background CPU, which the "
                        "net CPU per order leaves out (default 20; 0: none)")
    p.add_argument("--step-seconds", type=int, default=None, help="length of every ramp and overload step (default 15)")
    p.add_argument("--from", dest="from_", type=int, default=None, help="first ramp rate of every mode")
    p.add_argument("--to", type=int, default=None, help="last ramp rate of every mode")
    p.add_argument("--steps", type=int, default=None, help="ramp steps of every mode")
    p.add_argument("--ramp", action="append", default=[], metavar="ROW=FROM:TO:STEPS",
                   help="one row's ramp, e.g. PING=400:4800:12 or SYNC=100:1600:16 (repeatable)")
    p.add_argument("--stop-after", type=int, default=None,
                   help="end a ramp after this many failed steps in a row (0: run every step; default 2)")
    p.add_argument("--refine", type=int, default=None,
                   help="after the ramp, this many evenly spaced steps between the knee and the next failed step (default 2)")
    p.add_argument("--overload", default="2,4", help="overload steps as multiples of each mode's knee")
    p.add_argument("--flash", type=float, default=4.0,
                   help="flash spike per mode after the ramps: 0 -> this multiple of the SYNC knee in 1 s (0: none)")
    p.add_argument("--flash-hold", type=int, default=None, help="seconds the flash spike holds its peak (default: a step)")
    p.add_argument("--max-rate", type=int, default=None, help="cap on any step's rate (quick: 300)")
    p.add_argument("--knee-p99", type=float, default=50.0, help="knee: p99 below this (ms)")
    p.add_argument("--knee-errors", type=float, default=0.01, help="knee: error share below this (503/429/5xx/timeouts)")
    p.add_argument("--knee-offered", type=float, default=0.85,
                   help="knee: k6 must have started at least this share of the step's arrivals")
    p.add_argument("--drain-seconds", type=int, default=None, help="ASYNC step at its knee before the drain is timed (default 60)")
    p.add_argument("--drain-bound", type=int, default=300, help="longest wait for a backlog to drain (s)")
    p.add_argument("--poll-fraction", type=float, default=0.1, help="share of 202s polled to the end in ramp and overload steps")
    p.add_argument("--drain-poll-fraction", type=float, default=0.25, help="the same in the ASYNC drain step (confirm p95)")
    p.add_argument("--key-fraction", type=float, default=0.7, help="share of purchases with an Idempotency-Key")
    p.add_argument("--retry-fraction", type=float, default=0.0, help="share of keyed purchases sent twice (drills: 0.1)")
    p.add_argument("--users", type=int, default=2000)
    p.add_argument("--stock", type=int, default=10_000_000, help="stock per mode (never sells out)")
    p.add_argument("--limit", type=int, default=1000, help="per-user limit (high: limits are not the subject)")
    p.add_argument("--max-vus", type=int, default=2000)
    p.add_argument("--queue", default=os.environ.get("APP_MESSAGING_QUEUE", "flashsale.orders.requested"))
    p.add_argument("--rabbit-url", default=os.environ.get("RABBITMQ_MANAGEMENT_URL", "http://127.0.0.1:15672"))
    p.add_argument("--rabbit-user", default=os.environ.get("RABBITMQ_USER", "flashsale"))
    p.add_argument("--rabbit-password", default=os.environ.get("RABBITMQ_PASSWORD", "flashsale"))
    p.add_argument("--rabbit-vhost", default="/")
    p.add_argument("--redis", default=f"{os.environ.get('REDIS_HOST', '127.0.0.1')}:{os.environ.get('REDIS_PORT', '6379')}")
    p.add_argument("--amqp-port", type=int, default=int(os.environ.get("RABBITMQ_PORT", "5672")))
    p.add_argument("--pg-port", type=int, default=int(os.environ.get("DB_PORT", "5432")))
    p.add_argument("--wire", choices=["auto", "on", "off"], default="auto",
                   help="capture each measured step on the loopback with tcpdump and report the server's own answer "
                        "times beside k6's (auto: when tcpdump can capture here)")
    p.add_argument("--pid", action="append", default=[], metavar="ROLE=PID",
                   help="override process discovery (roles: api worker rabbitmq redis postgres)")
    a = p.parse_args(argv)
    q = a.quick
    a.warmup = a.warmup if a.warmup is not None else (12 if q else 240)
    a.warmup_rate = a.warmup_rate or (100 if q else 300)
    a.idle_seconds = a.idle_seconds if a.idle_seconds is not None else (3 if q else 20)
    a.step_seconds = a.step_seconds or (4 if q else 15)
    a.stop_after = a.stop_after if a.stop_after is not None else (1 if q else 2)
    a.refine = a.refine if a.refine is not None else (0 if q else 2)
    a.max_rate = a.max_rate or (300 if q else 100_000)
    a.drain_seconds = a.drain_seconds or (8 if q else 60)
    if a.worker_url is None:
        a.worker_url = f"http://127.0.0.1:{os.environ.get('WORKER_PORT', '8081')}"
    ramps = {"PING": (100, 200, 2) if q else (400, 4800, 12)}
    for m in MODES:
        ramps[m] = (50, 100, 2) if q else (200, 2400, 12)
    for row in ramps:
        f, t, s = ramps[row]
        ramps[row] = (a.from_ or f, a.to or t, a.steps or s)
    for spec in a.ramp:
        row, _, rng = spec.partition("=")
        f, t, s = (int(x) for x in rng.split(":"))
        ramps[row.upper()] = (f, t, s)
    a.ramps = ramps
    a.modes = [m for m in a.modes.split(",") if m]
    for m in a.modes:
        if m not in MODES:
            p.error(f"unknown mode {m}")
    a.overload = [float(x) for x in a.overload.split(",") if x]
    a.pids = {k: int(v) for k, v in (s.split("=", 1) for s in a.pid)}
    return a


def rates(ramp, cap):
    """A ramp's rates: (from, to, steps) evenly spaced, or a list of rates as it is (seeds: geometric)."""
    if isinstance(ramp, list):
        return [min(r, cap) for r in ramp]
    f, t, s = ramp
    out = [round(f + i * (t - f) / max(1, s - 1)) for i in range(s)]
    return [min(r, cap) for r in out]


class Http:
    def __init__(self, base, token):
        self.base, self.token = base.rstrip("/"), token

    def call(self, method, path, body=None, timeout=10):
        return web.call(method, self.base + path, body, token=self.token, timeout=timeout)


class Redis:
    """Just enough RESP for HMGET on the sale's counters (no third-party client on the box)."""

    def __init__(self, hostport):
        host, _, port = hostport.rpartition(":")
        self.addr = (host, int(port))
        self.sock = None
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise OSError("redis closed the connection")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"*":
            return [self._reply() for _ in range(int(rest))]
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(4096)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode()
        if kind == b"-":
            raise OSError(rest.decode())
        return rest.decode()

    def cmd(self, *args):
        if self.sock is None:
            self.sock = socket.create_connection(self.addr, timeout=3)
            self.buf = b""
            if os.environ.get("REDIS_PASSWORD"):
                self.cmd("AUTH", os.environ["REDIS_PASSWORD"])
        wire = f"*{len(args)}\r\n".encode() + b"".join(f"${len(str(x).encode())}\r\n{x}\r\n".encode() for x in args)
        try:
            self.sock.sendall(wire)
            return self._reply()
        except OSError:
            self.sock.close()
            self.sock = None
            raise

    def counters(self, sale_id):
        """(initial, remaining, held) of the sale, as the stock view reads them."""
        vals = self.cmd("HMGET", f"{{sale:{sale_id}}}", "initial", "remaining", "held")
        return tuple(int(v) if v is not None else None for v in vals)


class Sampler(threading.Thread):
    """Every second for the whole run: RSS per process, heap of both JVMs, the broker's queue depth."""

    def __init__(self, a, disc):
        super().__init__(daemon=True)
        self.a, self.disc = a, disc
        self.stop = threading.Event()
        self.rss_max = {}
        self.heap_max = {}
        self.live_max = {}
        self.heap_errors = {}
        self.queue = []  # (time, messages, ready, unacked)
        self.queue_error = None

    def heap(self, url):
        """(heap used: the sum over heap pools, live data after the last GC or None)."""
        text = get_text(url.rstrip("/") + "/actuator/prometheus")
        total, live = 0.0, None
        for line in text.splitlines():
            if line.startswith("jvm_memory_used_bytes{") and 'area="heap"' in line:
                total += float(line.rsplit(" ", 1)[1])
            if line.startswith("jvm_gc_live_data_size_bytes"):
                live = float(line.rsplit(" ", 1)[1])
        return total, live

    def queue_depth(self):
        vhost = urllib.parse.quote(self.a.rabbit_vhost, safe="")
        url = f"{self.a.rabbit_url.rstrip('/')}/api/queues/{vhost}/{urllib.parse.quote(self.a.queue, safe='')}"
        q = json.loads(get_text(url, auth=(self.a.rabbit_user, self.a.rabbit_password)))
        return q.get("messages", 0), q.get("messages_ready", 0), q.get("messages_unacknowledged", 0)

    def run(self):
        while not self.stop.is_set():
            for role, rss in self.disc.rss().items():
                self.rss_max[role] = max(self.rss_max.get(role, 0), rss)
            for role, url in (("api", self.a.base_url), ("worker", self.a.worker_url)):
                try:
                    used, live = self.heap(url)
                    self.heap_max[role] = max(self.heap_max.get(role, 0), used)
                    if live is not None:
                        self.live_max[role] = max(self.live_max.get(role, 0), live)
                except Exception as e:  # noqa: BLE001 - reported, not fatal
                    self.heap_errors[role] = str(e)
            try:
                self.queue.append((time.time(),) + self.queue_depth())
                self.queue_error = None
            except Exception as e:  # noqa: BLE001
                self.queue_error = str(e)
            self.stop.wait(1.0)

    def depth_between(self, t0, t1):
        return [q for q in self.queue if t0 <= q[0] <= t1]


class Bench:
    def __init__(self, a):
        self.a = a
        self.api = Http(a.base_url, os.environ["ADMIN_TOKEN"])
        self.redis = Redis(a.redis)
        self.steps = []
        self.idle = None  # cores per process with no load, measured after the warm-up
        self.sales = {}
        self.stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        os.makedirs(os.path.join(a.out, "steps"), exist_ok=True)
        self.wire_port = urllib.parse.urlparse(a.base_url).port or 80
        self.wire_off = self.wire_unavailable()

    def wire_unavailable(self):
        """Why the measured steps cannot be captured on the wire here, or None when they can."""
        if self.a.wire == "off":
            return "--wire off"
        host = urllib.parse.urlparse(self.a.base_url).hostname or ""
        if not (host == "localhost" or host.startswith("127.")):
            return f"the API at {host} is not on the loopback"
        if not shutil.which("tcpdump"):
            return "tcpdump is not installed"
        return None

    # -- set-up -------------------------------------------------------------------------------------
    def create_sales(self):
        starts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
        ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 12 * 3600))
        for mode in self.a.modes:
            sale = self.api.call("POST", "/api/v1/sales", {
                "sku": f"bench-{self.stamp}-{mode}", "name": f"bench {mode}", "priceCents": 999,
                "stock": self.a.stock, "perUserLimit": self.a.limit, "startsAt": starts, "endsAt": ends})
            self.sales[mode] = {"id": int(sale["id"]), "stock": self.a.stock}
        self.tokens = os.path.join(self.a.out, "tokens.json")
        tokens.write_shoppers(self.tokens, self.a.users, f"bench-{self.stamp}-")

    # -- one k6 run ---------------------------------------------------------------------------------
    def plan(self, step_dir, phases, rate, seconds, poll_fraction, shape=None):
        """phases: ['PING'] or [MODE] for a measured step; ['PING', SYNC, ...] for the warm-up."""
        modes = [p for p in phases if p != "PING"]
        vus = self.a.max_vus
        return {
            "drill": "bench", "runId": f"bench-{self.stamp}-{os.path.basename(step_dir)}", "baseUrl": self.a.base_url,
            "tokensFile": self.tokens, "outDir": step_dir,
            "shape": shape or {"kind": "steady", "rate": rate, "seconds": seconds},
            "modes": modes, "baseline": "PING" in phases, "sales": self.sales, "stock": self.a.stock,
            "perUserLimit": self.a.limit, "users": self.a.users, "p99Ms": int(self.a.knee_p99), "p99Threshold": False,
            "unavailableIsError": False, "kneeErrorRate": self.a.knee_errors, "pollFraction": poll_fraction,
            "keyFraction": self.a.key_fraction, "retryFraction": self.a.retry_fraction, "multiUnitFraction": 0.05,
            "gapSeconds": 3, "pollBoundSeconds": 30, "finalBoundSeconds": self.a.drain_bound,
            "preAllocatedVUs": min(vus, max(50, rate)), "maxVUs": vus, "expectStockOffset": 0, "verbose": False,
        }

    def counters(self, mode):
        try:
            return self.redis.counters(self.sales[mode]["id"])
        except OSError:
            return (None, None, None)

    def k6(self, label, phases, rate, seconds, poll_fraction, measured=True, shape=None):
        n = len(self.steps) + 1
        step_dir = os.path.join(self.a.out, "steps", f"{n:02d}-{label}")
        os.makedirs(step_dir, exist_ok=True)
        plan_file = os.path.join(step_dir, "plan.json")
        with open(plan_file, "w") as f:
            json.dump(self.plan(step_dir, phases, rate, seconds, poll_fraction, shape), f, indent=1)
        mode = phases[0] if len(phases) == 1 else None
        watch = mode in MODES
        env = dict(os.environ, PLAN=plan_file, ADMIN_TOKEN=os.environ["ADMIN_TOKEN"])
        samples = []  # (time, initial, remaining, held) of the mode's sale, every 0.2 s
        done = threading.Event()

        def watch_sale():
            while not done.is_set():
                c = self.counters(mode)
                samples.append((time.time(),) + c)
                done.wait(0.2)

        watcher = threading.Thread(target=watch_sale, daemon=True)
        if watch:
            watcher.start()
        capture, pcap = None, os.path.join(step_dir, "wire.pcap")
        if measured and mode and not self.wire_off:
            try:
                capture = wire.Capture(self.wire_port, pcap)
            except OSError as e:
                self.wire_off = str(e)
                log(f"wire timings off: {e}")
        cpu0, cpu_t0, box0 = self.disc.cpu(), time.time(), procs.box_ticks()
        wall0 = cpu_t0
        proc = subprocess.Popen([self.a.k6, "run", "--quiet", "--no-usage-report", "drills/drill.js"], cwd=LOAD_TESTS,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        phase_start = None
        with open(os.path.join(step_dir, "k6.log"), "w") as logf:
            for line in proc.stdout:
                logf.write(line)
                m = re.search(r"\[phases\] start (\d+)", line)
                if m:
                    phase_start = int(m.group(1)) / 1000
                    # the step's CPU window opens with its first arrival, not k6's start
                    cpu0, cpu_t0, box0 = self.disc.cpu(), time.time(), procs.box_ticks()
                if "[invariant]" in line and "FAILED" in line or "level=error" in line:
                    print("  k6: " + line.rstrip()[:300], flush=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        k6_cpu = usage.ru_utime + usage.ru_stime
        step_wire, wire_cpu = None, None
        if capture:
            dropped, wire_cpu = capture.stop()
            try:
                step_wire = wire.step_summary(pcap, self.wire_port)
                step_wire["droppedSegments"] = dropped
            except (OSError, subprocess.CalledProcessError) as e:
                step_wire = {"error": str(e)}
            os.remove(pcap)
        # k6's teardown waited for the backlog (bounded); wait on here too if it gave up first.
        if watch:
            deadline = time.time() + self.a.drain_bound
            while time.time() < deadline and (not samples or samples[-1][3] not in (0, None)):
                time.sleep(0.2)
            done.set()
            watcher.join()
        cpu1 = self.disc.cpu()
        wall1 = time.time()
        cpu_window = wall1 - cpu_t0
        steal = procs.steal_percent(box0, procs.box_ticks())
        cpu = procs.cpu_seconds(cpu0, cpu1)
        cpu["k6"] = k6_cpu
        if wire_cpu is not None:
            cpu["tcpdump"] = wire_cpu
        try:
            with open(os.path.join(step_dir, "summary.json")) as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = {"metrics": {}}
        step = {"n": n, "label": label, "phases": phases, "rate": rate, "seconds": seconds, "measured": measured,
                "startedAt": wall0,
                "k6Status": proc.returncode, "dir": os.path.relpath(step_dir, self.a.out), "wallSeconds": wall1 - wall0,
                "cpuSeconds": cpu, "cpuWindowSeconds": cpu_window, "stealPercent": steal, "phaseStart": phase_start, "wire": step_wire}
        step["unitsByMode"] = {m: (data.get("metrics", {}).get(f"units_accepted{{mode:{m}}}") or {"values": {}})["values"].get("count", 0)
                               for m in phases if m != "PING"}
        if mode:
            step.update(self.metrics(data, mode, rate, seconds))
            self.add_cpu_per_order(step)
        if watch:
            step.update(self.drain(samples, phase_start, seconds, wall0, wall1))
            if phase_start is not None:
                step["serverConfirm"] = self.server_confirm(mode, phase_start, phase_start + seconds)
        self.steps.append(step)
        return step

    # -- reading a step -----------------------------------------------------------------------------
    def metrics(self, data, mode, rate, seconds):
        mt = data.get("metrics", {})

        def v(name, stat):
            x = mt.get(name)
            return None if x is None else x["values"].get(stat)

        sel = f"{{mode:{mode}}}"
        offered = v(f"offered{sel}", "count") or 0
        served = v(f"served{sel}", "count") or 0
        accepted = v(f"accepted{sel}", "count") or 0
        refusals = {}
        for code in ["SOLD_OUT", "PURCHASE_LIMIT_REACHED", "SALE_NOT_ACTIVE", "UNAVAILABLE", "TOO_MANY_REQUESTS", "OTHER"]:
            c = v(f"refusals{{mode:{mode},code:{code}}}", "count")
            if c:
                refusals[code] = c
        out = {
            "mode": mode, "offered": offered, "served": served, "offeredPerSecond": offered / seconds,
            "servedPerSecond": served / seconds,
            "accepted": accepted if mode != "PING" else served,
            "acceptedPerSecond": (accepted if mode != "PING" else served) / seconds,
            "acceptedSync": v(f"accepted{{mode:{mode},path:SYNC}}", "count") or 0,
            "acceptedAsync": v(f"accepted{{mode:{mode},path:ASYNC}}", "count") or 0,
            "unitsAccepted": v(f"units_accepted{sel}", "count") or 0,
            "errorRate": v(f"step_error{sel}", "rate") or 0,
            "p50": v(f"accept_latency{sel}", "med"), "p95": v(f"accept_latency{sel}", "p(95)"),
            "p99": v(f"accept_latency{sel}", "p(99)"),
            "acceptedP99": v(f"accepted_latency{sel}", "p(99)") if accepted else None,
            # Overload refusals, from the counter (a Trend's summary carries no count).
            "refusalCount": refusals.get("UNAVAILABLE", 0) + refusals.get("TOO_MANY_REQUESTS", 0),
            "refusalP99": v(f"refusal_latency{sel}", "p(99)"),
            "refusalRetryAfter": v(f"refusal_retry_after{sel}", "rate"),
            # A Trend without samples reports 0: no polled ASYNC order is no latency, not a fast one.
            "confirmP95": v(f"time_to_confirm{{mode:{mode},path:ASYNC}}", "p(95)")
            if v(f"async_final{{mode:{mode},status:CONFIRMED}}", "count") else None,
            "finalConfirmed": v(f"async_final{{mode:{mode},status:CONFIRMED}}", "count") or 0,
            "finalRejected": v(f"async_final{{mode:{mode},status:REJECTED}}", "count") or 0,
            "finalFailed": v(f"async_final{{mode:{mode},status:FAILED}}", "count") or 0,
            "dropped": v(f"dropped_iterations{{scenario:ph0_{mode}}}", "count") or 0,
            "unexpected": v(f"unexpected{sel}", "count") or 0,
            "invariant": v(f"invariant_ok{sel}", "rate"),
            "refusals": refusals,
        }
        reasons = []
        if out["errorRate"] >= self.a.knee_errors:
            reasons.append(f"errors {out['errorRate'] * 100:.1f}%")
        if out["p99"] is None or out["p99"] >= self.a.knee_p99:
            reasons.append(f"p99 {report.ms(out['p99'])}ms")
        if offered < self.a.knee_offered * rate * seconds:
            reasons.append(f"offered {offered / (rate * seconds) * 100:.0f}%")
        out["kneeOk"] = not reasons
        out["kneeReasons"] = reasons
        return out

    def add_cpu_per_order(self, step):
        n = step["accepted"]
        step["cpuMsPerOrder"] = {role: (sec * 1000 / n if n else None) for role, sec in step["cpuSeconds"].items()}
        services = [r for r in ("api", "worker", "rabbitmq", "redis", "postgres") if r in step["cpuSeconds"]]
        step["cpuMsPerOrder"]["total"] = sum(step["cpuSeconds"][r] for r in services) * 1000 / n if n else None
        if self.idle and n:
            # Net of the background (timers, the reconciler, the JIT and GC of an idle JVM): what the orders
            # themselves cost, the slope of CPU against rate that sizes a fleet.
            window = step["cpuWindowSeconds"]
            net = {r: max(0.0, step["cpuSeconds"][r] - self.idle.get(r, 0.0) * window) * 1000 / n for r in services}
            net["total"] = sum(net.values())
            step["cpuMsPerOrderNet"] = net

    def drain(self, samples, phase_start, seconds, wall0, wall1):
        """Seconds from the step's last arrival until the sale held nothing; confirmed units/s in-step."""
        out = {"drainSeconds": None, "confirmedPerSecond": None, "heldAtEnd": None, "heldMax": None, "queueAtEnd": None,
               "queueMax": None}
        if phase_start is None or not samples:
            return out
        held = [s[3] for s in samples if s[3] is not None]
        out["heldMax"] = max(held) if held else None
        end = phase_start + seconds
        before = [s for s in samples if s[0] <= phase_start]
        at_end = [s for s in samples if s[0] <= end]
        first, last = (before[-1] if before else samples[0]), (at_end[-1] if at_end else samples[0])
        if None not in (first[2], first[3], last[2], last[3]):
            confirmed = lambda s: s[1] - s[2] - s[3]  # initial - remaining - held  # noqa: E731
            out["confirmedPerSecond"] = (confirmed(last) - confirmed(first)) / seconds
            out["heldAtEnd"] = last[3]
        for s in samples:
            if s[0] >= end and s[3] == 0:
                out["drainSeconds"] = max(0.0, s[0] - end) if last[3] else 0.0
                break
        q = self.sampler.depth_between(wall0, wall1)
        if q:
            out["queueMax"] = max(x[1] for x in q)
            out["queueAtEnd"] = q[-1][1]
        return out

    def server_confirm(self, mode, t0, t1):
        """202 -> CONFIRMED as the system recorded it, for ASYNC-path orders requested in [t0, t1):
        purchase_order.updated_at (the worker's insert) - created_at (the API's request time), through psql.
        Client polling cannot see below its Retry-After (1 s); this can. None when psql is missing."""
        sql = ("select count(*), percentile_cont(0.5) within group (order by ms), "
               "percentile_cont(0.95) within group (order by ms), "
               "percentile_cont(0.99) within group (order by ms), max(ms) from ("
               "select extract(epoch from updated_at - created_at) * 1000 as ms from purchase_order "
               f"where sale_id = {int(self.sales[mode]['id'])} and mode = 'ASYNC' and status = 'CONFIRMED' "
               f"and created_at >= to_timestamp({t0:.3f}) and created_at < to_timestamp({t1:.3f})) s")
        env = dict(os.environ, PGPASSWORD=os.environ.get("DB_PASSWORD", "flashsale"))
        try:
            res = subprocess.run(["psql", "-h", os.environ.get("DB_HOST", "127.0.0.1"), "-p", str(self.a.pg_port),
                                  "-U", os.environ.get("DB_USER", "flashsale"), "-d", os.environ.get("DB_NAME", "flashsale"),
                                  "-At", "-F", ",", "-c", sql], env=env, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return {"error": str(e)}
        if res.returncode != 0:
            return {"error": res.stderr.strip()[:200]}
        f = res.stdout.strip().split(",")
        val = lambda x: float(x) if x else None  # noqa: E731
        return {"count": int(f[0]), "p50": val(f[1]), "p95": val(f[2]), "p99": val(f[3]), "max": val(f[4])}

    # -- the run ------------------------------------------------------------------------------------
    def ramp(self, row, mode=None):
        """Ramps one row: the mode's rates (the row's name, unless a second ramp of a mode names itself)."""
        mode = mode or row
        label = row.replace(" ", "-")
        poll = self.a.poll_fraction
        knee, broken = None, 0
        steps = []
        for rate in rates(self.a.ramps[mode], self.a.max_rate):
            if any(s["rate"] == rate for s in steps):
                continue
            s = self.k6(f"{label}-{rate}", [mode], rate, self.a.step_seconds, poll)
            s["kind"] = "ramp"
            steps.append(s)
            self.say(s)
            if s["kneeOk"]:
                knee, broken = s, 0
            else:
                broken += 1
                if self.a.stop_after and broken >= self.a.stop_after:
                    break
        # Coarse, then fine: a few steps between the knee and the first step above it that failed.
        above = [x["rate"] for x in steps if not x["kneeOk"] and (knee is None or x["rate"] > knee["rate"])]
        if self.a.refine and knee and above:
            low, high = knee["rate"], min(above)
            for i in range(1, self.a.refine + 1):
                rate = round(low + i * (high - low) / (self.a.refine + 1))
                if rate in (x["rate"] for x in steps):
                    continue
                s = self.k6(f"{label}-{rate}", [mode], rate, self.a.step_seconds, poll)
                s["kind"] = "ramp"
                steps.append(s)
                self.say(s)
                if s["kneeOk"] and s["rate"] > knee["rate"]:
                    knee = s
        return knee, steps

    def say(self, s):
        extra = ""
        if s.get("drainSeconds") is not None:
            extra = f", drain {s['drainSeconds']:.1f}s"
        if s.get("stealPercent"):
            extra += f", steal {s['stealPercent']:.0f}%"
        log(f"step {s['n']:2d} {s['label']:<16} offered {s['offeredPerSecond']:7.1f}/s accepted {s['acceptedPerSecond']:7.1f}/s "
            f"p99 {report.ms(s['p99'])}ms errors {s['errorRate'] * 100:.1f}% "
            f"cpu {report.num(s['cpuMsPerOrder'].get('total'), 2)}ms/order{extra} "
            f"{'knee ok' if s['kneeOk'] else 'broke: ' + ', '.join(s['kneeReasons'])}")

    def run(self):
        a = self.a
        if self.wire_off and a.wire == "on":
            log(f"--wire on, but {self.wire_off}")
            return 2
        log("wire timings: " + (f"off ({self.wire_off})" if self.wire_off else f"tcpdump on lo, port {self.wire_port}"))
        self.disc = procs.Discovery({
            "api": urllib.parse.urlparse(a.base_url).port or 80,
            "worker": urllib.parse.urlparse(a.worker_url).port or 80,
            "rabbitmq": a.amqp_port, "redis": int(a.redis.rpartition(":")[2]), "postgres": a.pg_port}, a.pids)
        for note in self.disc.notes:
            log(note)
        self.sampler = Sampler(a, self.disc)
        self.sampler.start()
        self.create_sales()
        log(f"sales {json.dumps({m: s['id'] for m, s in self.sales.items()})}, results in {a.out}")
        load0 = os.getloadavg()
        started = time.time()
        if a.warmup > 0:
            phases = ([] if a.no_ping else ["PING"]) + a.modes
            per = max(2, a.warmup // len(phases))
            log(f"warm-up: {per}s per phase at {a.warmup_rate}/s ({', '.join(phases)})")
            s = self.k6("warmup", phases, a.warmup_rate, per, a.poll_fraction, measured=False)
            s["kind"] = "warmup"
            self.wait_drained()
        if a.idle_seconds > 0:
            self.idle = self.measure_idle(a.idle_seconds)
        rows = {}
        if not a.no_ping:
            knee, steps = self.ramp("PING")
            rows["PING"] = {"knee": knee, "steps": steps}
        for mode in a.modes:
            knee, steps = self.ramp(mode)
            row = {"knee": knee, "steps": steps, "overload": {}}
            base = knee["rate"] if knee else steps[0]["rate"]
            row["kneeBase"] = base
            for factor in a.overload:
                rate = min(a.max_rate, round(base * factor))
                s = self.k6(f"{mode}-{factor:g}x-{rate}", [mode], rate, a.step_seconds, a.poll_fraction)
                s["kind"] = f"overload {factor:g}x"
                s["factor"] = factor
                row["overload"][f"{factor:g}"] = s
                steps.append(s)
                self.say(s)
            if mode == "ASYNC":
                s = self.k6(f"{mode}-drain-{base}", [mode], base, a.drain_seconds, a.drain_poll_fraction)
                s["kind"] = "drain"
                row["drainStep"] = s
                steps.append(s)
                self.say(s)
            rows[mode] = row
        sync_knee = rows.get("SYNC", {}).get("knee")
        if a.flash > 0 and sync_knee:
            # The doors open: 0 -> a multiple of SYNC's knee in one second, the same spike for every mode.
            peak = min(a.max_rate, round(sync_knee["rate"] * a.flash))
            hold = a.flash_hold or a.step_seconds
            for mode in a.modes:
                s = self.k6(f"{mode}-flash-{peak}", [mode], peak, hold + 2, a.poll_fraction,
                            shape={"kind": "flash", "peak": peak, "holdSeconds": hold})
                s["kind"] = "flash"
                rows[mode]["flash"] = s
                rows[mode]["steps"].append(s)
                self.say(s)
        self.sampler.stop.set()
        self.sampler.join(timeout=5)
        final_queue = self.final_queue()
        final = {}
        for mode in a.modes:
            try:
                final[mode] = self.api.call("GET", f"/api/v1/admin/sales/{self.sales[mode]['id']}/stock")
            except Exception as e:  # noqa: BLE001
                final[mode] = {"error": str(e)}
        try:
            os.remove(self.tokens)  # bearer tokens do not belong in results
        except OSError:
            pass
        result = {
            "command": os.environ.get("BENCH_COMMAND") or "load-tests/run.sh bench " + " ".join(sys.argv[1:]),
            "options": {k: v for k, v in vars(a).items() if k not in ("k6",)},
            "commit": git_commit(), "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "seconds": time.time() - started, "cpus": os.cpu_count(), "loadavgBefore": load0,
            "idleCores": self.idle, "idleSeconds": a.idle_seconds,
            "processes": self.disc.notes, "sales": self.sales, "final": final,
            "rssMax": self.sampler.rss_max, "heapMax": self.sampler.heap_max, "liveMax": self.sampler.live_max,
            "finalQueue": final_queue, "heapErrors": self.sampler.heap_errors,
            "queueError": self.sampler.queue_error, "steps": self.steps, "wireOff": self.wire_off,
        }
        result["rows"] = {name: {"knee": r["knee"]["n"] if r["knee"] else None, "steps": [s["n"] for s in r["steps"]],
                                 "overload": {f: s["n"] for f, s in r.get("overload", {}).items()},
                                 "drainStep": r["drainStep"]["n"] if r.get("drainStep") else None,
                                 "flash": r["flash"]["n"] if r.get("flash") else None}
                          for name, r in rows.items()}
        bench_json = os.path.join(a.out, "bench.json")
        with open(bench_json, "w") as f:  # first, so that a failing report can be rebuilt from it
            json.dump(result, f, indent=1, default=str)
        summary, verdict = report.build(result, rows)
        result["verdict"] = verdict
        with open(bench_json, "w") as f:
            json.dump(result, f, indent=1, default=str)
        with open(os.path.join(a.out, "summary.txt"), "w") as f:
            f.write(summary)
        print("\n" + summary, flush=True)
        return 0 if verdict["correct"] and verdict["targetsMet"] else (3 if not verdict["correct"] else 1)

    def final_queue(self):
        """The broker's depth of the order queue once everything drained. Its management API refreshes
        queue figures every few seconds (collect_statistics_interval), so this waits up to 20 s for a 0."""
        deadline = time.time() + 20
        depth = None
        while time.time() < deadline:
            try:
                depth = self.sampler.queue_depth()[0]
            except Exception as e:  # noqa: BLE001
                return f"not read: {e}"
            if depth == 0:
                break
            time.sleep(1)
        return depth

    def measure_idle(self, seconds):
        """Each process's CPU with no load (cores), over `seconds` after the warm-up's backlog drained."""
        cpu0, t0 = self.disc.cpu(), time.time()
        time.sleep(seconds)
        used = procs.cpu_seconds(cpu0, self.disc.cpu())
        idle = {role: sec / (time.time() - t0) for role, sec in used.items()}
        log("idle CPU (cores): " + ", ".join(f"{r} {c:.3f}" for r, c in idle.items()))
        return idle

    def wait_drained(self):
        deadline = time.time() + self.a.drain_bound
        while time.time() < deadline:
            held = [self.counters(m)[2] for m in self.a.modes]
            if all(h in (0, None) for h in held):
                return
            time.sleep(0.5)
        log("backlog not drained within --drain-bound")


def git_commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    a = parse_args(sys.argv[1:])
    if "ADMIN_TOKEN" not in os.environ:
        print("ADMIN_TOKEN is not set: start the bench through load-tests/run.sh bench", file=sys.stderr)
        return 2
    return Bench(a).run()


if __name__ == "__main__":
    sys.exit(main())
