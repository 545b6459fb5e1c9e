#!/usr/bin/env python3
"""The many-sales drill (issue 41): many sales open at once on a Redis Cluster, one crowd spread over them.

Creates --sales sales of --stock units each through the admin API, then runs the flash-sale drill's k6 step
(drills/flash-sale.js with SALE_IDS: arrival i buys one unit of sale i mod N) at --rate arrivals/s for
--seconds, in one mode. Around the step it reads every cluster master's INFO commandstats and its
redis-server's CPU from /proc, so the report shows how the load spread over the masters. Afterwards it waits
for the queued orders to drain and reads every sale's stock view: 0 oversold (confirmed units within the
stock, neither store below 0) and every sale balanced (Redis against Postgres) pass the drill.

The API and the worker must run on the cluster (the redis-cluster profile, docs/operations.md#redis-cluster):
the drill checks that each sale's state is on its slot's master before the crowd starts.

    load-tests/run.sh many-sales [--sales 100] [--stock 50] [--rate 500] [--seconds 30] [--mode SYNC]
        [--cluster 127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003] [--keyed 0.7] [--retries 3] [--out DIR]

run.sh passes --k6, --out and --base-url, and the admin token in ADMIN_TOKEN. Writes many-sales.json and
summary.md to --out; exits 0 when the invariants hold, 1 otherwise.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "pylib"))
import procs  # noqa: E402
from bench import Redis  # noqa: E402
from flashtools import k6summary, stack, tokens, web  # noqa: E402

LOAD_TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SLOTS = 16384


def log(msg):
    print(f"[many-sales] {msg}", flush=True)


def parse_args(argv):
    p = stack.drill_parser("load-tests/run.sh many-sales", __doc__)
    p.add_argument("--sales", type=int, default=100)
    p.add_argument("--stock", type=int, default=50, help="units per sale")
    p.add_argument("--limit", type=int, default=1, help="per-user limit of each sale")
    p.add_argument("--rate", type=int, default=500, help="arrivals per second, over all sales")
    p.add_argument("--seconds", type=int, default=30)
    p.add_argument("--mode", default="SYNC", choices=["SYNC", "ASYNC", "AUTO"])
    p.add_argument("--keyed", type=float, default=0.7, help="share of shoppers sending an Idempotency-Key")
    p.add_argument("--retries", type=int, default=3, help="a shopper told 503 asks again up to this often")
    p.add_argument("--cluster", default=os.environ.get("REDIS_CLUSTER_NODES",
                                                       "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003"))
    p.add_argument("--drain-seconds", type=int, default=120, help="longest wait for queued orders to be written")
    return p.parse_args(argv)


def crc16(data):
    """CRC16-XMODEM, Redis Cluster's key hash."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def sale_slot(sale):
    return crc16(f"sale:{sale}".encode()) % SLOTS  # the hash tag of {sale:ID}


def masters(seed):
    """{"host:port": [(first slot, last slot), ...]} for every master, from CLUSTER NODES."""
    out = {}
    for line in Redis(seed).cmd("CLUSTER", "NODES").splitlines():
        fields = line.split()
        if len(fields) < 8 or "master" not in fields[2].split(","):
            continue
        ranges = []
        for part in fields[8:]:
            if part.startswith("["):
                continue  # a slot being moved
            first, _, last = part.partition("-")
            ranges.append((int(first), int(last or first)))
        out[fields[1].split("@")[0]] = ranges
    return out


def master_of(slot, by_master):
    return next(m for m, ranges in by_master.items() if any(a <= slot <= b for a, b in ranges))


def commands(node):
    info = Redis(node).cmd("INFO", "commandstats")
    return sum(int(part.split("=")[1]) for line in info.splitlines() if line.startswith("cmdstat_")
               for part in line.split(":", 1)[1].split(",") if part.startswith("calls="))


def cpu_ticks(node):
    pid = procs.pid_listening_on(int(node.rsplit(":", 1)[1]))
    st = procs.stat(pid) if pid else None
    return (st[1] + st[2]) if st else None


class Drill:
    def __init__(self, a):
        self.a = a
        self.admin = os.environ["ADMIN_TOKEN"]
        self.stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())

    def call(self, method, path, body=None):
        return web.call(method, self.a.base_url + path, body, token=self.admin, timeout=30)

    def create_sales(self):
        starts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
        ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 6 * 3600))
        return [int(self.call("POST", "/api/v1/sales", {
            "sku": f"many-{self.stamp}-{n}", "name": f"many-sales drill {n}", "priceCents": 999,
            "stock": self.a.stock, "perUserLimit": self.a.limit, "startsAt": starts, "endsAt": ends})["id"])
            for n in range(self.a.sales)]

    def run(self):
        a = self.a
        seed = a.cluster.split(",")[0]
        by_master = masters(seed)
        if len(by_master) < 2:
            log(f"{seed} is not a Redis Cluster of several masters ({len(by_master)} found)")
            return 2
        mode_before = self.call("GET", "/api/v1/admin/mode")["mode"]
        self.call("PUT", "/api/v1/admin/mode", {"mode": a.mode, "reason": "many-sales drill"})
        try:
            return self.crowd(by_master)
        finally:
            self.call("PUT", "/api/v1/admin/mode", {"mode": mode_before, "reason": "restored after many-sales"})

    def crowd(self, by_master):
        a = self.a
        sales = self.create_sales()
        home = {sale: master_of(sale_slot(sale), by_master) for sale in sales}
        for sale, node in home.items():
            if Redis(node).cmd("EXISTS", f"{{sale:{sale}}}") != "1":
                log(f"sale {sale} has no state on {node}, its slot's master: the API does not run on this cluster")
                return 2
        log(f"{len(sales)} sales of {a.stock} units: " + ", ".join(
            f"{node} {sum(1 for s in sales if home[s] == node)}" for node in by_master))
        users = a.rate * a.seconds
        shoppers = tokens.write_shoppers(os.path.join(a.out, "tokens.json"), users, f"many-{self.stamp}-")
        summary_file = os.path.join(a.out, "k6-summary.json")
        env = dict(os.environ, KIND="purchase", RATE=str(a.rate), SECONDS=str(a.seconds), KEYED=str(a.keyed),
                   TOKENS=shoppers, BASE_URL=a.base_url, SALE_IDS=",".join(map(str, sales)), SUMMARY=summary_file,
                   EXPECT="201,202,409", RUN_ID=f"many-{self.stamp}", RETRIES=str(a.retries),
                   # A crowd of ARRIVALS shoppers, each asking again as a 503 tells it (flash-sale.js: crowd).
                   ARRIVALS=str(users))
        calls0 = {n: commands(n) for n in by_master}
        cpu0 = {n: cpu_ticks(n) for n in by_master}
        t0 = time.time()
        k6 = subprocess.run([a.k6, "run", "--quiet", "--no-usage-report", "drills/flash-sale.js"], cwd=LOAD_TESTS,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wall = time.time() - t0
        calls = {n: commands(n) - calls0[n] for n in by_master}
        cpu = {n: None if cpu0[n] is None or cpu_ticks(n) is None else (cpu_ticks(n) - cpu0[n]) / procs.CLK_TCK
               for n in by_master}
        os.remove(shoppers)  # bearer tokens do not belong in results
        with open(os.path.join(a.out, "k6.log"), "w") as f:
            f.write(k6.stdout)
        views = self.drained(sales)
        return self.report(sales, home, by_master, calls, cpu, wall, views, k6.returncode, summary_file)

    def drained(self, sales):
        deadline = time.time() + self.a.drain_seconds
        while True:
            views = {sale: self.call("GET", f"/api/v1/admin/sales/{sale}/stock") for sale in sales}
            if all(v.get("queued", 0) == 0 for v in views.values()) or time.time() > deadline:
                return views
            time.sleep(1)

    def report(self, sales, home, by_master, calls, cpu, wall, views, k6_exit, summary_file):
        a = self.a
        answered = k6summary.answers(k6summary.read(summary_file))
        oversold = [s for s, v in views.items()
                    if v["confirmed"] > v["initialStock"] or v["redisRemaining"] < 0 or v["dbRemaining"] < 0]
        unbalanced = [s for s, v in views.items() if not v.get("balanced")]
        queued = sum(v.get("queued", 0) for v in views.values())
        per_master = []
        for node in by_master:
            mine = [s for s in sales if home[s] == node]
            confirmed = sum(views[s]["confirmed"] for s in mine)
            per_master.append({
                "master": node, "slots": sum(b - a_ + 1 for a_, b in by_master[node]), "sales": len(mine),
                "confirmed": confirmed, "commands": calls[node], "cpuSeconds": cpu[node],
                "cpuMsPerOrder": None if not confirmed or cpu[node] is None else 1000 * cpu[node] / confirmed,
                "commandsPerOrder": None if not confirmed else calls[node] / confirmed})
        result = {
            "command": os.environ.get("MANY_COMMAND", "load-tests/run.sh many-sales"), "startedAt": self.stamp,
            "sales": a.sales, "stock": a.stock, "rate": a.rate, "seconds": a.seconds, "mode": a.mode,
            "wall": wall, "k6Exit": k6_exit, "answersExpected": answered["expected"],
            "answersUnavailable": answered["unavailable"], "answersOther": answered["other"],
            "dropped": answered["dropped"], "masters": per_master, "oversold": oversold,
            "unbalanced": unbalanced, "stillQueued": queued,
            "soldOut": sum(1 for v in views.values() if v["redisRemaining"] == 0 and v["dbRemaining"] == 0),
            "confirmed": sum(v["confirmed"] for v in views.values())}
        with open(os.path.join(a.out, "many-sales.json"), "w") as f:
            json.dump(result, f, indent=1)
        passed = not oversold and not unbalanced and queued == 0 and answered["other"] == 0
        lines = [f"# Many-sales drill, {self.stamp}", "", f"`{result['command']}`: {a.sales} sales of {a.stock} units,"
                 f" {a.rate}/s for {a.seconds} s in {a.mode}, {a.retries} retries of a 503.", "",
                 f"Answers: {result['answersExpected']} expected (201, 202, 409), {result['answersUnavailable']} 503,"
                 f" {result['answersOther']} other, {result['dropped']} arrivals dropped by k6.", "",
                 f"Invariants: {len(oversold)} sales oversold, {len(unbalanced)} not balanced (Redis against"
                 f" Postgres), {queued} orders still queued, {result['soldOut']} sold out, {result['confirmed']}"
                 f" units confirmed: **{'PASSED' if passed else 'FAILED'}**.", "",
                 "| master | slots | sales | units confirmed | commands | commands / order | Redis CPU s |"
                 " CPU ms / order |", "|---|---|---|---|---|---|---|---|"]
        for m in per_master:
            lines.append(f"| {m['master']} | {m['slots']} | {m['sales']} | {m['confirmed']} | {m['commands']} | "
                         f"{fmt(m['commandsPerOrder'])} | {fmt(m['cpuSeconds'], 2)} | {fmt(m['cpuMsPerOrder'], 3)} |")
        lines += ["", "Commands and CPU are counted over the crowd's step only (before the queued orders drained);"
                  " a master's commands include the shoppers' throttle calls on their own slots."]
        with open(os.path.join(a.out, "summary.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines))
        return 0 if passed else 1


def fmt(value, digits=1):
    return "-" if value is None else f"{value:,.{digits}f}"


def main():
    a = parse_args(sys.argv[1:])
    os.makedirs(a.out, exist_ok=True)
    sys.exit(Drill(a).run())


if __name__ == "__main__":
    main()
