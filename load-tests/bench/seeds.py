#!/usr/bin/env python3
"""The issue-15 seeds drill: when does ASYNC beat SYNC, and does AUTO find the crossover?
Started by `load-tests/run.sh seeds` (which installs k6 and toxiproxy, starts the shared services and
builds the jars when missing); see load-tests/README.md#seeds-does-async-beat-sync-issue-15.

It starts its own toxiproxy-server, proxies Postgres through it (and Redis and the broker with --proxy),
and starts its own order-api and order-worker pointed at the proxy's ports. Nothing is faked in the code:
the apps just talk to another port. Then, in one run:

  sweep   at every downstream latency (--latencies, a latency toxic between the apps and Postgres,
          changed in place: the apps keep running), a /ping ramp and a ramp per mode (SYNC, ASYNC, AUTO):
          knee, p99 and goodput against offered load, CPU per order. Each step is one k6 run of
          drills/drill.js through bench.py, as in `run.sh bench`.
  claim1  SYNC far beyond its knee (more requests in flight than pooled connections), with admission
          control switched off (ADMISSION_OFF) and on, each on a freshly restarted API: latency,
          goodput, the API's threads, Hikari's pool wait, the group commit's queue and CPU.
  claim5  ramp to --claim5-peak arrivals/s, stress (held at the peak) and a spike (0 -> peak in 1 s) on
          SYNC and ASYNC, each on a fresh sale: offered, dropped by k6, accepted, confirmed and lost units.

It writes seeds.json; load-tests/bench/charts.py turns it into summary.md, the charts and the AUTO check.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import procs  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "pylib"))
from flashtools import stack, web  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODES = ["SYNC", "ASYNC", "AUTO"]
DOWNSTREAMS = {  # proxy name -> (env var for the host, env var for the port, real port from the env)
    "postgres": ("DB_HOST", "DB_PORT", int(os.environ.get("DB_PORT", "5432"))),
    "redis": ("REDIS_HOST", "REDIS_PORT", int(os.environ.get("REDIS_PORT", "6379"))),
    "rabbitmq": ("RABBITMQ_HOST", "RABBITMQ_PORT", int(os.environ.get("RABBITMQ_PORT", "5672"))),
}
# Admission control switched off, by configuration only: no door (door.DoorFilter), no
# shedding of a standing queue, a queue that never fills, and a bulkhead nobody reaches. Requests then wait
# for the group commit instead of a 503.
ADMISSION_OFF = {
    "app.door.enabled": "false",
    "app.purchase.sync.shed-after": "1h",
    "app.purchase.sync.max-queued": "1000000",
    "resilience4j.bulkhead.instances.sync-db.max-concurrent-calls": "1000000",
}
# The API's own meters read around every step (claim 1), each folded to its maximum over the step.
API_METERS = (
    "jvm_threads_live_threads",
    "hikaricp_connections_active",
    "hikaricp_connections_pending",
    "hikaricp_connections_max",
    "flashsale_purchase_group_queued",
    "http_server_requests_active_seconds_count",  # requests in flight (a LongTaskTimer)
)


def log(msg):
    print(f"[seeds] {msg}", flush=True)


def csv_ints(text):
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv):
    p = argparse.ArgumentParser(prog="load-tests/run.sh seeds", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--k6", required=True)
    p.add_argument("--toxiproxy", required=True, help="the toxiproxy-server binary")
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true",
                   help="a self-test of the drill: ~8 minutes, rates <= 400/s, latencies 0,50; numbers meaningless")
    p.add_argument("--api-port", type=int, default=int(os.environ.get("SERVER_PORT", "8080")))
    p.add_argument("--worker-port", type=int, default=int(os.environ.get("WORKER_PORT", "8081")))
    p.add_argument("--toxiproxy-port", type=int, default=int(os.environ.get("TOXIPROXY_PORT", "8474")),
                   help="toxiproxy's API; the proxies listen on the next ports (postgres +1, redis +2, rabbitmq +3)")
    p.add_argument("--proxy", default="postgres", help="downstreams the apps reach through the proxy (postgres,redis,rabbitmq)")
    p.add_argument("--toxic-on", default="postgres", help="proxies that get the latency toxic")
    p.add_argument("--latencies", default=None, help="downstream latencies in ms (default 0,5,20,50,200)")
    p.add_argument("--modes", default="SYNC,ASYNC,AUTO")
    p.add_argument("--again", default="", help="fixed modes to ramp a second time at every point, after AUTO "
                   "(rows 'MODE again'): the A/A control of AUTO's 10 %% check (e.g. SYNC,ASYNC)")
    p.add_argument("--rates", default=None, help="ramp of every mode, arrivals/s (default 100,200,400,800,1600,3200)")
    p.add_argument("--ping-rates", default=None, help="ramp of /ping (default 800,1600,3200,4800)")
    p.add_argument("--step-seconds", type=int, default=None, help="length of every step (default 8)")
    p.add_argument("--refine", type=int, default=None, help="steps between a knee and the next failed rate (default 1)")
    p.add_argument("--max-rate", type=int, default=None, help="cap on any step's rate (quick: 400)")
    p.add_argument("--warmup", type=int, default=None, help="seconds of warm-up after the apps start (default 240: at 60 the first point still ran on JIT-cold apps)")
    p.add_argument("--skip", default="", help="parts to leave out: sweep,claim1,claim5")
    p.add_argument("--claim1-latency", type=int, default=None, help="downstream latency of claim 1 (default 20 ms)")
    p.add_argument("--claim1-factors", default="0.5,1,2,4", help="claim 1's rates as multiples of SYNC's knee")
    p.add_argument("--claim5-peak", type=int, default=None, help="claim 5's peak arrivals/s (default 5000)")
    p.add_argument("--claim5-latency", type=int, default=0, help="downstream latency of claim 5 (ms)")
    p.add_argument("--claim5-modes", default="SYNC,ASYNC")
    p.add_argument("--claim5-seconds", type=int, default=None, help="length of each claim-5 shape (default 20)")
    p.add_argument("--max-vus", type=int, default=2000)
    p.add_argument("--ready-timeout", type=int, default=300, help="seconds for an app to become ready")
    a = p.parse_args(argv)
    q = a.quick
    a.latencies = csv_ints(a.latencies or ("0,50" if q else "0,5,20,50,200"))
    a.rates = csv_ints(a.rates or ("50,100,200,400" if q else "100,200,400,800,1600,3200"))
    a.ping_rates = csv_ints(a.ping_rates or ("200,400" if q else "800,1600,3200,4800"))
    a.step_seconds = a.step_seconds or (4 if q else 8)
    a.refine = a.refine if a.refine is not None else (0 if q else 1)
    a.max_rate = a.max_rate or (400 if q else 100_000)
    a.warmup = a.warmup if a.warmup is not None else (15 if q else 240)
    a.claim1_latency = a.claim1_latency if a.claim1_latency is not None else (50 if q else 20)
    a.claim1_factors = [float(x) for x in a.claim1_factors.split(",") if x]
    a.claim5_peak = min(a.max_rate, a.claim5_peak or (400 if q else 5000))
    a.claim5_seconds = a.claim5_seconds or (6 if q else 20)
    a.modes = [m for m in a.modes.split(",") if m]
    a.again = [m for m in a.again.split(",") if m]
    if not set(a.again) <= {"SYNC", "ASYNC"}:
        p.error("--again takes fixed modes: SYNC, ASYNC")
    a.claim5_modes = [m for m in a.claim5_modes.split(",") if m]
    for m in a.modes + a.claim5_modes:
        if m not in MODES:
            p.error(f"unknown mode {m}")
    a.proxy = [x for x in a.proxy.split(",") if x]
    a.toxic_on = [x for x in a.toxic_on.split(",") if x]
    for x in a.proxy + a.toxic_on:
        if x not in DOWNSTREAMS:
            p.error(f"unknown downstream {x} (postgres, redis, rabbitmq)")
    if not set(a.toxic_on) <= set(a.proxy):
        p.error("--toxic-on names a downstream that is not behind --proxy")
    a.skip = {x for x in a.skip.split(",") if x}
    return a


class Toxiproxy:
    """Our own toxiproxy-server and its HTTP API (https://github.com/Shopify/toxiproxy#http-api)."""

    def __init__(self, binary, port, out):
        self.url = f"http://127.0.0.1:{port}"
        self.port = port
        self.logf = open(os.path.join(out, "toxiproxy.log"), "w")
        self.proc = subprocess.Popen([binary, "-host", "127.0.0.1", "-port", str(port)], stdout=self.logf,
                                     stderr=subprocess.STDOUT)
        for _ in range(50):
            try:
                self.call("GET", "/version")
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"toxiproxy-server did not answer on :{port} (log: toxiproxy.log)")

    def call(self, method, path, body=None):
        return web.call(method, self.url + path, body, timeout=5)

    def proxy(self, name, listen_port, upstream_port):
        self.call("POST", "/proxies", {"name": name, "listen": f"127.0.0.1:{listen_port}",
                                       "upstream": f"127.0.0.1:{upstream_port}", "enabled": True})

    def latency(self, name, ms):
        """Answers from the downstream arrive ms later: one round trip costs ms more. 0 removes the toxic."""
        try:
            self.call("DELETE", f"/proxies/{name}/toxics/latency")
        except urllib.error.HTTPError as e:
            if e.code != 404:
                raise
        if ms > 0:
            self.call("POST", f"/proxies/{name}/toxics", {"name": "latency", "type": "latency", "stream": "downstream",
                                                          "toxicity": 1.0, "attributes": {"latency": ms, "jitter": 0}})

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.logf.close()


class App:
    """One order-api or order-worker, started as scripts/up.sh does (java -jar, the local profile)."""

    def __init__(self, name, jar, port, env, out, ready_timeout):
        self.name, self.jar, self.port, self.env, self.out = name, jar, port, env, out
        self.ready_timeout = ready_timeout
        self.proc = None
        self.starts = 0

    def start(self, props):
        self.starts += 1
        args = ["java"] + os.environ.get("JAVA_OPTS", "-XX:+UseG1GC -Xms512m -Xmx512m").split() + ["-jar", self.jar]
        args += [f"--{k}={v}" for k, v in props.items()]
        logf = open(os.path.join(self.out, f"{self.name}-{self.starts}.log"), "w")
        env = dict(os.environ, **self.env, SERVER_PORT=str(self.port))
        env.setdefault("SPRING_PROFILES_ACTIVE", "local")
        self.proc = subprocess.Popen(args, stdout=logf, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        logf.close()
        try:
            stack.wait_ready(f"http://127.0.0.1:{self.port}", self.proc, self.ready_timeout, what=self.name)
        except RuntimeError as e:
            raise RuntimeError(f"{e}; log: {self.name}-{self.starts}.log") from None
        log(f"{self.name} ready on :{self.port} (pid {self.proc.pid}{', ' + ', '.join(props) if props else ''})")

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(45)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class ApiMeters(threading.Thread):
    """Every second: the API's meters in API_METERS, Hikari's acquire timer, and its process' threads."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url = url.rstrip("/") + "/actuator/prometheus"
        self.samples = []  # (time, {name: value}), values summed over a meter's series
        self.stop = threading.Event()
        self.pid = None

    def read(self):
        values = {}
        for line in web.get_text(self.url, timeout=3).splitlines():
            if line.startswith("#"):
                continue
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
            if not m:
                continue
            name, labels, value = m.group(1), m.group(2) or "", float(m.group(3))
            if name == "flashsale_purchase_group_queued" and 'path="sync"' not in labels:
                continue
            if name in API_METERS or name.startswith("hikaricp_connections_acquire_seconds"):
                values[name] = values.get(name, 0.0) + value
        if self.pid:
            raw = procs._read(f"/proc/{self.pid}/status") or b""
            m = re.search(rb"^Threads:\s+(\d+)", raw, re.M)
            if m:
                values["process_threads"] = float(m.group(1))
        return values

    def run(self):
        while not self.stop.is_set():
            try:
                self.samples.append((time.time(), self.read()))
            except Exception:  # noqa: BLE001 - a missed sample while the API restarts
                pass
            self.stop.wait(1.0)

    def between(self, t0, t1):
        """Folded meters of [t0, t1]: max of the sampled gauges, and Hikari's mean acquire time (ms) from its
        timer's sum and count (its _max decays over minutes, so it says nothing about one step)."""
        inside = [v for t, v in self.samples if t0 <= t <= t1]
        before = [v for t, v in self.samples if t < t0]
        if not inside:
            return {}
        out = {}
        for name in API_METERS + ("process_threads",):
            vals = [v[name] for v in inside if name in v]
            if vals:
                out[name] = max(vals)
        first, last = (before[-1] if before else inside[0]), inside[-1]
        s, c = "hikaricp_connections_acquire_seconds_sum", "hikaricp_connections_acquire_seconds_count"
        if s in last and c in last and s in first and c in first:
            n = last[c] - first[c]
            # A restart resets the counters: then the step's own samples are all there is.
            if n < 0:
                n, first = last[c], {s: 0.0, c: 0.0}
            out["poolAcquires"] = n
            out["poolWaitMeanMs"] = (last[s] - first[s]) * 1000 / n if n > 0 else 0.0
        return out


class Seeds(bench.Bench):
    """bench.Bench with the plan's shape replaceable (claim 5 runs ramp, steady and flash shapes)."""

    shape = None

    def plan(self, step_dir, phases, rate, seconds, poll_fraction, shape=None):
        p = super().plan(step_dir, phases, rate, seconds, poll_fraction, shape)
        if self.shape is not None:
            p["shape"] = self.shape
        return p


class Drill:
    def __init__(self, a):
        self.a = a
        self.api_url = f"http://127.0.0.1:{a.api_port}"
        self.worker_url = f"http://127.0.0.1:{a.worker_port}"
        self.tag = time.strftime("%Y%m%d%H%M%S", time.gmtime())
        self.queue = f"seeds-{self.tag}.orders.requested"
        bench_args = ["--k6", a.k6, "--out", a.out, "--base-url", self.api_url, "--worker-url", self.worker_url,
                      "--step-seconds", str(a.step_seconds), "--stop-after", "1", "--refine", str(a.refine),
                      "--max-rate", str(a.max_rate), "--max-vus", str(a.max_vus), "--queue", self.queue,
                      "--modes", ",".join(a.modes), "--drain-bound", "120" if a.quick else "300"]
        self.ba = bench.parse_args(bench_args)
        self.ba.ramps = {"PING": a.ping_rates, **{m: a.rates for m in MODES}}
        self.b = Seeds(self.ba)
        self.result = {"points": [], "claim1": None, "claim5": []}

    # -- the stack ----------------------------------------------------------------------------------
    def start(self):
        a = self.a
        for port in (a.api_port, a.worker_port):
            if stack.is_ready(f"http://127.0.0.1:{port}"):
                raise RuntimeError(f"something already answers on :{port}: the drill starts its own apps "
                                   "(stop them, or pass --api-port/--worker-port)")
        self.toxi = Toxiproxy(a.toxiproxy, a.toxiproxy_port, a.out)
        env = {}
        self.proxy_ports = {}
        for i, name in enumerate(DOWNSTREAMS, start=1):
            if name not in a.proxy:
                continue
            host_var, port_var, real = DOWNSTREAMS[name]
            listen = a.toxiproxy_port + i
            self.toxi.proxy(name, listen, real)
            self.proxy_ports[name] = listen
            env[host_var], env[port_var] = "127.0.0.1", str(listen)
            log(f"{name}: apps -> toxiproxy :{listen} -> :{real}")
        # Own queue and mode key: a shared broker or Redis may serve other stacks (their workers must not
        # drain our queue, their drills must not switch our mode).
        base = f"seeds-{self.tag}.orders"
        env.update(APP_MESSAGING_EXCHANGE=base, APP_MESSAGING_QUEUE=self.queue, APP_MESSAGING_RETRY_EXCHANGE=f"{base}.retry",
                   APP_MESSAGING_RETRY_QUEUE=f"{base}.retry", APP_MESSAGING_DEAD_LETTER_EXCHANGE=f"{base}.dlx",
                   APP_MESSAGING_DEAD_LETTER_QUEUE=f"{base}.dead")
        self.api_props = {"app.mode.redis-key": f"flashsale:seeds-{self.tag}:mode"}
        api_jar = os.path.join(ROOT, "order-api", "target", "order-api.jar")
        worker_jar = os.path.join(ROOT, "order-worker", "target", "order-worker.jar")
        self.api = App("order-api", api_jar, a.api_port, env, a.out, a.ready_timeout)
        self.worker = App("order-worker", worker_jar, a.worker_port, env, a.out, a.ready_timeout)
        self.api.start(self.api_props)
        self.worker.start({})
        self.meters = ApiMeters(self.api_url)
        self.meters.pid = self.api.proc.pid
        self.meters.start()

    def stop(self):
        if getattr(self, "meters", None):
            self.meters.stop.set()
        for app in (getattr(self, "worker", None), getattr(self, "api", None)):
            if app:
                app.stop()
        if getattr(self, "toxi", None):
            self.toxi.stop()

    def set_latency(self, ms):
        self.latency_ms = ms
        for name in self.a.toxic_on:
            self.toxi.latency(name, ms)
        log(f"downstream latency {ms} ms ({', '.join(self.a.toxic_on)})")

    def restart_api(self, props, label):
        """Restarts the API only (the worker and the proxy stay), started and warmed up without the toxic."""
        ms = self.latency_ms
        self.api.stop()
        self.set_latency(0)
        self.api.start({**self.api_props, **props})
        self.meters.pid = self.api.proc.pid
        self.b.disc.roots["api"] = self.api.proc.pid
        self.warm(["SYNC"], label, max(5, self.a.warmup // 2))
        self.set_latency(ms)

    # -- steps --------------------------------------------------------------------------------------
    def warm(self, phases, label, seconds):
        if seconds <= 0:
            return
        per = max(2, seconds // len(phases))
        rate = min(self.a.max_rate, 100 if self.a.quick else 300)
        log(f"warm-up ({label}): {per}s per phase at {rate}/s ({', '.join(phases)})")
        s = self.b.k6(f"warmup-{label}", phases, rate, per, 0.1, measured=False)
        s["kind"] = "warmup"
        self.b.wait_drained()

    def annotate(self, steps, **extra):
        for s in steps:
            s.update(extra)
            t0 = s.get("startedAt")
            if t0 is not None:
                s["apiMeters"] = self.meters.between(t0, t0 + s["wallSeconds"])
                cpu = s.get("cpuSeconds") or {}
                s["cpuUtilisation"] = {r: v / s["wallSeconds"] for r, v in cpu.items()} if s["wallSeconds"] else {}

    def sweep(self):
        for ms in self.a.latencies:
            self.set_latency(ms)
            point = {"latencyMs": ms, "rows": {}}
            rows = [(r, r) for r in ["PING"] + self.a.modes] + [(f"{m} again", m) for m in self.a.again]
            for row, mode in rows:
                knee, steps = self.b.ramp(row, mode)
                self.annotate(steps, latencyMs=ms, part="sweep")
                point["rows"][row] = {"knee": knee["n"] if knee else None, "steps": [s["n"] for s in steps]}
            self.result["points"].append(point)
            self.save()

    def claim1(self):
        a = self.a
        ms = a.claim1_latency
        self.set_latency(ms)
        point = next((p for p in self.result["points"] if p["latencyMs"] == ms), None)
        if point and point["rows"].get("SYNC"):  # the sweep measured SYNC at this latency
            n = point["rows"]["SYNC"]["knee"]
            knee = self.step(n)["rate"] if n else a.rates[0]
        else:
            found, steps = self.b.ramp("SYNC")
            self.annotate(steps, latencyMs=ms, part="claim1-knee")
            knee = found["rate"] if found else a.rates[0]
        rates = sorted({min(a.max_rate, max(10, round(knee * f))) for f in a.claim1_factors})
        log(f"claim 1 at {ms} ms: SYNC at {rates}/s (SYNC knee {knee}/s), admission off, then on")
        c1 = {"latencyMs": ms, "syncKnee": knee, "rates": rates, "admissionOff": ADMISSION_OFF, "variants": {}}
        # Each variant on a freshly started API with the same warm-up: off first, so that the API is left
        # as configured for what follows.
        for variant, props in (("off", ADMISSION_OFF), ("on", {})):
            self.restart_api(props, f"admission-{variant}")
            steps = []
            for rate in rates:
                s = self.b.k6(f"claim1-{variant}-SYNC-{rate}", ["SYNC"], rate, a.step_seconds, 0.0)
                s["kind"] = "claim1"
                self.b.say(s)
                steps.append(s)
            self.annotate(steps, latencyMs=ms, part="claim1", admission=variant)
            c1["variants"][variant] = [s["n"] for s in steps]
        self.result["claim1"] = c1
        self.save()

    def claim5(self):
        a = self.a
        self.set_latency(a.claim5_latency)
        peak, secs = a.claim5_peak, a.claim5_seconds
        n, step_s = 5, max(2, secs // 5)
        ramp_rates = [round(peak / n + i * (peak - peak / n) / (n - 1)) for i in range(n)]
        shapes = {  # name -> (plan shape, seconds, arrivals it asks for: lib/plan.js climbs 1 s to each step)
            "ramp": ({"kind": "ramp", "from": ramp_rates[0], "to": peak, "steps": n, "stepSeconds": step_s}, n * step_s,
                     round(sum((prev + r) / 2 + r * (step_s - 1) for prev, r in zip([ramp_rates[0]] + ramp_rates, ramp_rates)))),
            "stress": ({"kind": "steady", "rate": peak, "seconds": secs}, secs, peak * secs),
            "spike": ({"kind": "flash", "peak": peak, "holdSeconds": max(1, secs // 2)}, max(1, secs // 2) + 2,
                      peak * (max(1, secs // 2) + 1)),
        }
        log(f"claim 5: ramp, stress and spike to {peak}/s on {', '.join(a.claim5_modes)}")
        for shape_name, (shape, seconds, intended) in shapes.items():
            for mode in a.claim5_modes:
                sale = self.fresh_sale(mode, f"claim5-{shape_name}")
                saved = self.b.sales.get(mode)
                self.b.sales[mode] = sale
                self.b.shape = shape
                try:
                    s = self.b.k6(f"claim5-{shape_name}-{mode}", [mode], peak, seconds, 0.1)
                finally:
                    self.b.shape = None
                    if saved is None:
                        del self.b.sales[mode]
                    else:
                        self.b.sales[mode] = saved
                s["kind"] = "claim5"
                self.b.say(s)
                view = self.b.api.call("GET", f"/api/v1/admin/sales/{sale['id']}/stock")
                units = s.get("unitsAccepted") or 0
                s["claim5"] = {"shape": shape_name, "shapeSpec": shape, "intendedArrivals": intended, "stockView": view,
                               "confirmedUnits": view.get("confirmed"), "queuedUnits": view.get("queued"),
                               "lostUnits": max(0, units - (view.get("confirmed") or 0) - (view.get("queued") or 0)),
                               "balanced": view.get("balanced")}
                self.annotate([s], latencyMs=a.claim5_latency, part="claim5", mode=mode)
                self.result["claim5"].append(s["n"])
        self.save()

    def fresh_sale(self, mode, label):
        starts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
        ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 12 * 3600))
        sale = self.b.api.call("POST", "/api/v1/sales", {
            "sku": f"seeds-{self.tag}-{label}-{mode}", "name": f"seeds {label} {mode}", "priceCents": 999,
            "stock": self.ba.stock, "perUserLimit": self.ba.limit, "startsAt": starts, "endsAt": ends})
        return {"id": int(sale["id"]), "stock": self.ba.stock}

    def step(self, n):
        return self.b.steps[n - 1]

    def save(self):
        a = self.a
        self.result.update({
            "command": os.environ.get("SEEDS_COMMAND") or "load-tests/run.sh seeds " + " ".join(sys.argv[1:]),
            "commit": bench.git_commit(), "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "seconds": time.time() - self.started, "cpus": os.cpu_count(), "loadavgBefore": self.load0,
            "options": {k: (sorted(v) if isinstance(v, set) else v) for k, v in vars(a).items() if k not in ("k6", "toxiproxy")},
            "proxies": getattr(self, "proxy_ports", {}), "processes": self.b.disc.notes if hasattr(self.b, "disc") else [],
            "kneeP99Ms": self.ba.knee_p99, "kneeErrors": self.ba.knee_errors, "kneeOffered": self.ba.knee_offered,
            "steps": self.b.steps,
        })
        with open(os.path.join(a.out, "seeds.json"), "w") as f:
            json.dump(self.result, f, indent=1, default=str)

    def run(self):
        a = self.a
        self.started, self.load0 = time.time(), os.getloadavg()
        try:
            self.start()
            b = self.b
            b.disc = procs.Discovery({"api": a.api_port, "worker": a.worker_port,
                                      "rabbitmq": DOWNSTREAMS["rabbitmq"][2], "redis": DOWNSTREAMS["redis"][2],
                                      "postgres": DOWNSTREAMS["postgres"][2]}, {})
            for note in b.disc.notes:
                log(note)
            b.sampler = bench.Sampler(self.ba, b.disc)
            b.sampler.start()
            b.create_sales()
            self.set_latency(0)
            self.warm(["PING"] + a.modes, "start", a.warmup)
            if "sweep" not in a.skip:
                self.sweep()
            if "claim1" not in a.skip and "SYNC" in a.modes:
                self.claim1()
            if "claim5" not in a.skip:
                self.claim5()
            b.sampler.stop.set()
            self.result["final"] = {m: b.api.call("GET", f"/api/v1/admin/sales/{s['id']}/stock") for m, s in b.sales.items()}
            self.result["finalQueue"] = b.final_queue()
        finally:
            try:
                os.remove(os.path.join(a.out, "tokens.json"))  # bearer tokens do not belong in results
            except OSError:
                pass
            self.save()
            self.stop()
        broken = [s["n"] for s in self.b.steps if s.get("invariant") is not None and s["invariant"] < 1]
        if broken:
            log(f"conservation FAILED in steps {broken}")
            return 3
        return 0


def main():
    a = parse_args(sys.argv[1:])
    if "ADMIN_TOKEN" not in os.environ:
        print("ADMIN_TOKEN is not set: start the drill through load-tests/run.sh seeds", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    # A stopped drill still stops the toxiproxy and the apps it started (Drill.run's finally).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    return Drill(a).run()


if __name__ == "__main__":
    sys.exit(main())
