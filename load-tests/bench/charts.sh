#!/usr/bin/env bash
# Runs load-tests/bench/charts.py in its own venv, with matplotlib from PyPI (pinned in
# requirements-charts.txt), created once in the project's tool folder and reused while the pins hold.
#
#   load-tests/bench/charts.sh RESULTS/seeds.json [--out DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools=${FLASHSALE_TOOLS:-$HOME/.cache/flashsale/bin}
requirements=$here/requirements-charts.txt
venv=$tools/venv-charts-$(sha256sum "$requirements" | cut -c1-16)-$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
  echo "[charts] installing matplotlib into $venv" >&2
  mkdir -p "$tools"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >&2
fi
MPLBACKEND=Agg exec "$venv/bin/python" "$here/charts.py" "$@"
