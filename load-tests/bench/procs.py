"""Finds the stack's processes and reads their CPU time and memory from /proc (Linux only).

A process is found by the TCP port it listens on (the socket's inode in /proc/net/tcp{,6}, then the
process holding that inode among its file descriptors), so that on a box running several stacks the
order-api and order-worker measured are the ones behind --base-url and --worker-url. The command line
is then checked (java ... order-api.jar, java ... order-worker.jar, beam.smp, redis-server, postgres:
argv[0]'s program name, and for the apps an argument ending with the jar's name). When nothing listens
on the port (or /proc/PID/fd is not readable), the first process whose command line matches is used
instead, and the bench says so. --pid ROLE=PID overrides both.

postgres is the postmaster plus all of its children (backends come and go), and the postmaster's
cutime/cstime deltas count children that exited during a step.
"""
import os
import re

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

# role -> (the program, argv[0]'s last path element; an argument that must end with this, or None)
SIGNATURES = {
    "api": ("java", "order-api.jar"),
    "worker": ("java", "order-worker.jar"),
    "rabbitmq": ("beam.smp", None),
    "redis": ("redis-server", None),
    "postgres": ("postgres", None),
}


def argv(pid):
    raw = _read(f"/proc/{pid}/cmdline")
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a] if raw else []


def matches(pid, role):
    program, arg = SIGNATURES[role]
    args = argv(pid)
    if not args or os.path.basename(args[0].split()[0]) != program:
        return False
    return arg is None or any(a.endswith(arg) for a in args[1:])


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def cmdline(pid):
    raw = _read(f"/proc/{pid}/cmdline")
    return raw.replace(b"\0", b" ").decode(errors="replace").strip() if raw else ""


def stat(pid):
    """(ppid, utime, stime, cutime, cstime) in clock ticks, or None when the process is gone."""
    raw = _read(f"/proc/{pid}/stat")
    if not raw:
        return None
    # The command name may contain spaces and parentheses: the fields start after the last ')'.
    fields = raw[raw.rindex(b")") + 2:].split()
    return int(fields[1]), int(fields[11]), int(fields[12]), int(fields[13]), int(fields[14])


def rss_bytes(pid):
    raw = _read(f"/proc/{pid}/status")
    if not raw:
        return 0
    m = re.search(rb"^VmRSS:\s+(\d+) kB", raw, re.M)
    return int(m.group(1)) * 1024 if m else 0


def _pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _listening_inodes(port):
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        raw = _read(table)
        if not raw:
            continue
        for line in raw.decode().splitlines()[1:]:
            parts = line.split()
            local, state, inode = parts[1], parts[3], parts[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(inode)
    return inodes


def pid_listening_on(port):
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    wanted = {f"socket:[{i}]" for i in inodes}
    for pid in _pids():
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                        return pid
                except OSError:
                    continue
        except OSError:
            continue
    return None


def _first_matching(role):
    for pid in sorted(_pids()):
        if matches(pid, role):
            return pid
    return None


def children(parent):
    kids = []
    for pid in _pids():
        s = stat(pid)
        if s and s[0] == parent:
            kids.append(pid)
    return kids


class Discovery:
    """The root PID of each role, found once at start; postgres' children are listed at each reading."""

    def __init__(self, ports, overrides):
        self.roots = {}
        self.notes = []
        for role, (program, arg) in SIGNATURES.items():
            desc = f"{program}{' ... ' + arg if arg else ''}"
            pid = overrides.get(role)
            how = "--pid"
            if pid is None and ports.get(role):
                pid = pid_listening_on(ports[role])
                how = f"listens on :{ports[role]}"
                if pid is not None and not matches(pid, role):
                    self.notes.append(f"{role}: pid {pid} listens on :{ports[role]} but is not {desc}: {cmdline(pid)[:80]}")
            if pid is None:
                pid = _first_matching(role)
                how = (f"nothing listens on :{ports.get(role)}; the first {desc} found, which on a box with several "
                       f"stacks may be another one's: pass --pid {role}=PID")
            if pid is None:
                self.notes.append(f"{role}: no {desc} found; its CPU and memory are not measured")
                continue
            self.roots[role] = pid
            self.notes.append(f"{role}: pid {pid} ({how}): {cmdline(pid)[:100]}")

    def pids(self, role):
        root = self.roots.get(role)
        if root is None:
            return []
        if role == "postgres":
            return [root] + children(root)
        return [root]

    def cpu(self):
        """{role: {pid: ticks}}: utime+stime per process; postgres' root also carries cutime+cstime."""
        reading = {}
        for role in self.roots:
            per_pid = {}
            for pid in self.pids(role):
                s = stat(pid)
                if s is None:
                    continue
                ticks = s[1] + s[2]
                if role == "postgres" and pid == self.roots[role]:
                    ticks += s[3] + s[4]
                per_pid[pid] = ticks
            reading[role] = per_pid
        return reading

    def rss(self):
        """{role: bytes}: VmRSS (postgres: the sum over its processes, shared buffers counted in each)."""
        return {role: sum(rss_bytes(pid) for pid in self.pids(role)) for role in self.roots}


def cpu_seconds(before, after):
    """{role: seconds} between two cpu() readings; a process born in between counts in full."""
    out = {}
    for role, per_pid in after.items():
        old = before.get(role, {})
        ticks = sum(max(0, t - old.get(pid, 0)) for pid, t in per_pid.items())
        out[role] = ticks / CLK_TCK
    return out


def box_ticks():
    """(all, steal) CPU ticks of the whole box since boot, from /proc/stat's first line."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    steal = fields[7] if len(fields) > 7 else 0
    return sum(fields[:8]), steal


def steal_percent(before, after):
    """Share of the box's CPU time the hypervisor gave to other guests between two box_ticks() readings."""
    total = after[0] - before[0]
    return 100.0 * (after[1] - before[1]) / total if total > 0 else None
