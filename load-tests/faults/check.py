#!/usr/bin/env python3
"""The fault drill's checker: holds the system to what its shoppers were told.

  check.py watch   ...   from the heal on: when the stock view balances again (every crowd sale's), and
                         when a fresh purchase (a probe on the probe sale) is accepted again; writes watch.json
  check.py verdict ...   after the crowd: waits up to the SLO for every reservation to be final, reads
                         Postgres, Redis and the API, replays keys, prints one line, writes check.json;
                         exit 0 when nothing was breached, 1 otherwise. A crowd may buy from several sales
                         (--sale and --stock once each, in the same order): each is judged on its own
                         ledger, and a sale in the ledger that is not judged is a breach itself
  check.py verdict --fixture F   the same judgement on recorded evidence (no services): the self-test
  check.py selftest              feeds clean and broken evidence through `verdict --fixture` and asserts
                                 each breach is caught

Breaches (each counted, any non-zero fails the fault):
  oversold   units CONFIRMED in Postgres beyond the sale's stock
  lost       an order answered 201/202 (to the crowd, or to a replay) that its owner cannot read in a
             final state (CONFIRMED, REJECTED, FAILED) once the SLO is over, or a 201 not CONFIRMED
  duplicated a key answered with two order ids, or two orders in Postgres for one (user, key)
  stuck      reservation records still RESERVED, PUBLISHED or CLAIMED in Redis (or units still held)
             once the SLO is over
  ghosts     an order in Postgres (not REJECTED or FAILED) that was never answered 201/202 to its
             shopper, nor is returned by a replay of its key
  closed     SALE_NOT_ACTIVE answered for an open sale
  unbalanced the conservation view did not balance within the bound after the heal, or at the end
  not-selling no fresh purchase was accepted within the bound after the heal
  hung       (--hang-bound S) a request sent between the fault and the heal waited longer than S s for its
             answer, or got none
  replay-lost (--replay-accepted: every accepted key is replayed) a replay of a key whose order is CONFIRMED
             that did not answer 201/202 with that order's id
  unchecked-sales the crowd bought from a sale the verdict was not given (its orders would go unjudged)
A crowd sale's breaches after the first are named after it (crowd-2:oversold), the probe's probe:...
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts", "pylib"))
from flashtools import tokens, web  # noqa: E402
FINAL = {"CONFIRMED", "REJECTED", "FAILED"}
HOLDING = ("RESERVED", "PUBLISHED", "CLAIMED")
# 503s of the sales' line (a shopper beyond the units, or waiting for a place): no failure.
LINE_CODES = ("IN_LINE", "BEYOND_STOCK", "UNITS_HELD")


def now_ms():
    return int(time.time() * 1000)


class Api:
    def __init__(self, base_url):
        self.base = base_url.rstrip("/")
        self.admin = tokens.admin(3600)
        self.cache = {}

    def token(self, user):
        if user not in self.cache:
            self.cache[user] = tokens.shopper(user, 3600)
        return self.cache[user]

    def call(self, method, path, token, body=None, headers=None, timeout=10):
        try:
            status, raw, answer = web.exchange(method, self.base + path, body, token=token,
                                               headers={"Accept": "application/json", **(headers or {})},
                                               timeout=timeout)
        except (urllib.error.URLError, OSError, TimeoutError):
            return 0, {}, None
        return status, parse(raw), answer.get("Retry-After")

    def stock(self, sale):
        status, body, _ = self.call("GET", f"/api/v1/admin/sales/{sale}/stock", self.admin)
        return body if status == 200 else None

    def purchase(self, sale, user, key, quantity):
        return self.call("POST", f"/api/v1/sales/{sale}/orders", self.token(user), {"quantity": quantity},
                         {"Idempotency-Key": key})

    def order(self, user, order_id):
        return self.call("GET", f"/api/v1/orders/{order_id}", self.token(user))


def parse(raw):
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        return {}


def psql(sql):
    env = dict(os.environ, PGPASSWORD=os.environ.get("DB_PASSWORD", "flashsale"))
    out = subprocess.run(["psql", "-h", os.environ.get("DB_HOST", "127.0.0.1"), "-p", os.environ.get("DB_PORT", "5432"),
                          "-U", os.environ.get("DB_USER", "flashsale"), "-d", os.environ.get("DB_NAME", "flashsale"),
                          "-qtAX", "-v", "ON_ERROR_STOP=1", "-c", sql], env=env, capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    return out.stdout.strip()


def pg_orders(sale):
    raw = psql("select coalesce(json_agg(json_build_object('id', id, 'user', user_id, 'key', idempotency_key, "
               f"'qty', quantity, 'status', status, 'mode', mode)), '[]') from purchase_order where sale_id = {int(sale)}")
    return json.loads(raw)


# The records' format is the scripts' own (shared.lua, put before each script as LuaScripts.load does).
SHARED_LUA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "src", "main", "resources",
                          "redis", "shared.lua")
with open(SHARED_LUA) as shared:
    HOLDING_SCRIPT = shared.read() + """
local out = {}
local records = redis.call('HGETALL', KEYS[1])
for i = 1, #records, 2 do
  local state, _, _, _, created = Record.parts(records[i + 1])
  if state == 'RESERVED' or state == 'PUBLISHED' or state == 'CLAIMED' then
    table.insert(out, records[i]); table.insert(out, state); table.insert(out, created or '0')
  end
end
return out
"""


def holding_records(sale):
    """Reservation records of the sale still in a holding state, from Redis itself (its records' hash)."""
    out = subprocess.run(["redis-cli", "-h", os.environ.get("REDIS_HOST", "127.0.0.1"), "-p", os.environ.get("REDIS_PORT", "6379"),
                          "--no-raw", "EVAL", HOLDING_SCRIPT, "1", "{sale:%d}:orders" % int(sale)],
                         capture_output=True, text=True, timeout=30)
    if out.returncode != 0 or "ERR" in out.stdout[:40] or "Could not connect" in out.stdout + out.stderr:
        return None
    values = [line.split(") ", 1)[-1].strip().strip('"') for line in out.stdout.splitlines() if ") " in line]
    return [{"order": values[i], "state": values[i + 1], "created": int(values[i + 2] or 0)}
            for i in range(0, len(values) - 2, 3)]


def read_ledger(path, sale=None):
    """The ledger's records; given a sale, only its keys and their answers."""
    records = []
    if not path or not os.path.exists(path):
        return records
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass
    if sale is None:
        return records
    mine = {r.get("k") for r in records if r.get("ev") == "key" and r.get("sale") == sale}
    return [r for r in records if r.get("k") in mine]


def ledger_sales(path):
    return {r.get("sale") for r in read_ledger(path) if r.get("ev") == "key"}


def keys_of(ledger):
    """Per key: user, quantity, every answer in order, whether the shopper gave up."""
    keys = {}
    for r in ledger:
        if r.get("ev") == "key":
            keys[r["k"]] = {"user": r["u"], "qty": r["q"], "answers": [], "gaveUp": False}
    for r in ledger:
        k = keys.get(r.get("k"))
        if k is None:
            continue
        if r.get("ev") == "answer":
            k["answers"].append(r)
        elif r.get("ev") == "gave-up":
            k["gaveUp"] = True
    return keys


def accepted_ids(key):
    return {a["o"]: a["s"] for a in key["answers"] if a.get("s") in (201, 202) and a.get("o")}


def to_replay(keys, orders, accepted_too=False):
    """Keys whose shopper has no final answer (503s, lost answers, gave up), and keys of orders in
    Postgres nobody was answered about; with accepted_too, every key that was answered 201/202 as well."""
    told = {o for k in keys.values() for o in accepted_ids(k)}
    wanted = {name for name, k in keys.items() if accepted_ids(k)} if accepted_too else set()
    for name, k in keys.items():
        last = k["answers"][-1]["s"] if k["answers"] else 0
        if last not in (201, 202, 409, 400, 422):
            wanted.add(name)
    for o in orders:
        if o["id"] not in told and o.get("key") in keys:
            wanted.add(o["key"])
    return sorted(wanted)


def replay(api, sale, keys, names, bound=8):
    def one(name):
        k = keys[name]
        deadline = time.time() + bound
        while True:
            status, body, retry = api.purchase(sale, k["user"], name, k["qty"])
            if status not in (0, 429, 502, 503, 504) or time.time() > deadline:
                return name, {"s": status, "c": body.get("code"), "o": body.get("orderId")}
            time.sleep(min(float(retry or 1), 3))

    # Wide: since the sales' line, a crowd's shoppers who gave up (each retry joined the line at its back) are
    # told 503 BEYOND_STOCK on a replay too, each for the whole bound; 1,200 of them took 16 threads 10 min.
    with concurrent.futures.ThreadPoolExecutor(64) as pool:
        return dict(pool.map(one, names))


def read_orders(api, owners, bound=4):
    """Reads every accepted order as its owner. The SLO is over by now: an order not final is lost, so a
    read retries only briefly (a 503 while a heal settles)."""
    def one(item):
        order_id, user = item
        deadline = time.time() + bound
        while True:
            status, body, retry = api.order(user, order_id)
            if (status == 200 and body.get("status") in FINAL) or time.time() > deadline:
                return order_id, {"http": status, "status": body.get("status"), "code": body.get("code")}
            time.sleep(min(float(retry or 1), 3))

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        return dict(pool.map(one, sorted(owners.items())))


def judge(ev):
    """The verdict on one sale's evidence: numbers and the list of breaches. Pure: the self-test feeds it."""
    keys = keys_of(ev["ledger"])
    orders = ev["orders"]
    replays = ev.get("replays", {})
    reads = ev.get("reads", {})
    stock = ev["stock"]
    n = {"keys": len(keys), "answers": sum(len(k["answers"]) for k in keys.values())}
    told = {}  # order id -> (key, first status told)
    dup_keys = set()
    for name, k in keys.items():
        ids = dict(accepted_ids(k))
        r = replays.get(name)
        if r and r.get("s") in (201, 202) and r.get("o"):
            ids.setdefault(r["o"], r["s"])
        if len(ids) > 1:
            dup_keys.add(name)
        for o, s in ids.items():
            told.setdefault(o, (name, s))
    by_key = {}
    for o in orders:
        if o.get("key"):
            by_key.setdefault((o["user"], o["key"]), []).append(o["id"])
    dup_keys |= {key for (user, key), ids in by_key.items() if len(ids) > 1}
    pg = {o["id"]: o for o in orders}
    codes = {}
    for k in keys.values():
        for a in k["answers"]:
            label = str(a.get("s")) + (":" + a["c"] if a.get("c") else "")
            codes[label] = codes.get(label, 0) + 1
    n["statuses"] = codes
    n["accepted"] = len(told)
    crowd_told = {o for k in keys.values() for o in accepted_ids(k)}
    n["acceptedOnReplay"] = len(set(told) - crowd_told)
    n["gaveUp"] = sum(1 for k in keys.values() if k["gaveUp"])
    n["replayed"] = len(replays)
    confirmed = sum(o["qty"] for o in orders if o["status"] == "CONFIRMED")
    n["confirmedUnits"] = confirmed
    n["failed"] = sum(1 for o in orders if o["status"] == "FAILED")
    n["oversold"] = max(0, confirmed - stock)
    lost = []
    for o, (name, s) in told.items():
        read = reads.get(o, {})
        row = pg.get(o)
        if read.get("http") != 200 or read.get("status") not in FINAL or row is None or row["status"] not in FINAL:
            lost.append(o)
        elif s == 201 and row["status"] != "CONFIRMED":
            lost.append(o)
    n["lost"] = len(lost)
    n["duplicated"] = len(dup_keys)
    # A REJECTED or FAILED row is no order the shopper has (they were refused, or told it failed).
    ghosts = [o["id"] for o in orders if o["id"] not in told and o["status"] not in ("REJECTED", "FAILED")]
    n["rejected"] = sum(1 for o in orders if o["status"] == "REJECTED")
    n["ghosts"] = len(ghosts)
    holding = ev.get("holding")
    view = ev.get("finalView") or {}
    n["stuck"] = len(holding) if holding is not None else 0
    n["heldUnits"] = view.get("queued", 0)
    n["closed"] = codes.get("409:SALE_NOT_ACTIVE", 0)
    # A replay of a key whose order is CONFIRMED must answer that order (issue 38 path 6), whatever Redis lost.
    replay_lost = sorted(name for name, r in replays.items()
                         for o in accepted_ids(keys[name]) if pg.get(o, {}).get("status") == "CONFIRMED"
                         and not (r.get("s") in (201, 202) and r.get("o") == o))
    n["replayLost"] = len(replay_lost)
    answers = [a for k in keys.values() for a in k["answers"] if a.get("t") is not None]
    fault_at, heal_at = ev.get("faultAt"), ev.get("healAt")
    if fault_at:
        # From the fault to the first purchase accepted again: the first 201/202 to a request sent after the
        # fault's first failure (no answer, 502/504, or a 503 that is not the line's); 0 when none failed. Not
        # simply the first 201/202 sent after the fault began: a purchase sent in the milliseconds before the
        # fault took hold (a toxic's API call) still goes through.
        sent = sorted(((a["t"] - (a.get("ms") or 0), a) for a in answers if a["t"] - (a.get("ms") or 0) >= fault_at),
                      key=lambda pair: pair[0])
        failed = next((start for start, a in sent if a.get("s") in (0, 502, 504)
                       or (a.get("s") == 503 and a.get("c") not in LINE_CODES)), None)
        after = [a["t"] for start, a in sent if failed is not None and start >= failed and a.get("s") in (201, 202)]
        n["recoveredInS"] = 0.0 if failed is None else round((min(after) - fault_at) / 1000, 1) if after else None
        during = [a for a in answers if fault_at <= a["t"] - (a.get("ms") or 0) <= (heal_at or a["t"])]
        n["slowestDuringMs"] = max((a.get("ms") or 0 for a in during), default=None)
        bound = ev.get("hangBound")
        n["hung"] = sum(1 for a in during if a.get("s") == 0 or (a.get("ms") or 0) > bound * 1000) if bound else 0
    watch = ev.get("watch") or {}
    breaches = []
    for name in ("oversold", "lost", "duplicated", "ghosts", "closed"):
        if n[name]:
            breaches.append(name)
    if n.get("hung"):
        breaches.append("hung")
    if replay_lost:
        breaches.append("replay-lost")
    if holding is None:
        breaches.append("stuck(redis unreadable)")
    elif n["stuck"] or n["heldUnits"]:
        breaches.append("stuck")
    if not view.get("balanced") or view.get("queued", 0) != 0:
        breaches.append("unbalanced-at-end")
    if "balancedAfterS" in watch and watch.get("balancedAfterS") is None:
        breaches.append("unbalanced-after-heal")
    if "sellingAfterS" in watch and watch.get("sellingAfterS") is None:
        breaches.append("not-selling")
    n["examples"] = {"lost": lost[:5], "ghosts": ghosts[:5], "duplicated": sorted(dup_keys)[:5], "replayLost": replay_lost[:5],
                     "stuck": (holding or [])[:5]}
    return n, breaches


# ---- watch: from the heal, how long until the books balance and a fresh purchase is accepted again.
def watch(args):
    api = Api(args.base_url)
    heal = args.heal_at / 1000
    result = {"healAt": args.heal_at, "balancedAfterS": None, "sellingAfterS": None, "probes": []}
    n = 0
    with open(args.probe_ledger, "a") as ledger:
        while time.time() - heal < args.bound:
            if result["balancedAfterS"] is None:
                views = [api.stock(sale) for sale in args.sale]
                if all(view and view.get("balanced") for view in views):
                    result["balancedAfterS"] = round(time.time() - heal, 1)
            if result["sellingAfterS"] is None:
                n += 1
                user, key = f"probe-{args.tag}-{n}", f"probe-{args.tag}-{n}-{uuid.uuid4().hex[:8]}"
                ledger.write(json.dumps({"ev": "key", "k": key, "u": user, "q": 1, "sale": args.probe_sale, "t": now_ms()}) + "\n")
                status, body, _ = api.purchase(args.probe_sale, user, key, 1)
                ledger.write(json.dumps({"ev": "answer", "k": key, "a": 1, "s": status, "c": body.get("code"),
                                         "o": body.get("orderId"), "t": now_ms()}) + "\n")
                ledger.flush()
                result["probes"].append([round(time.time() - heal, 1), status, body.get("code")])
                if status in (201, 202):
                    result["sellingAfterS"] = round(time.time() - heal, 1)
            if result["balancedAfterS"] is not None and result["sellingAfterS"] is not None:
                break
            time.sleep(1)
    result["probes"] = result["probes"][-20:]
    parts = [v for v in (result["balancedAfterS"], result["sellingAfterS"]) if v is not None]
    result["wholeAfterS"] = max(parts) if len(parts) == 2 else None
    json.dump(result, open(args.out, "w"), indent=1)
    return 0


# ---- verdict
def collect(api, sale, stock, ledger_path, watch_result, deadline, replay_accepted=False):
    """Waits (until the deadline) for the sale to hold nothing, then gathers the evidence."""
    drained = None
    started = time.time()
    holding = holding_records(sale)
    view = api.stock(sale)
    while time.time() < deadline:
        if holding is not None and not holding and view and view.get("queued") == 0:
            drained = round(time.time() - started, 1)
            break
        time.sleep(2)
        holding = holding_records(sale)
        view = api.stock(sale)
    ledger = read_ledger(ledger_path, sale)
    keys = keys_of(ledger)
    orders = pg_orders(sale)
    replays = replay(api, sale, keys, to_replay(keys, orders, replay_accepted))
    owners = {}
    for name, k in keys.items():
        for o in accepted_ids(k):
            owners[o] = k["user"]
        r = replays.get(name)
        if r and r.get("s") in (201, 202) and r.get("o"):
            owners[r["o"]] = k["user"]
    reads = read_orders(api, owners)
    # Postgres is read again after the owners' reads, which wait for each order to be final: a replay may
    # have found (and so finished) an order, or placed a new ASYNC one that the worker writes only now.
    orders = pg_orders(sale)
    ev = {"sale": sale, "stock": stock, "ledger": ledger, "orders": orders, "replays": replays, "watch": watch_result,
          "reads": reads}
    ev["holding"] = holding_records(sale)
    ev["finalView"] = api.stock(sale)
    ev["drainedAfterS"] = drained
    return ev


def verdict(args):
    if args.fixture:
        evidence = json.load(open(args.fixture))
    else:
        if len(args.sale) != len(args.stock):
            raise SystemExit("verdict: give --stock once for each --sale")
        api = Api(args.base_url)
        watch_result = json.load(open(args.watch)) if args.watch and os.path.exists(args.watch) else {}
        deadline = max(args.heal_at, args.crowd_end) / 1000 + args.slo
        sales = {}
        for i, (sale, stock) in enumerate(zip(args.sale, args.stock)):
            # The SLO runs for all the crowd's sales at once: the first waits, the others are due by then.
            sales[crowd_name(i)] = collect(api, sale, stock, args.ledger, watch_result, deadline, args.replay_accepted)
            sales[crowd_name(i)].update(faultAt=args.fault_at, healAt=args.heal_at, hangBound=args.hang_bound)
        sales["probe"] = collect(api, args.probe_sale, args.probe_stock, args.probe_ledger, {}, time.time() + 30)
        evidence = {"sales": sales, "uncheckedSales": sorted(ledger_sales(args.ledger) - set(args.sale), key=str)}
        with open(os.path.join(args.out_dir, "evidence.json"), "w") as f:
            json.dump(evidence, f)
    sales = evidence["sales"]
    numbers, breaches = {}, []
    for name, ev in sales.items():
        n, b = judge(ev)
        numbers[name] = n
        breaches += [breach if name == "crowd" else f"{name}:{breach}" for breach in b]
    if evidence.get("uncheckedSales"):
        breaches.append("unchecked-sales(" + ",".join(map(str, evidence["uncheckedSales"])) + ")")
    crowds = [name for name in sales if name != "probe"]
    crowd, w = total([numbers[name] for name in crowds]), sales.get("crowd", {}).get("watch") or {}
    first = numbers[crowds[0]] if crowds else {}  # the timings: the first crowd sale's (two-sales buys both in turn)
    drained = [sales[name].get("drainedAfterS") for name in crowds]
    per_sale = "".join(f" | sale {sales[name].get('sale', name)}: confirmed={numbers[name]['confirmedUnits']}/{sales[name]['stock']} "
                       f"oversold={numbers[name]['oversold']} lost={numbers[name]['lost']} accepted={numbers[name]['accepted']}"
                       for name in crowds) if len(crowds) > 1 else ""
    line = (f"{args.fault:<14} {args.mode:<5} {'PASS' if not breaches else 'FAIL'}  "
            f"accepted={crowd.get('accepted')}({crowd.get('acceptedOnReplay')} on replay) confirmed={crowd.get('confirmedUnits')} "
            f"oversold={crowd.get('oversold')} lost={crowd.get('lost')} dup={crowd.get('duplicated')} "
            f"stuck={crowd.get('stuck')}/{crowd.get('heldUnits')}u ghosts={crowd.get('ghosts')} "
            f"closed={crowd.get('closed')} rejected={crowd.get('rejected')} failed={crowd.get('failed')} gave-up={crowd.get('gaveUp')} "
            f"replayed={crowd.get('replayed')} balanced-in={fmt(w.get('balancedAfterS'))} "
            f"selling-in={fmt(w.get('sellingAfterS'))} whole-in={fmt(w.get('wholeAfterS'))} "
            f"final-in={fmt(None if None in drained else max(drained, default=None))}"
            + (f" recovered-in={fmt(first.get('recoveredInS'))} slowest-during={first.get('slowestDuringMs')}ms"
               f" hung={first.get('hung')}" if args.fault_at else "")
            + (f" replay-lost={crowd.get('replayLost')}" if args.replay_accepted else "") + per_sale
            + (f"  BREACH: {','.join(breaches)}" if breaches else ""))
    print(line)
    if args.out_dir:
        with open(os.path.join(args.out_dir, "check.json"), "w") as f:
            json.dump({"fault": args.fault, "mode": args.mode, "pass": not breaches, "breaches": breaches,
                       "numbers": numbers, "watch": w, "line": line}, f, indent=1)
    return 0 if not breaches else 1


def fmt(v):
    return "-" if v is None else f"{v}s"


def crowd_name(i):
    return "crowd" if i == 0 else f"crowd-{i + 1}"


def total(numbers):
    """The crowd's numbers over all its sales (counts add up)."""
    if len(numbers) == 1:
        return numbers[0]
    return {name: sum(n.get(name) or 0 for n in numbers)
            for name in ("accepted", "acceptedOnReplay", "confirmedUnits", "oversold", "lost", "duplicated", "stuck",
                         "heldUnits", "ghosts", "closed", "rejected", "failed", "gaveUp", "replayed", "replayLost")}


# ---- selftest: the judgement catches each breach on fabricated evidence.
def fake_sale():
    ledger, orders, reads = [], [], {}
    for i in range(5):
        key, user, oid = f"k{i}", f"u{i}", f"o{i}"
        ledger.append({"ev": "key", "k": key, "u": user, "q": 1})
        ledger.append({"ev": "answer", "k": key, "a": 1, "s": 503, "c": "UNAVAILABLE"})
        ledger.append({"ev": "answer", "k": key, "a": 2, "s": 202, "o": oid})
        orders.append({"id": oid, "user": user, "key": key, "qty": 1, "status": "CONFIRMED"})
        reads[oid] = {"http": 200, "status": "CONFIRMED"}
    ledger.append({"ev": "key", "k": "k9", "u": "u9", "q": 1})
    ledger.append({"ev": "answer", "k": "k9", "a": 1, "s": 409, "c": "SOLD_OUT"})
    return {"stock": 5, "ledger": ledger, "orders": orders, "reads": reads, "replays": {}, "holding": [],
            "finalView": {"balanced": True, "queued": 0},
            "watch": {"balancedAfterS": 1.0, "sellingAfterS": 1.0, "wholeAfterS": 1.0}}


def selftest(_args):
    cases = {"clean": (lambda s: s, None)}
    cases["rejected-row"] = (lambda s: rejected_row(s), None)

    def oversell(s):  # one more confirmed order than stock, answered 201 to its shopper
        s["ledger"] += [{"ev": "key", "k": "kx", "u": "ux", "q": 1}, {"ev": "answer", "k": "kx", "a": 1, "s": 201, "o": "ox"}]
        s["orders"].append({"id": "ox", "user": "ux", "key": "kx", "qty": 1, "status": "CONFIRMED"})
        s["reads"]["ox"] = {"http": 200, "status": "CONFIRMED"}
        return s

    def ghost(s):  # the sold-out shopper has an order after all, and a replay of its key refuses it
        s["orders"].append({"id": "og", "user": "u9", "key": "k9", "qty": 1, "status": "CONFIRMED"})
        s["replays"]["k9"] = {"s": 409, "c": "SOLD_OUT"}
        s["stock"] = 6
        return s

    def rejected_row(s):  # the sold-out shopper's order is in Postgres as REJECTED: refused, no ghost
        s["orders"].append({"id": "or", "user": "u9", "key": "k9", "qty": 1, "status": "REJECTED"})
        return s

    def lost(s):  # an accepted order its owner cannot find
        s["reads"]["o2"] = {"http": 404, "code": "ORDER_NOT_FOUND"}
        s["orders"] = [o for o in s["orders"] if o["id"] != "o2"]
        return s

    def duplicate(s):  # a replay of an accepted key answered with another order
        s["replays"]["k1"] = {"s": 202, "o": "o1-bis"}
        s["reads"]["o1-bis"] = {"http": 200, "status": "CONFIRMED"}
        return s

    def stuck(s):
        s["holding"] = [{"order": "o3", "state": "CLAIMED", "created": 1}]
        s["finalView"] = {"balanced": True, "queued": 1}
        return s

    def closed(s):
        s["ledger"] += [{"ev": "key", "k": "kc", "u": "uc", "q": 1}, {"ev": "answer", "k": "kc", "a": 1, "s": 409, "c": "SALE_NOT_ACTIVE"}]
        return s

    def unbalanced(s):
        s["watch"]["balancedAfterS"] = None
        s["finalView"] = {"balanced": False, "queued": 0}
        return s

    def not_selling(s):
        s["watch"]["sellingAfterS"] = None
        return s

    def hung(s):  # a request sent during the fault answered after 12 s, past a 10 s bound
        s["faultAt"], s["healAt"], s["hangBound"] = 1000, 20000, 10
        s["ledger"] += [{"ev": "key", "k": "kh", "u": "uh", "q": 1},
                        {"ev": "answer", "k": "kh", "a": 1, "s": 503, "c": "UNAVAILABLE", "t": 14000, "ms": 12000}]
        return s

    def replay_lost(s):  # a replay of a confirmed order's key refused after its binding was lost
        s["replays"]["k1"] = {"s": 409, "c": "PURCHASE_LIMIT_REACHED"}
        return s

    # A crowd of two sales: each is judged on its own, and none may go unjudged.
    def two_sales(s):
        return {"sales": {"crowd": s, "crowd-2": fake_sale()}}

    def second_oversold(s):
        return {"sales": {"crowd": s, "crowd-2": oversell(fake_sale())}}

    def second_unchecked(s):
        return {"sales": {"crowd": s}, "uncheckedSales": [2]}

    for name, f, want in (("oversold", oversell, "oversold"), ("ghost", ghost, "ghosts"), ("lost", lost, "lost"),
                          ("duplicate", duplicate, "duplicated"), ("stuck", stuck, "stuck"), ("closed", closed, "closed"),
                          ("unbalanced", unbalanced, "unbalanced-at-end"), ("not-selling", not_selling, "not-selling"),
                          ("hung", hung, "hung"), ("replay-lost", replay_lost, "replay-lost"),
                          ("two-sales", two_sales, None), ("second-sale-oversold", second_oversold, "crowd-2:oversold"),
                          ("second-sale-unchecked", second_unchecked, "unchecked-sales(2)")):
        cases[name] = (f, want)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (mutate, want) in cases.items():
            path = os.path.join(tmp, f"{name}.json")
            evidence = mutate(fake_sale())
            json.dump(evidence if "sales" in evidence else {"sales": {"crowd": evidence}}, open(path, "w"))
            out = subprocess.run([sys.executable, __file__, "verdict", "--fixture", path, "--fault", f"selftest-{name}",
                                  "--mode", "-", "--out-dir", tmp], capture_output=True, text=True)
            got = json.load(open(os.path.join(tmp, "check.json")))["breaches"]
            ok = (out.returncode == 0 and not got) if want is None else (out.returncode == 1 and want in got)
            print(f"[check selftest] {'ok  ' if ok else 'FAIL'} {name}: exit {out.returncode}, breaches {got}"
                  + ("" if want is None else f" (must include {want})"))
            failures += 0 if ok else 1
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("watch")
    w.add_argument("--base-url", required=True)
    w.add_argument("--sale", type=int, action="append", required=True, help="a crowd sale (repeat for each)")
    w.add_argument("--probe-sale", type=int, required=True)
    w.add_argument("--probe-ledger", required=True)
    w.add_argument("--heal-at", type=int, required=True, help="epoch ms")
    w.add_argument("--bound", type=float, default=60)
    w.add_argument("--tag", default="x")
    w.add_argument("--out", required=True)
    v = sub.add_parser("verdict")
    v.add_argument("--fixture")
    v.add_argument("--base-url")
    v.add_argument("--sale", type=int, action="append", default=[], help="a crowd sale (repeat for each)")
    v.add_argument("--stock", type=int, action="append", default=[], help="its stock (once for each --sale)")
    v.add_argument("--probe-sale", type=int)
    v.add_argument("--probe-stock", type=int)
    v.add_argument("--ledger")
    v.add_argument("--probe-ledger")
    v.add_argument("--watch")
    v.add_argument("--heal-at", type=int, default=0)
    v.add_argument("--crowd-end", type=int, default=0)
    v.add_argument("--slo", type=float, default=120)
    v.add_argument("--fault", default="?")
    v.add_argument("--mode", default="?")
    v.add_argument("--out-dir")
    v.add_argument("--fault-at", type=int, default=0, help="epoch ms: recovered-in and the slowest answer are measured from it")
    v.add_argument("--hang-bound", type=float, default=0, help="seconds; a request sent during the fault may wait no longer")
    v.add_argument("--replay-accepted", action="store_true", help="replay every accepted key too (lost-binding)")
    sub.add_parser("selftest")
    args = p.parse_args()
    return {"watch": watch, "verdict": verdict, "selftest": selftest}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
