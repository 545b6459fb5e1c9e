#!/bin/bash
# Issue 37: the kill runs of ../kill-repeats-20261207/kill.sh (two APIs behind HAProxy, the second SIGKILLed
# 1 s after the crowd's first place, each run on a fresh stack) with instance leases (decision 0029): the
# reservations the dead instance held are settled once the live one has beaten a lease (5 s) after it, not
# after the reconciler's 20 s grace. MODE-label.reconciler has the kill's time and the settlement's.
#   kill.sh AUTO-1 SYNC-1 ...   (MODE-label; the outputs are MODE-label.md, .log, .losers beside this)
here=$(dirname "$(readlink -f "$0")")
KILL_RESULTS=$here exec "$here/../kill-repeats-20261207/kill.sh" "$@"
