#!/usr/bin/env python3
"""Where a JVM's CPU went, from async-profiler's collapsed stacks: by layer (the deepest frame that
belongs to a known library decides; kernel frames count as the kernel), and by what entered the kernel.

    scripts/profile/breakdown.py OUT.collapsed [more.collapsed ...]
"""
import collections
import gzip
import sys

# (layer, frame prefix), most specific first: a sample belongs to the deepest frame matching any prefix.
LAYERS = [
    ("app: flashsale", "dev/flashsale"),
    ("redis client (lettuce, spring data redis)", "io/lettuce"),
    ("redis client (lettuce, spring data redis)", "org/springframework/data/redis"),
    ("netty", "io/netty"),
    ("amqp client", "com/rabbitmq"),
    ("amqp client", "org/springframework/amqp"),
    ("jdbc (pgjdbc, hikari)", "org/postgresql"),
    ("jdbc (pgjdbc, hikari)", "com/zaxxer"),
    ("jwt (nimbus)", "com/nimbusds"),
    ("spring security", "org/springframework/security"),
    ("spring web/mvc", "org/springframework/web"),
    ("spring other", "org/springframework"),
    ("tomcat", "org/apache"),
    ("metrics (micrometer)", "io/micrometer"),
    ("json (jackson)", "tools/jackson"),
    ("json (jackson)", "com/fasterxml"),
    ("resilience4j", "io/github/resilience4j"),
    ("logging", "ch/qos/logback"),
    ("logging", "org/slf4j"),
]


def layer(frames):
    if frames[-1].endswith("_[k]"):
        return "kernel"
    for frame in reversed(frames):
        for name, prefix in LAYERS:
            if frame.startswith(prefix):
                return name
    if any("CompileBroker" in f or "Compiler::" in f for f in frames):
        return "jvm: JIT compiler"
    if any(f.startswith(("G1", "GC", "WorkerThread")) or "G1" in f.split("::")[0] for f in frames):
        return "jvm: GC"
    return "jdk and jvm other"


def kernel_entry(frames):
    user = [f for f in frames if not f.endswith("_[k]")]
    leaf = user[-1] if user else "?"
    for name, calls in (("thread park/unpark (futex)", ("futex", "pthread_cond", "lll_lock")),
                        ("socket write", ("write", "send")), ("socket read", ("read", "recv")),
                        ("epoll", ("epoll",))):
        if any(c in leaf for c in calls):
            return name
    return "other (interrupts, scheduling)"


def stacks(path):
    """(frames, samples) of each line of a collapsed-stacks file, gzipped or not."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            stack, _, n = line.rstrip().rpartition(" ")
            if stack:
                yield stack.split(";"), int(n)


def main(paths):
    for path in paths:
        total = 0
        layers, kernel = collections.Counter(), collections.Counter()
        for frames, n in stacks(path):
            total += n
            name = layer(frames)
            layers[name] += n
            if name == "kernel":
                kernel[kernel_entry(frames)] += n
        print(f"{path}: {total} samples (1 ms of CPU each)")
        for name, n in layers.most_common():
            print(f"  {100 * n / total:5.1f} %  {name}")
            if name == "kernel":
                for entry, k in kernel.most_common():
                    print(f"  {'':7}   {100 * k / total:5.1f} %  {entry}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
