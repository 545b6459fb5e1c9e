#!/usr/bin/env bash
# Installs what the operator-side tests need, once (fast when present):
#   chromium    Debian's browser, driven headless by the console test (Playwright uses it as it is:
#               no browser download)
#   prometheus  Debian's package: promtool checks the alert rules, and the server renders the
#               dashboard's queries from a real scrape
#   haproxy     the local load balancer in front of several API instances (scripts/up.sh --api N)
#   Python      ops-tests/requirements.txt (Playwright's Python client)
#
#   scripts/ops-tools.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
if [ ${#missing[@]} -gt 0 ]; then
  echo "[ops-tools] installing ${missing[*]} (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python packages: reinstall only when the pinned requirements change.
tools=${FLASHSALE_TOOLS:-$HOME/.cache/flashsale/bin}
mkdir -p "$tools"
requirements=$root/ops-tests/requirements.txt
stamp=$tools/.pip-ops-$(sha256sum "$requirements" | cut -c1-16)-$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [[ ! -f $stamp ]] || ! python3 -c 'import playwright.sync_api, pytest' 2>/dev/null; then
  echo "[ops-tools] installing Python packages from ops-tests/requirements.txt"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r "$requirements"
  touch "$stamp"
fi
