#!/bin/bash
# Issue 37: the kill runs of ../kill-repeats-20261207/kill.sh (two APIs behind HAProxy, the second SIGKILLed
# 1 s after the crowd's first place, each run on a fresh stack), with leases (decision 0029) and the balancer
# of scripts/up.sh that takes a killed instance out at its first refused connections and serves through
# unchecked backups when every checked instance is out: before, the one instance left missed its checks
# under the whole crowd and HAProxy answered up to 8,760 purchases 503 itself (../kill-lease-20261207).
#   kill.sh SYNC-1 AUTO-1 ...   (MODE-label; MODE-label.md, .log, .losers, .reconciler beside this; the
#                                balancer's own 503s are counted in MODE-label.nosrv)
here=$(dirname "$(readlink -f "$0")")
KILL_RESULTS=$here exec "$here/../kill-repeats-20261207/kill.sh" "$@"
