# Sourced by this folder's scripts: the repository's root as working directory, where their outputs go, a
# fresh stack, and the flash-sale drill's line-cost shape (SYNC, a sale of 200 units, its line-cost steps).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
here=docs/results/bench/line-p99-20261207
mkdir -p /tmp/lp

# NAME [JAR]: the stack stopped, the API jar /tmp/jars/JAR.jar put in place if named, the stack started (its
# log /tmp/lp/up-NAME.log).
fresh_stack() {
  scripts/down.sh >/dev/null 2>&1
  if [ -n "${2:-}" ]; then cp "/tmp/jars/$2.jar" order-api/target/order-api.jar; fi
  scripts/up.sh --skip-build > "/tmp/lp/up-$1.log" 2>&1
}

# NAME: the line-cost shape against the running stack, its output in /tmp/lp/out-NAME, its log /tmp/lp/NAME.log.
line_cost() {
  load-tests/run.sh flash-sale --no-stack --warmup 90 --knee-rates "" --shapes step --modes SYNC --stock 200 \
    --per-unit 10 --cost-seconds 20 --line-cost --keyed 0.7 --out "/tmp/lp/out-$1" > "/tmp/lp/$1.log" 2>&1
}
