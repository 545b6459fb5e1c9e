#!/usr/bin/env bash
# A release's canary (k8s/README.md, "Deploy a release"): one API pod of the new release first, beside the old
# fleet and behind the same Service, and a purchase-success gate before the rest follows. Readiness says only
# that a pod runs; the gate says that it sells: its own purchase answers (the warm-up's rehearsal, and any
# shopper's) are not server errors, and its warm-up passed.
#
#   k8s/canary.sh start [ROOT]      apply Deployment order-api-canary: one pod of the rendered prod overlay's
#                                   order-api (the new image), labelled flashsale.dev/track=canary; wait for it
#   k8s/canary.sh gate [ROOT]       ask Prometheus the gate's query (the Deployment's annotation
#                                   flashsale.dev/canary-gate-query); exit 1 unless it answers at least
#                                   flashsale.dev/canary-gate-min
#   k8s/canary.sh rollback [ROOT]   delete the canary (the old fleet never changed)
#
# Environment: PROMETHEUS_URL (default: the Prometheus Operator's Service in namespace monitoring), and
# KUBECTL, KUSTOMIZE, CURL to replace the tools (the deploy-tests run the gate against a stand-in Prometheus).
set -euo pipefail
command=${1:?usage: k8s/canary.sh start|gate|rollback [ROOT]}
root=$(cd "${2:-$(dirname "$0")/..}" && pwd)
tools=${FLASHSALE_TOOLS:-$HOME/.cache/flashsale/bin}
kubectl=${KUBECTL:-kubectl}
kustomize=${KUSTOMIZE:-$(command -v kustomize || echo "$tools/kustomize")}
curl=${CURL:-curl}
prometheus=${PROMETHEUS_URL:-http://prometheus-operated.monitoring.svc.cluster.local:9090}
namespace=flashsale
say() { printf '[canary] %s\n' "$*" >&2; }
die() { printf '[canary] ERROR: %s\n' "$*" >&2; exit 1; }

rendered=$(mktemp)
trap 'rm -f "$rendered"' EXIT
"$kustomize" build "$root/k8s/overlays/prod" >"$rendered" || die "kustomize build k8s/overlays/prod failed"

# One field of the rendered order-api Deployment, or the canary made from it.
api() {
  python3 - "$rendered" "$1" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
api = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "order-api")
annotations = api["metadata"].get("annotations") or {}
if sys.argv[2] == "canary":
    api["metadata"] = {"name": "order-api-canary", "namespace": api["metadata"]["namespace"],
                       "labels": {**api["metadata"].get("labels", {}), "flashsale.dev/track": "canary"}}
    api["spec"]["replicas"] = 1
    api["spec"]["selector"]["matchLabels"]["flashsale.dev/track"] = "canary"
    api["spec"]["template"]["metadata"]["labels"]["flashsale.dev/track"] = "canary"
    print(yaml.safe_dump(api))
else:
    print(annotations.get(sys.argv[2], ""))
PY
}

case $command in
  start)
    api canary | "$kubectl" apply -f - >&2
    "$kubectl" -n "$namespace" rollout status deploy/order-api-canary --timeout=10m >&2 ||
      die "the canary did not become ready: k8s/canary.sh rollback"
    say "order-api-canary is ready; give it the gate's window, then: k8s/canary.sh gate"
    ;;
  gate)
    query=$(api flashsale.dev/canary-gate-query)
    minimum=$(api flashsale.dev/canary-gate-min)
    [[ -n $query && -n $minimum ]] || die "Deployment order-api has no flashsale.dev/canary-gate-query and -min"
    answer=$("$curl" -fsS --get "$prometheus/api/v1/query" --data-urlencode "query=$query") ||
      die "Prometheus ($prometheus) did not answer"
    python3 - "$answer" "$minimum" <<'PY' || die "gate failed: roll back (k8s/canary.sh rollback)"
import json, math, sys
answer, minimum = json.loads(sys.argv[1]), float(sys.argv[2])
result = answer.get("data", {}).get("result", [])
if not result:
    sys.exit("[canary] no answer to the gate: the canary answered no purchase, or its warm-up failed or never ended")
value = float(result[0]["value"][1])
if math.isnan(value) or value < minimum:
    sys.exit(f"[canary] purchase success {value:g}, below the gate's {minimum:g}")
print(f"[canary] purchase success {value:g} (gate {minimum:g}): apply the release (k8s/README.md)", file=sys.stderr)
PY
    ;;
  rollback)
    "$kubectl" -n "$namespace" delete deploy/order-api-canary --ignore-not-found >&2
    say "canary deleted; the old fleet never changed"
    ;;
  *) die "unknown command $command (start, gate or rollback)" ;;
esac
