#!/usr/bin/env bash
# Validates the deployment files offline (no Docker engine, no cluster, no schema downloads):
#   1. docker-compose.yml against the compose-spec JSON schema (deploy-tests/schemas);
#   2. every k8s/overlays/* rendered with kustomize, then validated with kubeconform against the
#      Kubernetes schemas shipped in the kubernetes-validate wheel (strict: unknown fields fail)
#      and the CRD schemas in k8s/crd-schemas (KEDA, CloudNativePG, RabbitMQ operator);
#   3. k8s/monitoring (PrometheusRule, dashboard ConfigMap) the same way, the alert rules with promtool,
#      and deploy-tests/monitoring_checks.py: every metric the dashboard and rules name is exported;
#   4. deploy-tests/deploy_checks.py: the files against the applications' configuration
#      (variable names, ports, probe paths, grace periods, KEDA queue, placeholder secrets), and against the
#      declared sale (k8s/overlays/prod/sale-capacity.env, deploy-tests/sale_plan.py; issue 28), with
#      k8s/overlays/prod/sale-window rendered on its own, and the numbers k8s/README.md and docs/operations.md
#      quote (deploy-tests/doc_checks.py; issue 40).
# Installs its own tools, idempotently: Python packages from deploy-tests/requirements.txt, and
# kustomize and kubeconform built with `go install` into ${FLASHSALE_TOOLS:-~/.cache/flashsale/bin}.
#
#   scripts/validate-deploy.sh [--release] [REPO_ROOT]
#
# --release: the prod overlay is about to be applied; every image field of it (the operators' included) must
# name its digest. Offline, without a registry, the committed files carry tags only and fail this; the release
# pipeline runs k8s/pin-images.sh first (k8s/README.md#2-deploy-a-release-days-before-never-in-the-sale-window).
#
# Environment: FLASHSALE_TOOLS, K8S_VERSION (Kubernetes schema version, default 1.33.0), GO.
set -euo pipefail

KUSTOMIZE_VERSION=v5.8.2   # v5.8.3 needs Go >= 1.27
KUBECONFORM_VERSION=v0.8.0
K8S_VERSION=${K8S_VERSION:-1.33.0}

release=()
if [ "${1:-}" = --release ]; then release=(--release); shift; fi
ROOT=$(cd "${1:-$(dirname "$0")/..}" && pwd)
TOOLS=${FLASHSALE_TOOLS:-$HOME/.cache/flashsale/bin}
PYTHON=${PYTHON:-python3}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

say() { printf '[validate-deploy] %s\n' "$*"; }
die() { printf '[validate-deploy] ERROR: %s\n' "$*" >&2; exit 1; }

mkdir -p "$TOOLS"

# Python tools: reinstall only when the pinned requirements change.
requirements=$ROOT/deploy-tests/requirements.txt
stamp=$TOOLS/.pip-$(sha256sum "$requirements" | cut -c1-16)-$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# The stamp is written once the packages import: the deploy-tests run this script ~90 times, and the
# import check alone cost 0.8 s of each run.
if [[ ! -f $stamp ]]; then
  say "installing Python tools from deploy-tests/requirements.txt"
  "$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore -r "$requirements" || die "pip install failed"
  "$PYTHON" -c 'import yaml, kubernetes_validate, check_jsonschema, pytest, xdist' || die "the Python tools do not import"
  touch "$stamp"
fi

go_tool() { # binary module version
  local binary=$1 module=$2 version=$3
  if [[ -x $TOOLS/$binary && -f $TOOLS/.$binary-$version ]]; then return; fi
  [[ -x $GO ]] || die "Go is needed to build $binary (set GO=/path/to/go)"
  say "building $binary $version (go install, cached in $TOOLS)"
  GOBIN=$TOOLS GOTOOLCHAIN=local GOFLAGS=-mod=mod "$GO" install "$module@$version" >/dev/null 2>&1 ||
    GOBIN=$TOOLS GOTOOLCHAIN=local GOFLAGS=-mod=mod "$GO" install "$module@$version" ||
    die "go install $module@$version failed"
  rm -f "$TOOLS/.$binary-"*
  touch "$TOOLS/.$binary-$version"
}
go_tool kustomize sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION"
go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"

# kubernetes-validate's schemas point at one shared definitions file through an absolute URL
# ($id https://kubernetes.io/api/...), which kubeconform would try to download. Each schema is
# rewritten self-contained: the definitions it reaches are copied into its own $defs (which also
# keeps kubeconform from compiling the 4.6 MB definitions file for every kind).
k8s_schemas=$("$PYTHON" - "$TOOLS/k8s-schemas" "$K8S_VERSION" <<'PY'
import json, pathlib, re, sys
from importlib.metadata import version
target_root, k8s = pathlib.Path(sys.argv[1]), sys.argv[2]
name = f"v{k8s}-local-strict"
target = target_root / version("kubernetes-validate") / "v2"
done = target / f".{name}.done"
if not done.exists():  # importing kubernetes_validate only then: it is most of this step's time
    import kubernetes_validate
    source = pathlib.Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / name
    if not source.is_dir():
        sys.exit(f"kubernetes-validate {version('kubernetes-validate')} has no schemas for Kubernetes {k8s}")
    (target / name).mkdir(parents=True, exist_ok=True)
    prefix = "/api/_definitions.json#/$defs/"
    definitions = json.loads((source / "_definitions.json").read_text())["$defs"]
    reference = re.compile(r'"\$ref": "(?:/api/_definitions\.json)?#/\$defs/([^"]+)"')
    for path in source.glob("*.json"):
        if path.name == "_definitions.json":
            continue
        text = path.read_text()
        needed, pending = {}, reference.findall(text)
        while pending:
            key = pending.pop()
            if key not in needed:
                needed[key] = definitions[key]
                pending += reference.findall(json.dumps(definitions[key]))
        schema = json.loads(text.replace(prefix, "#/$defs/"))
        schema.pop("$id", None)
        schema["$defs"] = json.loads(json.dumps(needed).replace(prefix, "#/$defs/"))
        (target / name / path.name).write_text(json.dumps(schema))
    done.touch()
print(target)
PY
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A check whose exact inputs passed before passes again, with the same output: the deploy-tests run this
# script ~90 times on copies of the tree that each differ in one place, so a tool runs only where its inputs
# changed. Only passes are remembered, keyed by this script, the command and every input's content (the
# copy's own path taken out).
passed=$TOOLS/.validate-deploy-passed
mkdir -p "$passed"
# The CRD schemas (1.4 MB) are summed once; each input file is summed with the copy's path taken out.
salt=$({ cat "$ROOT/scripts/validate-deploy.sh"; echo "$KUSTOMIZE_VERSION $KUBECONFORM_VERSION $K8S_VERSION"
  find "$ROOT/k8s/crd-schemas" -type f -print0 | sort -z | xargs -0 sha256sum | sed "s|$ROOT||"; } | sha256sum)
unchanged_or() { # input-file... -- command...
  local inputs=() key out status
  while [[ $1 != -- ]]; do inputs+=("$1"); shift; done
  shift
  key=$({ echo "$salt $*"; cat "${inputs[@]}"; } | sed "s|$ROOT|<root>|g; s|$work|<work>|g" | sha256sum | cut -c1-64)
  if [[ -f $passed/$key ]]; then cat "$passed/$key"; return 0; fi
  status=0
  out=$("$@" 2>&1) || status=$?
  printf '%s\n' "$out"
  if [[ $status -eq 0 ]]; then printf '%s\n' "$out" >"$passed/$key"; fi
  return $status
}

# kubeconform on one rendered file: Kubernetes's strict schemas and the CRD schemas in k8s/crd-schemas.
kubeconform_file() {
  unchanged_or "$1" -- \
    "$TOOLS/kubeconform" -strict -summary -output text -kubernetes-version "$K8S_VERSION" \
    -schema-location "$k8s_schemas/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
    -schema-location "$ROOT/k8s/crd-schemas/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json" \
    "$1"
}

say "docker-compose.yml against the compose-spec schema"
unchanged_or "$ROOT/deploy-tests/schemas/compose-spec.json" "$ROOT/docker-compose.yml" -- \
  "$PYTHON" -m check_jsonschema --schemafile "$ROOT/deploy-tests/schemas/compose-spec.json" "$ROOT/docker-compose.yml"

rendered=()
for overlay in "$ROOT"/k8s/overlays/*/; do
  name=$(basename "$overlay")
  say "kustomize build k8s/overlays/$name"
  "$TOOLS/kustomize" build "$overlay" >"$work/$name.yaml" || die "kustomize build k8s/overlays/$name failed"
  say "kubeconform k8s/overlays/$name (Kubernetes $K8S_VERSION strict schemas + k8s/crd-schemas)"
  kubeconform_file "$work/$name.yaml"
  rendered+=("$work/$name.yaml")
done
[[ ${#rendered[@]} -gt 0 ]] || die "no overlays under k8s/overlays"
# The sale window alone (issue 28, finding 6): what is applied mid-sale must be the ScaledObjects only.
say "kustomize build k8s/overlays/prod/sale-window"
"$TOOLS/kustomize" build "$ROOT/k8s/overlays/prod/sale-window" >"$work/sale-window.yaml" ||
  die "kustomize build k8s/overlays/prod/sale-window failed"
say "sale plan (deploy-tests/sale_plan.py k8s/overlays/prod/sale-capacity.env)"
unchanged_or "$ROOT/deploy-tests/sale_plan.py" "$ROOT/k8s/overlays/prod/sale-capacity.env" -- \
  "$PYTHON" "$ROOT/deploy-tests/sale_plan.py" "$ROOT/k8s/overlays/prod/sale-capacity.env" | sed 's/^/  /'

# Monitoring: the PrometheusRule and the dashboard ConfigMap (k8s/monitoring, applied on its own), the
# rules through promtool (Debian's prometheus package), and every metric they name against the apps'
# scrapes saved by ops-tests/run.sh (required when FLASHSALE_REQUIRE_SCRAPE=1, as scripts/test.sh sets).
say "kustomize build k8s/monitoring + kubeconform"
"$TOOLS/kustomize" build "$ROOT/k8s/monitoring" >"$work/monitoring.yaml" || die "kustomize build k8s/monitoring failed"
kubeconform_file "$work/monitoring.yaml"
if ! command -v promtool >/dev/null 2>&1; then
  say "installing promtool (Debian package prometheus)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null ||
    die "apt-get install prometheus failed"
fi
say "promtool check rules monitoring/rules.yml"
unchanged_or "$ROOT/monitoring/rules.yml" -- promtool check rules "$ROOT/monitoring/rules.yml" || die "promtool rejects monitoring/rules.yml"
say "promtool check rules k8s/monitoring/platform-rule.yaml (its spec)"
"$PYTHON" -c 'import sys, yaml; yaml.safe_dump(yaml.safe_load(open(sys.argv[1]))["spec"], open(sys.argv[2], "w"))' \
  "$ROOT/k8s/monitoring/platform-rule.yaml" "$work/platform-rules.yml" || die "k8s/monitoring/platform-rule.yaml unreadable"
unchanged_or "$work/platform-rules.yml" -- promtool check rules "$work/platform-rules.yml" || die "promtool rejects k8s/monitoring/platform-rule.yaml"
sed 's|/etc/prometheus/rules.yml|'"$ROOT"'/monitoring/rules.yml|' "$ROOT/monitoring/prometheus.yml" >"$work/prometheus.yml"
unchanged_or "$work/prometheus.yml" "$ROOT/monitoring/rules.yml" -- promtool check config "$work/prometheus.yml" >/dev/null || die "promtool rejects monitoring/prometheus.yml"
say "dashboard and rules against each other and the apps' metric scrapes"
"$PYTHON" "$ROOT/deploy-tests/monitoring_checks.py" "$ROOT" "$work/monitoring.yaml" \
  --scrape-dir "${FLASHSALE_METRICS_SCRAPE_DIR:-$ROOT/ops-tests/results}" \
  ${FLASHSALE_REQUIRE_SCRAPE:+--require-scrape} || die "monitoring checks failed"

say "deployment files against the applications' configuration"
"$PYTHON" "$ROOT/deploy-tests/deploy_checks.py" "$ROOT" "${rendered[@]}" --sale-window "$work/sale-window.yaml" "${release[@]}"

say "OK: docker-compose.yml, ${#rendered[@]} overlays ($(cd "$ROOT/k8s/overlays" && echo */ | tr -d /)), monitoring, Dockerfile"
