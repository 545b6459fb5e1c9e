#!/usr/bin/env python3
"""CPU per request by phase of a purchase (inclusive: a sample counts for every phase on its stack), from
async-profiler's collapsed stacks of the API taken over the same number of requests.

    scripts/profile/phases.py REQUESTS A.collapsed [B.collapsed ...]     e.g. 10000 for 20 s at 500/s
"""
import sys
reqs=float(sys.argv[1]); files=sys.argv[2:]
pats=[("request body read+validate","readWithMessageConverters|SpringValidatorAdapter.validate|validateIfApplicable"),
("response write (json+socket)","writeWithMessageConverters"),
("throttle / key bind","PurchaseThrottle|IdempotencyKeys.bind"),
("reserve script","StockLedger.reserve"),
("advance scripts (writing, confirmed, published)","StockLedger.advanceAll"),
("sync group commit: JDBC tx","SyncCommits.commit"),
("async group commit: publish+confirm","OrderPublisher|AsyncPurchase.handOff"),
("group commit, the batch's write included","GroupCommit"),
("everything inside the door filter (the purchase)","PurchaseAdmission"),
("JWT decode/verify","nimbusds|JwtDecoder|JwtAuthenticationProvider"),
("micrometer","io/micrometer"),
("prometheus scrape (the bench's sampler)","PrometheusScrapeEndpoint"),
("lettuce netty event loop","io/netty/channel/nio|io/netty/channel/epoll|NioEventLoop|EpollEventLoop"),
("AMQP client threads","com/rabbitmq/client/impl"),
("Tomcat poller/acceptor","NioEndpoint\\$Poller|Acceptor"),
("all work on virtual threads' carriers","ForkJoinPool|VirtualThread.unpark|VirtualThread.park"),
("GC threads","GCTaskThread|G1|ConcurrentGCThread"),
("JIT","CompileBroker|C2Compiler|C1"),
("scheduled tasks (AUTO, rebuild watch, ...)","ScheduledMethodRunnable"),
]
import re
print("%-50s"%"ms per request (inclusive)"+"".join("%12s"%f.split('/')[-1][4:14] for f in files))
data=[[ (l.rstrip().rpartition(' ')[0], int(l.rstrip().rpartition(' ')[2])) for l in open(f)] for f in files]
for name,p in pats:
    r=re.compile(p)
    print("%-50s"%name+"".join("%12.3f"%(sum(n for s,n in d if r.search(s))/reqs) for d in data))
print("%-50s"%"total"+"".join("%12.3f"%(sum(n for s,n in d)/reqs) for d in data))
