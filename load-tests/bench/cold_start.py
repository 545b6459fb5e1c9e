#!/usr/bin/env python3
"""Measures a cold API instance: time from `java` to ready, then the latency of its first purchases.

  load-tests/bench/cold_start.py --app-dir DIR [--aot-cache FILE] [--warmup] [--port 18480] [--purchases 200] [--rate 20]

DIR is the extracted application (java -Djarmode=tools -jar order-api.jar extract --destination DIR), as the
images run it. Starts it in the local profile against the local services, with a queue topology and mode
flag of its own (SYNC), waits for /actuator/health/readiness, creates a fresh sale through the admin API,
sends PURCHASES purchases of distinct shoppers at RATE per second (one at a time, paced), stops the
instance and prints one JSON line: ready_s, the warm-up's own log line, and the purchase latencies (ms).
Run it on a quiet box and more than once: it measures the JVM, so it measures its neighbours too.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "pylib"))
from flashtools import stack, tokens, web  # noqa: E402
from flashtools.percentiles import percentile  # noqa: E402


# The Kubernetes Deployment's JVM (k8s/base/order-api.yaml), so the numbers are the pod's.
JAVA_OPTIONS = ("-XX:+UseG1GC -Xms512m -Xmx512m -XX:+AlwaysPreTouch -XX:MaxMetaspaceSize=192m "
                "-XX:ReservedCodeCacheSize=128m -XX:MaxDirectMemorySize=64m -XX:+ExitOnOutOfMemoryError")


def call(method, url, token=None, body=None, timeout=10):
    try:
        status, raw, _ = web.exchange(method, url, body, token=token, timeout=timeout)
        return status, raw
    except (TimeoutError, urllib.error.URLError) as e:
        if method == "GET":
            raise
        return 0, str(e).encode()  # counted as status 0: the latency is the timeout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app-dir", required=True)
    parser.add_argument("--aot-cache")
    parser.add_argument("--warmup", action="store_true")
    parser.add_argument("--port", type=int, default=18480)
    parser.add_argument("--purchases", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20)
    parser.add_argument("--log", default="/tmp/cold-start.log")
    args = parser.parse_args()

    run = uuid.uuid4().hex[:8]
    prefix = f"flashsale.coldstart.{run}"
    env = dict(os.environ,
               SPRING_PROFILES_ACTIVE="local", SERVER_PORT=str(args.port), SPRING_FLYWAY_ENABLED="false",
               APP_MESSAGING_EXCHANGE=f"{prefix}.orders", APP_MESSAGING_QUEUE=f"{prefix}.requested",
               APP_MESSAGING_RETRY_EXCHANGE=f"{prefix}.retry", APP_MESSAGING_RETRY_QUEUE=f"{prefix}.retry",
               APP_MESSAGING_DEAD_LETTER_EXCHANGE=f"{prefix}.dlx", APP_MESSAGING_DEAD_LETTER_QUEUE=f"{prefix}.dead",
               APP_MODE_REDIS_KEY=f"flashsale:coldstart:{run}:mode", APP_MODE_DEFAULT="SYNC",
               APP_WARMUP_ENABLED="true" if args.warmup else "false",
               JAVA_TOOL_OPTIONS=JAVA_OPTIONS)
    command = ["java"] + ([f"-XX:AOTCache={args.aot_cache}"] if args.aot_cache else []) + ["-jar", "order-api.jar"]
    base = f"http://127.0.0.1:{args.port}"
    load = os.getloadavg()
    with open(args.log, "w") as log:
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=args.app_dir, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            try:
                stack.wait_ready(base, process, timeout=600, poll=0.05, what="the API")
            except RuntimeError as e:
                sys.exit(f"{e}; see {args.log}")
            ready = time.monotonic() - started
            admin = tokens.admin(3600)
            status, body = call("POST", f"{base}/api/v1/sales", admin, {
                "sku": f"coldstart-{run}", "name": "cold start", "priceCents": 100, "stock": args.purchases,
                "perUserLimit": 1, "startsAt": "2020-01-01T00:00:00Z", "endsAt": "2100-01-01T00:00:00Z"}, timeout=60)
            if status != 201:
                sys.exit(f"creating the sale answered {status}: {body[:300]!r}")
            sale = json.loads(body)["id"]
            shoppers = [tokens.shopper(f"coldstart-{run}-{i}", 3600) for i in range(args.purchases)]
            latencies, statuses = [], {}
            interval = 1 / args.rate
            next_at = time.monotonic()
            for token in shoppers:
                next_at += interval
                sent = time.monotonic()
                status, _ = call("POST", f"{base}/api/v1/sales/{sale}/orders", token, {"quantity": 1})
                latencies.append((time.monotonic() - sent) * 1000)
                statuses[status] = statuses.get(status, 0) + 1
                time.sleep(max(0.0, next_at - time.monotonic()))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    warmup = [line.strip() for line in Path(args.log).read_text().splitlines() if "warm-up done" in line]
    first20 = latencies[:20]
    print(json.dumps({
        "variant": ("aot+" if args.aot_cache else "") + ("warmup" if args.warmup else "plain"),
        "load_before": [round(x, 2) for x in load], "load_after": [round(x, 2) for x in os.getloadavg()],
        "ready_s": round(ready, 2),
        "warmup": re.sub(r"^.*warm-up done", "warm-up done", warmup[0]) if warmup else None,
        "statuses": statuses,
        "first_ms": round(latencies[0], 1),
        "first20_mean_ms": round(sum(first20) / len(first20), 1),
        "p50_ms": round(percentile(latencies, 50), 1), "p90_ms": round(percentile(latencies, 90), 1),
        "p99_ms": round(percentile(latencies, 99), 1), "max_ms": round(max(latencies), 1),
        "mean_ms": round(sum(latencies) / len(latencies), 1),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
