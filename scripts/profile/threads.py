#!/usr/bin/env python3
"""CPU of one process by thread group over a window, read from /proc (utime+stime of every thread;
digits in thread names folded, so the 40 Tomcat handlers or the carriers of virtual threads count as
one group). No agent, nothing attached: safe on a running drill.

    scripts/profile/threads.py PID SECONDS          e.g. scripts/profile/threads.py $(cat .run/order-api.pid) 20

Prints cores (CPU seconds per second) per group, busiest first. Divide by the drill's rate for CPU per
order per thread group.
"""
import collections
import os
import re
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def snapshot(pid):
    """{thread id: (name, utime+stime ticks)} of every live thread."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        threads[tid] = (name, int(fields[11]) + int(fields[12]))
    return threads


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    pid, seconds = sys.argv[1], float(sys.argv[2])
    before = snapshot(pid)
    time.sleep(seconds)
    after = snapshot(pid)
    groups = collections.Counter()
    for tid, (name, ticks) in after.items():
        groups[re.sub(r"\d+", "#", name)] += ticks - before.get(tid, (name, 0))[1]
    total = sum(groups.values())
    print(f"{total / TICKS / seconds:7.3f} cores  total of pid {pid} over {seconds:g} s")
    for group, ticks in groups.most_common():
        if ticks > 0:
            print(f"{ticks / TICKS / seconds:7.3f}        {group}")


if __name__ == "__main__":
    main()
