#!/usr/bin/env python3
"""Server-side latency of every HTTP exchange, read off the wire: how long the API took from the moment a
request's first segment reached the loopback until its answer's first segment left, as the kernel
timestamped them. A load generator that shares the cores also times its own wait for a CPU; this does not.

Capture during a drill (data segments only, 128 bytes of each; tcpdump decodes, this pairs):

    tcpdump -i lo -s 128 -B 65536 -w /tmp/wire.pcap 'tcp port 8080 and tcp[tcpflags] & tcp-push != 0' &
    ...the drill...
    kill %1; load-tests/bench/wire.py /tmp/wire.pcap

The bench (load-tests/run.sh bench) captures every measured step this way when tcpdump can, and reports
the step's server-side p99 beside k6's (step_summary).

Exchanges are grouped into bursts separated by more than --gap seconds without a request (each bench
step is its own k6 run), and per burst the answer time is given by request (POST, GET) and answer class
(2xx, 409, 429, 503, other). HTTP/1.1 without pipelining: on one connection, an answer belongs to the
oldest request not yet answered.
"""
import argparse
import collections
import re
import subprocess
import os
import sys

import procs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "pylib"))
from flashtools.percentiles import percentile  # noqa: E402

# SIZE bytes of the payload from OFFSET, in tcpdump's filter language
PAYLOAD = "tcp[((tcp[12]>>4)*4)+{}:{}]"
# "POST /api", "GET /api": the API's own requests, not the actuator's (a scrape must not bridge a gap);
# method -> (its first 4 bytes, where "/api" starts)
REQUESTS = {"POST": ("0x504f5354", 5), "GET": ("0x47455420", 4)}
API = "0x2f617069"
# answer class -> (bytes of the status line from offset 9, "HTTP/1.1 " being 9 long)
ANSWERS = {"2xx": "0x32", "409": "0x34303920", "429": "0x34323920", "503": "0x35303320"}
FILTER = "tcp port {} and tcp[tcpflags] & tcp-push != 0"
LINE = re.compile(r"^(\d+\.\d+) IP6? [\d.:a-f]+?\.(\d+) > [\d.:a-f]+?\.(\d+):")


class Capture:
    """tcpdump on the loopback into a file: the port's data segments, 128 bytes of each, until stop()."""

    def __init__(self, port, path):
        self.proc = subprocess.Popen(["tcpdump", "-i", "lo", "-s", "128", "-B", "131072", "-w", path, FILTER.format(port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        first = self.proc.stderr.readline()  # "listening on lo, ..." once it captures
        if "listening" not in first:
            self.proc.wait()
            raise OSError(f"tcpdump: {first.strip() or 'exited with ' + str(self.proc.returncode)}")

    def stop(self):
        """Ends the capture: (packets the kernel dropped, 0 when every segment was written; tcpdump's own
        CPU seconds, for it competes for the same cores)."""
        st = procs.stat(self.proc.pid)
        cpu = (st[1] + st[2]) / procs.CLK_TCK if st else None  # utime + stime
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=30)
        m = re.search(r"(\d+) packets? dropped by kernel", err)
        return (int(m.group(1)) if m else None), cpu


def events(capture, port, kind, expression):
    """(time, client port, kind) of every segment the filter picks."""
    out = subprocess.run(["tcpdump", "-r", capture, "-tt", "-nn", "-q", expression],
                         check=True, capture_output=True, text=True).stdout
    picked = []
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            src, dst = int(m.group(2)), int(m.group(3))
            picked.append((float(m.group(1)), dst if src == port else src, kind))
    return picked


def exchanges(capture, port):
    """(request time, method, answer class, seconds) of every answered request, in request order."""
    everything = []
    for method, (word, path_at) in REQUESTS.items():
        expression = f"dst port {port} and {PAYLOAD.format(0, 4)} = {word} and {PAYLOAD.format(path_at, 4)} = {API}"
        everything += events(capture, port, ("req", method), expression)
    http = f"src port {port} and {PAYLOAD.format(0, 4)} = 0x48545450"  # "HTTP"
    classed = []
    for name, word in ANSWERS.items():
        classed.append(f"{PAYLOAD.format(9, (len(word) - 2) // 2)} = {word}")
        everything += events(capture, port, ("ans", name), f"{http} and {classed[-1]}")
    everything += events(capture, port, ("ans", "other"), f"{http} and not ({' or '.join(classed)})")
    everything.sort()
    waiting = collections.defaultdict(collections.deque)
    done = []
    for t, client, (what, name) in everything:
        if what == "req":
            waiting[client].append((t, name))
        elif waiting[client]:
            t0, method = waiting[client].popleft()
            done.append((t0, method, name, t - t0))
    done.sort()
    return done


def step_summary(capture, port):
    """One bench step's purchases on the wire: count, p50 and p99 (ms) of the accepted (POST 2xx) and of
    the overload refusals (POST 503 and 429), and of GETs answered 2xx (pings; order polls); None where there were none."""
    groups = {"accepted": [], "refused": [], "get": []}
    for _, method, answer, seconds in exchanges(capture, port):
        if method == "POST" and answer == "2xx":
            groups["accepted"].append(seconds * 1000)
        elif method == "POST" and answer in ("503", "429"):
            groups["refused"].append(seconds * 1000)
        elif method == "GET" and answer == "2xx":
            groups["get"].append(seconds * 1000)
    out = {}
    for name, values in groups.items():
        values.sort()
        out[name] = {"count": len(values), "p50": percentile(values, 50), "p99": percentile(values, 99)} if values else None
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("capture")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--gap", type=float, default=1.0, help="seconds without a request that end a burst")
    p.add_argument("--min", type=int, default=1000, help="bursts with fewer exchanges are not shown")
    a = p.parse_args()
    done = exchanges(a.capture, a.port)
    if not done:
        sys.exit("no HTTP exchanges on port %d in %s" % (a.port, a.capture))
    bursts, current = [], [done[0]]
    for x in done[1:]:
        if x[0] - current[-1][0] > a.gap:
            bursts.append(current)
            current = []
        current.append(x)
    bursts.append(current)
    print("answer time on the wire, ms (request's first segment in -> answer's first segment out)")
    print(f"{'burst':>5} {'start':>8} {'s':>5} {'request':>7} {'answer':>6} {'count':>7} {'/s':>6} "
          f"{'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}")
    t_first = done[0][0]
    for n, burst in enumerate(bursts, 1):
        if len(burst) < a.min:
            continue
        span = max(burst[-1][0] - burst[0][0], 1e-9)
        groups = collections.defaultdict(list)
        for _, method, answer, seconds in burst:
            groups[(method, answer)].append(seconds * 1000)
        for (method, answer), ms in sorted(groups.items()):
            ms.sort()
            print(f"{n:>5} {burst[0][0] - t_first:>8.1f} {span:>5.1f} {method:>7} {answer:>6} {len(ms):>7} "
                  f"{len(ms) / span:>6.0f} {percentile(ms, 50):>7.1f} {percentile(ms, 90):>7.1f} "
                  f"{percentile(ms, 99):>7.1f} {ms[-1]:>7.1f}")


if __name__ == "__main__":
    main()
