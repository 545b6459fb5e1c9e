#!/usr/bin/env python3
"""A purchase's CPU per request, from async-profiler's collapsed stacks of the API, each file taken over the
same number of requests: by layer (breakdown.py's, exclusive), then by phase (inclusive: a sample counts
for every phase on its stack, so phases overlap).

    scripts/profile/phases.py REQUESTS A.collapsed[.gz] [B.collapsed ...]    e.g. 10000 for 20 s at 500/s
"""
import collections
import os
import re
import sys

from breakdown import layer, stacks

PHASES = [
    ("request body read+validate", r"readWithMessageConverters|SpringValidatorAdapter\.validate|validateIfApplicable"),
    ("response write (json+socket)", r"writeWithMessageConverters"),
    ("throttle / key bind", r"PurchaseThrottle|IdempotencyKeys\.bind"),
    ("reserve script", r"StockLedger\.reserve"),
    ("advance scripts (writing, confirmed, published)", r"StockLedger\.advanceAll"),
    ("sync group commit: JDBC tx", r"SyncCommits\.commit"),
    ("async group commit: publish+confirm", r"OrderPublisher|AsyncPurchase\.handOff"),
    ("group commit, the batch's write included", r"GroupCommit"),
    ("everything inside the door filter (the purchase)", r"DoorFilter"),
    ("JWT decode/verify", r"nimbusds|JwtDecoder|JwtAuthenticationProvider"),
    ("micrometer", r"io/micrometer"),
    ("prometheus scrape (the bench's sampler)", r"PrometheusScrapeEndpoint"),
    ("lettuce netty event loop", r"io/netty/channel/nio|io/netty/channel/epoll|NioEventLoop|EpollEventLoop"),
    ("AMQP client threads", r"com/rabbitmq/client/impl"),
    ("Tomcat poller/acceptor", r"NioEndpoint\$Poller|Acceptor"),
    ("all work on virtual threads' carriers", r"ForkJoinPool|VirtualThread\.unpark|VirtualThread\.park"),
    ("GC threads", r"GCTaskThread|G1|ConcurrentGCThread"),
    ("JIT", r"CompileBroker|C2Compiler|C1"),
    ("scheduled tasks (AUTO, rebuild watch, ...)", r"ScheduledMethodRunnable"),
]


def main(requests, paths):
    per_file = [list(stacks(p)) for p in paths]
    names = [os.path.basename(p).split(".collapsed")[0] for p in paths]
    width = max(14, *(len(n) + 2 for n in names))

    def row(label, values):
        print(f"{label:<50}" + "".join(f"{v / requests:>{width}.3f}" for v in values))

    print(f"{'layer (ms per request)':<50}" + "".join(f"{n:>{width}}" for n in names))
    layers = [collections.Counter() for _ in per_file]
    for counts, data in zip(layers, per_file):
        for frames, n in data:
            counts[layer(frames)] += n
    for name in sorted(set().union(*layers), key=lambda k: -layers[-1][k]):
        row(name, [c[name] for c in layers])
    print()
    print(f"{'phase (ms per request, inclusive)':<50}" + "".join(f"{n:>{width}}" for n in names))
    for label, pattern in PHASES:
        found = re.compile(pattern)
        row(label, [sum(n for frames, n in data if found.search(";".join(frames))) for data in per_file])
    row("total", [sum(n for _, n in data) for data in per_file])


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(float(sys.argv[1]), sys.argv[2:])
