#!/bin/bash
# Issue 37: the kill runs of ../kill-repeats-20261207/kill.sh (two APIs behind HAProxy, the second SIGKILLed
# 1 s after the crowd's first place, each run on a fresh stack) with the reconciler publishing the ASYNC
# orders the dead instance left RESERVED (decision 0028); each run's losers among the first arrivals at the
# balancer are read from its request log.
#   kill.sh AUTO-1 ASYNC-1 ...   (MODE-label; the outputs are MODE-label.md and .losers beside this)
here=$(dirname "$(readlink -f "$0")")
KILL_RESULTS=$here exec "$here/../kill-repeats-20261207/kill.sh" "$@"
