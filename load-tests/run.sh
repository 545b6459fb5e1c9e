#!/usr/bin/env bash
# Runs one k6 flash-sale drill against the order API and writes its results to
# load-tests/results/<drill>-<timestamp>/ (summary.txt, summary.json, table.json, report.html, k6.log).
#
#   load-tests/run.sh smoke|spike|ramp|compare|soak [options]
#   load-tests/run.sh flash-sale [options] the headline drill: 1,000 units, 50,000 shoppers, SYNC/ASYNC/AUTO
#                                          (load-tests/bench/flash_sale.py --help; --quick is CI's version)
#   load-tests/run.sh many-sales [options] issue 41: 100 sales at once, one crowd spread over them, on a Redis
#                                          Cluster (load-tests/bench/many_sales.py --help): load per master,
#                                          0 oversold, every sale balanced
#   load-tests/run.sh bench [options]      the issue-11 benchmark (load-tests/bench/bench.py --help, load-tests/README.md#bench-the-issue-11-benchmark)
#   load-tests/run.sh seeds [options]      the issue-15 drill: does async beat sync? (load-tests/bench/seeds.py
#                                          --help, load-tests/README.md#seeds-does-async-beat-sync-issue-15): its own
#                                          toxiproxy and apps
#   load-tests/run.sh faults [options]     the issue-12 fault drill on a private stack (load-tests/faults/drill.sh)
#
# Starts the stack when the API does not answer (scripts/up.sh --skip-build) and stops it again at the
# end, unless --no-stack (use a running one) or --keep-stack. Creates one fresh sale per mode through the
# admin API, mints shopper tokens, switches the mode through the admin API before each phase, and puts
# the mode back as it found it. Exits with k6's status: 0 passed, 99 thresholds failed.
#
# Options (defaults depend on the drill; see load-tests/README.md):
#   --base-url URL        API to drill (default $FLASHSALE_BASE_URL or http://127.0.0.1:8080)
#   --no-stack            never start the stack; fail when the API does not answer
#   --keep-stack          leave a stack this script started running
#   --modes LIST          comma-separated phases, from SYNC,ASYNC,AUTO (run in that order)
#   --shape steady|spike|ramp
#   --rate N --seconds N  steady shape
#   --peak N --hold N     spike shape (0 -> peak in 1 s, held N s)
#   --from N --to N --steps N --step-seconds N   ramp shape
#   --stock N --limit N --users N                stock per mode, per-user limit, distinct shoppers
#   --p99 MS              accept-latency p99 limit (a threshold, or the knee criterion for ramp/compare)
#   --unavailable error|refusal                  whether 503 UNAVAILABLE fails the drill
#   --poll-fraction F     share of 202s whose shopper polls the order to the end (time-to-confirm)
#   --max-vus N           VU ceiling per phase (k6 shares the box: more VUs cost the app CPU)
#   --no-baseline         skip the /api/v1/ping phase
#   --tamper-stock N      add N (negative: take) to the Redis stock of every sale before the drill (tests only)
#   --expect-stock-offset N   check conservation against stock+N (tests only)
#   --out DIR             results folder
#   --verbose             log every unexpected answer
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

die() { printf '[drill] ERROR: %s\n' "$*" >&2; exit 2; }
say() { printf '[drill] %s\n' "$*"; }

drill=${1:-}
[ -n "$drill" ] || die "usage: load-tests/run.sh smoke|spike|ramp|compare|soak|flash-sale|many-sales|bench|seeds|faults [options]"
shift
# The fault drill runs its own private stack and crowd (load-tests/faults/drill.sh, load-tests/README.md#faults-the-fault-drill-issue-12).
if [ "$drill" = faults ]; then exec "$here/faults/drill.sh" "$@"; fi

base_url=${FLASHSALE_BASE_URL:-http://127.0.0.1:8080}
start_stack=yes keep_stack=no baseline=true verbose=false
tamper=0 expect_offset=0 out=""
gap=3 final_bound=60 poll_bound=30 key_fraction=0.7 retry_fraction=0.1 multi_fraction=0.05
knee_error_rate=0.01 pre_vus=100 max_vus=1500 limit=2

# bench: load-tests/bench/bench.py runs the steps and parses its own options; run.sh only provides k6,
# the stack, the admin token and the mode restore, so it reads the stack options and hands on the rest.
bench_args=()
if [ "$drill" = bench ] || [ "$drill" = flash-sale ] || [ "$drill" = many-sales ]; then
  bench_args=("$@")
  set --
  for ((i = 0; i < ${#bench_args[@]}; i++)); do
    case "${bench_args[i]}" in
      --base-url) base_url=${bench_args[i + 1]:-} ;;
      --no-stack) start_stack=no ;;
      --keep-stack) keep_stack=yes ;;
      --out) out=${bench_args[i + 1]:-} ;;
    esac
  done
fi

# seeds: load-tests/bench/seeds.py starts its own toxiproxy and apps and parses all of its options.
seeds_args=()
if [ "$drill" = seeds ]; then
  seeds_args=("$@")
  set --
fi

# Drill profiles: the shape, the modes, and whether 503 and p99 fail the drill.
case "$drill" in
  bench | seeds | flash-sale | many-sales) # Options and steps: load-tests/bench/*.py (load-tests/README.md).
    shape=steady rate=1 seconds=1 modes=SYNC,ASYNC,AUTO stock=1 users=1 p99=50 p99_threshold=false
    unavailable=refusal poll_fraction=0 ;;
  smoke) # CI: ~30 s, low rate, every mode, everything counts.
    shape=steady rate=50 seconds=5 modes=SYNC,ASYNC,AUTO stock=500 users=120 p99=1000 p99_threshold=true
    unavailable=error poll_fraction=1 gap=2 final_bound=30 poll_bound=20 pre_vus=100 max_vus=400 ;;
  spike) # The doors open: idle to peak in a second; stock sells out.
    shape=spike peak=600 hold=8 modes=AUTO stock=1500 users=3000 p99=1000 p99_threshold=true
    unavailable=error poll_fraction=1 pre_vus=300 ;;
  ramp) # Step by step to find each mode's knee; 503 and p99 mark the knee instead of failing.
    shape=ramp from=100 to=1500 steps=8 step_seconds=5 modes=SYNC,ASYNC,AUTO stock=30000 users=20000
    p99=200 p99_threshold=false unavailable=refusal poll_fraction=0.25 ;;
  compare) # SYNC, then ASYNC, then AUTO, same offered load, one report (--shape spike for a sell-out).
    shape=ramp from=200 to=1500 steps=8 step_seconds=5 modes=SYNC,ASYNC,AUTO stock=20000 users=20000
    p99=200 p99_threshold=false unavailable=refusal poll_fraction=0.25 peak=1000 hold=10 ;;
  soak) # Steady moderate rate for a few minutes.
    shape=steady rate=150 seconds=180 modes=AUTO stock=40000 users=10000 p99=500 p99_threshold=true
    unavailable=error poll_fraction=1 final_bound=90 ;;
  *) die "unknown drill '$drill' (smoke, spike, ramp, compare, soak, flash-sale, many-sales, bench, seeds, faults)" ;;
esac
shape_set=no
while [ $# -gt 0 ]; do
  case "$1" in
    --base-url) base_url=$2; shift ;;
    --no-stack) start_stack=no ;;
    --keep-stack) keep_stack=yes ;;
    --modes) modes=$2; shift ;;
    --shape) shape=$2; shape_set=yes; shift ;;
    --rate) rate=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --peak) peak=$2; shift ;;
    --hold) hold=$2; shift ;;
    --from) from=$2; shift ;;
    --to) to=$2; shift ;;
    --steps) steps=$2; shift ;;
    --step-seconds) step_seconds=$2; shift ;;
    --stock) stock=$2; stock_set=yes; shift ;;
    --limit) limit=$2; shift ;;
    --users) users=$2; users_set=yes; shift ;;
    --p99) p99=$2; shift ;;
    --max-vus) max_vus=$2; shift ;;
    --unavailable) unavailable=$2; shift ;;
    --poll-fraction) poll_fraction=$2; shift ;;
    --no-baseline) baseline=false ;;
    --tamper-stock) tamper=$2; shift ;;
    --expect-stock-offset) expect_offset=$2; shift ;;
    --out) out=$2; shift ;;
    --verbose) verbose=true ;;
    *) die "unknown option $1" ;;
  esac
  shift
done
# compare --shape spike: a sell-out at a spike, unless stock and users are given.
if [ "$drill" = compare ] && [ "$shape" = spike ] && [ "$shape_set" = yes ]; then
  [ "${stock_set:-}" = yes ] || stock=3000
  [ "${users_set:-}" = yes ] || users=6000
  drill_name=compare-spike
else
  drill_name=$drill
fi
case "$shape" in
  steady) : "${rate:=50}" "${seconds:=20}" ;;
  spike) : "${peak:=600}" "${hold:=8}" ;;
  ramp) : "${from:=100}" "${to:=1500}" "${steps:=8}" "${step_seconds:=5}" ;;
  *) die "unknown shape $shape" ;;
esac
case "$unavailable" in error) unavailable_is_error=true ;; refusal) unavailable_is_error=false ;; *) die "--unavailable error|refusal" ;; esac

# k6 itself: built from source into the project's tool folder when missing (no downloaded binaries).
k6_version=v1.8.1
tools=${FLASHSALE_TOOLS:-$HOME/.cache/flashsale/bin}
k6=$tools/k6
if ! { [ -x "$k6" ] && "$k6" version 2>/dev/null | grep -q "k6 $k6_version"; }; then
  go=$(command -v go || echo /usr/local/go/bin/go)
  [ -x "$go" ] || die "k6 is missing and Go is not installed (needed to build k6 $k6_version)"
  say "building k6 $k6_version into $tools (a few minutes the first time)"
  mkdir -p "$tools"
  GOBIN=$tools "$go" install "go.k6.io/k6@$k6_version"
fi

if [ "$drill" = seeds ]; then
  # toxiproxy, built from source like k6, into its own versioned folder (its binary says only "version git").
  toxiproxy_version=v2.5.0
  toxiproxy=$tools/toxiproxy-$toxiproxy_version/server
  if [ ! -x "$toxiproxy" ]; then
    say "building toxiproxy $toxiproxy_version into $tools/toxiproxy-$toxiproxy_version"
    GOBIN=$tools/toxiproxy-$toxiproxy_version "${go:-$(command -v go || echo /usr/local/go/bin/go)}" install \
      "github.com/Shopify/toxiproxy/v2/cmd/server@$toxiproxy_version"
  fi
  "$root/scripts/services.sh" up >/dev/null
  source "$root/scripts/java-env.sh" # the apps run on JDK 25, as scripts/up.sh starts them
  if [ ! -f "$root/order-api/target/order-api.jar" ] || [ ! -f "$root/order-worker/target/order-worker.jar" ]; then
    say "building the jars (mvn package, tests skipped)"
    (cd "$root" && scripts/mvn -B -q -DskipTests package)
  fi
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  for ((i = 0; i < ${#seeds_args[@]}; i++)); do
    [ "${seeds_args[i]}" = --out ] && out=${seeds_args[i + 1]:-}
  done
  out=${out:-$here/results/seeds-$stamp}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  set +e
  ADMIN_TOKEN=$(python3 "$root/scripts/token.py" --admin) SEEDS_COMMAND="load-tests/run.sh seeds ${seeds_args[*]}" \
    python3 "$here/bench/seeds.py" "${seeds_args[@]}" --k6 "$k6" --toxiproxy "$toxiproxy" --out "$out" 2>&1 | tee "$out/seeds.log"
  status=${PIPESTATUS[0]}
  "$here/bench/charts.sh" "$out/seeds.json" --out "$out" | tee "$out/check.log"
  charts=${PIPESTATUS[0]}
  set -e
  [ "$status" = 0 ] && status=$charts
  say "seeds exited $status; results: $out (summary.md)"
  exit "$status"
fi

# The stack: reuse a running API, or start it (and stop it again at the end).
started=no
api_up() { curl -fsS -m 3 "$base_url/actuator/health/readiness" >/dev/null 2>&1; }
cleanup() {
  if [ -n "${original_mode:-}" ]; then
    curl -fsS -m 5 -X PUT "$base_url/api/v1/admin/mode" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
      -d "{\"mode\":\"$original_mode\",\"reason\":\"restored after k6 $drill_name drill\"}" >/dev/null 2>&1 ||
      say "could not restore the mode to $original_mode"
  fi
  if [ "$started" = yes ] && [ "$keep_stack" = no ]; then
    "$root/scripts/down.sh" || true
  fi
}
trap cleanup EXIT
if ! api_up; then
  [ "$start_stack" = yes ] || die "no API answers at $base_url (and --no-stack)"
  say "no API at $base_url: starting the stack (scripts/up.sh --skip-build)"
  started=yes
  "$root/scripts/up.sh" --skip-build >/dev/null || die "scripts/up.sh failed (logs in .run/)"
  api_up || die "the API still does not answer at $base_url"
fi

stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=${out:-$here/results/$drill_name-$stamp}
mkdir -p "$out"
out=$(cd "$out" && pwd)
admin=$(python3 "$root/scripts/token.py" --admin)
auth=(-H "Authorization: Bearer $admin" -H 'Content-Type: application/json')
original_mode=$(curl -fsS -m 5 "$base_url/api/v1/admin/mode" "${auth[@]}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["mode"])') ||
  die "cannot read the mode from $base_url/api/v1/admin/mode"

# flash-sale and bench: a Python tool runs the steps (its command line in $2 for its report), then exit.
python_drill() { # SCRIPT COMMAND_VARIABLE [NOTE]
  set +e
  env ADMIN_TOKEN="$admin" "$2=load-tests/run.sh $drill ${bench_args[*]}" \
    python3 "$here/bench/$1" "${bench_args[@]}" --k6 "$k6" --out "$out" --base-url "$base_url"
  status=$?
  set -e
  say "$drill exited $status; results: $out${3:-}"
  exit "$status"
}

if [ "$drill" = flash-sale ]; then python_drill flash_sale.py FLASH_COMMAND " (summary.md)"; fi

if [ "$drill" = many-sales ]; then python_drill many_sales.py MANY_COMMAND " (summary.md)"; fi

if [ "$drill" = bench ]; then
  # tcpdump times the server's answers on the loopback, apart from k6's own wait for a CPU (bench --wire).
  if ! command -v tcpdump >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing tcpdump (apt) for the bench's wire timings"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tcpdump; } >/dev/null ||
      say "tcpdump not installed: the bench reports k6's timings only"
  fi
  python_drill bench.py BENCH_COMMAND
fi

# One fresh sale per mode, open now, so every phase starts with full stock and fresh per-user limits.
starts=$(date -u -d '-1 minute' +%Y-%m-%dT%H:%M:%SZ)
ends=$(date -u -d '+6 hours' +%Y-%m-%dT%H:%M:%SZ)
sales="{}"
for mode in ${modes//,/ }; do
  case "$mode" in SYNC | ASYNC | AUTO) ;; *) die "unknown mode $mode" ;; esac
  body="{\"sku\":\"k6-$drill_name-$stamp-$mode\",\"name\":\"k6 $drill_name drill ($mode)\",\"priceCents\":999,\"stock\":$stock,\"perUserLimit\":$limit,\"startsAt\":\"$starts\",\"endsAt\":\"$ends\"}"
  id=$(curl -fsS -m 10 -X POST "$base_url/api/v1/sales" "${auth[@]}" -d "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') ||
    die "could not create the $mode sale"
  if [ "$tamper" != 0 ]; then
    say "tampering: HINCRBY {sale:$id} remaining $tamper (this drill must fail)"
    redis-cli -h "${REDIS_HOST:-127.0.0.1}" -p "${REDIS_PORT:-6379}" HINCRBY "{sale:$id}" remaining "$tamper" >/dev/null
  fi
  sales=$(python3 -c 'import json,sys; s=json.loads(sys.argv[1]); s[sys.argv[2]]={"id":int(sys.argv[3]),"stock":int(sys.argv[4])}; print(json.dumps(s))' "$sales" "$mode" "$id" "$stock")
done
python3 "$root/scripts/token.py" --users "$users" --prefix "k6-$stamp-" >"$out/tokens.json"

python3 - "$out/plan.json" <<EOF
import json, sys
shape = {"kind": "$shape"}
if "$shape" == "steady": shape.update(rate=int("${rate:-0}"), seconds=int("${seconds:-0}"))
if "$shape" == "spike": shape.update(peak=int("${peak:-0}"), holdSeconds=int("${hold:-0}"))
if "$shape" == "ramp": shape.update(**{"from": int("${from:-0}"), "to": int("${to:-0}"), "steps": int("${steps:-0}"), "stepSeconds": int("${step_seconds:-0}")})
plan = {
  "drill": "$drill_name", "runId": "k6-$stamp", "baseUrl": "$base_url",
  "tokensFile": "$out/tokens.json", "outDir": "$out", "shape": shape,
  "modes": [m for m in "$modes".split(",") if m], "baseline": $([ "$baseline" = true ] && echo True || echo False),
  "sales": json.loads('$sales'), "stock": int("$stock"), "perUserLimit": int("$limit"), "users": int("$users"),
  "p99Ms": int("$p99"), "p99Threshold": $([ "$p99_threshold" = true ] && echo True || echo False),
  "unavailableIsError": $([ "$unavailable_is_error" = true ] && echo True || echo False),
  "kneeErrorRate": float("$knee_error_rate"), "pollFraction": float("$poll_fraction"),
  "keyFraction": float("$key_fraction"), "retryFraction": float("$retry_fraction"), "multiUnitFraction": float("$multi_fraction"),
  "gapSeconds": int("$gap"), "pollBoundSeconds": int("$poll_bound"), "finalBoundSeconds": int("$final_bound"),
  "preAllocatedVUs": int("$pre_vus"), "maxVUs": int("$max_vus"),
  "expectStockOffset": int("$expect_offset"), "verbose": $([ "$verbose" = true ] && echo True || echo False),
}
json.dump(plan, open(sys.argv[1], "w"), indent=1)
EOF

say "$drill_name: modes $modes, sales $sales, results in $out"
set +e
(
  cd "$here"
  K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_PORT=-1 K6_WEB_DASHBOARD_PERIOD=3s K6_WEB_DASHBOARD_EXPORT="$out/report.html" \
    PLAN="$out/plan.json" ADMIN_TOKEN="$admin" "$k6" run --quiet --no-usage-report drills/drill.js
) 2>&1 | tee "$out/k6.log"
status=${PIPESTATUS[0]}
set -e
rm -f "$out/tokens.json" # bearer tokens do not belong in results
say "k6 exited $status ($([ "$status" = 0 ] && echo passed || echo FAILED)); results: $out"
exit "$status"
