#!/usr/bin/env bash
# Pins every image of the prod overlay to its digest, at release. Renders the overlay, reads every image field
# (the Deployments', the migration Job's, the operators' resources': deploy-tests/sale_day_checks.py, images()),
# asks the registry for the digest of each tag, and writes every image's tag and digest to
# k8s/overlays/prod/release-images/kustomization.yaml (a component of the overlay; its image-fields.yaml lets
# kustomize rewrite the operators' fields too). Then `scripts/validate-deploy.sh --release` passes. Commit the
# result with the release; never a digest typed by hand or guessed: a digest names one build.
#
#   k8s/pin-images.sh [ROOT]        (default: this repository)
#
# Needs the registries: crane (go install github.com/google/go-containerregistry/cmd/crane@v0.20.3) or
# skopeo (apt-get install skopeo). DIGEST_CMD replaces both: a command that prints sha256:... for the image
# reference given as its last argument. Nothing is written unless every image has its digest.
set -euo pipefail
root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
overlay=$root/k8s/overlays/prod
pins=$overlay/release-images/kustomization.yaml
tools=${FLASHSALE_TOOLS:-$HOME/.cache/flashsale/bin}
kustomize=$(command -v kustomize || echo "$tools/kustomize")
die() { printf '[pin-images] ERROR: %s\n' "$*" >&2; exit 1; }
[ -x "$kustomize" ] || die "kustomize is missing (scripts/validate-deploy.sh builds it into $tools)"

digest_of() { # image
  if [ -n "${DIGEST_CMD:-}" ]; then
    $DIGEST_CMD "$1"
  elif command -v crane >/dev/null; then
    crane digest "$1"
  elif command -v skopeo >/dev/null; then
    skopeo inspect --format '{{.Digest}}' "docker://$1"
  else
    die "neither crane nor skopeo is installed, and no DIGEST_CMD"
  fi
}

# Every image the overlay runs, by its tag (a previous release's digest dropped).
images=$("$kustomize" build "$overlay" | python3 -c '
import sys, yaml
sys.path.insert(0, sys.argv[1])
from sale_day_checks import images
found = {image.split("@")[0] for doc in yaml.safe_load_all(sys.stdin) if doc for _, image in images(doc.get("spec") or {})}
print("\n".join(sorted(found)))
' "$root/deploy-tests")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  sed -n '1,/^images:/p' "$pins"
  for image in $images; do
    [[ ${image##*/} == *:* ]] || die "$image has no tag: tag it with its release first"
    digest=$(digest_of "$image") || die "no digest for $image"
    [[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || die "the registry answered ${digest@Q} for $image, not a sha256 digest"
    printf '  - name: %s\n    newTag: "%s"\n    digest: %s\n' "${image%:*}" "${image##*:}" "$digest"
    echo "[pin-images] $image@$digest" >&2
  done
} >"$work/pins.yaml"
cp "$work/pins.yaml" "$pins"
echo "[pin-images] wrote ${pins#"$root"/}; check it with scripts/validate-deploy.sh --release" >&2
