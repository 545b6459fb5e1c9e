#!/usr/bin/env python3
"""Renders the Grafana dashboard's queries without Grafana (Debian does not package it, and there is no
Docker here): every panel's PromQL is evaluated by a real Prometheus that scraped the apps during the
ops tests, drawn as SVG line charts in the panel layout, and photographed with headless Chromium.

  render_dashboard.py PROMETHEUS_URL START END OUT.png

Fails when a query is rejected by Prometheus, or a rule's health is not ok: the dashboard's PromQL is
checked against a real engine, not only parsed.
"""
from __future__ import annotations

import html
import json
import shutil
import sys
import urllib.parse
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts" / "pylib"))
from flashtools import web  # noqa: E402

DASHBOARD = ROOT / "k8s" / "monitoring" / "flashsale-dashboard.json"
COLOURS = ["#0969da", "#1a7f37", "#bf3989", "#9a6700", "#8250df", "#cf222e", "#57606a"]


def get(base: str, path: str, **params) -> dict:
    url = base + path + ("?" + urllib.parse.urlencode(params) if params else "")
    body = web.call("GET", url, timeout=30)
    if body.get("status") != "success":
        raise RuntimeError(f"{path} {params}: {body}")
    return body["data"]


def legend(template: str, labels: dict) -> str:
    out = template or json.dumps(labels)
    for key, value in labels.items():
        out = out.replace("{{" + key + "}}", value)
    return out


def chart(series: list[tuple[str, list[tuple[float, float]]]], start: float, end: float) -> str:
    width, height = 560, 150
    values = [v for _, points in series for _, v in points]
    top = max(values + [1e-9])
    bottom = min(values + [0.0])
    span = (top - bottom) or 1.0
    parts = [f'<svg viewBox="0 0 {width} {height + 4}" width="{width}" height="{height + 4}">',
             f'<line x1="0" y1="{height}" x2="{width}" y2="{height}" stroke="#d0d7de"/>',
             f'<text x="2" y="11" class="axis">{top:.4g}</text>',
             f'<text x="2" y="{height - 2}" class="axis">{bottom:.4g}</text>']
    for i, (_, points) in enumerate(series):
        coords = " ".join(f"{(t - start) / max(1, end - start) * width:.1f},{height - (v - bottom) / span * (height - 14):.1f}"
                          for t, v in points)
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{COLOURS[i % len(COLOURS)]}" stroke-width="1.6"/>')
    parts.append("</svg>")
    return "".join(parts)


def main() -> int:
    base, start, end, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), Path(sys.argv[4])
    dashboard = json.loads(DASHBOARD.read_text())
    step = max(1, int((end - start) / 200))
    blocks, failures = [], []
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            blocks.append(f'<h2>{html.escape(panel["title"])}</h2>')
            continue
        if panel["type"] == "text":
            blocks.append(f'<div class="panel"><h3>{html.escape(panel["title"])}</h3>'
                          f'<p class="note">{html.escape(panel["options"]["content"])}</p></div>')
            continue
        series = []
        for target in panel["targets"]:
            expr = target["expr"].replace("$__rate_interval", "15s")
            try:
                data = get(base, "/api/v1/query_range", query=expr, start=start, end=end, step=step)
            except Exception as error:  # noqa: BLE001 - reported below, the run fails
                failures.append(f'{panel["title"]}: {expr}: {error}')
                continue
            for result in data["result"]:
                points = [(float(t), float(v)) for t, v in result["values"] if v not in ("NaN", "+Inf", "-Inf")]
                if points:
                    series.append((legend(target.get("legendFormat", ""), result["metric"]), points))
        keys = "".join(f'<span style="color:{COLOURS[i % len(COLOURS)]}">&#9632; {html.escape(name)} '
                       f'(last {points[-1][1]:.4g})</span> ' for i, (name, points) in enumerate(series))
        body = chart(series, start, end) if series else '<p class="note">no data in this run</p>'
        blocks.append(f'<div class="panel"><h3>{html.escape(panel["title"])}</h3>{body}<div class="keys">{keys}</div></div>')
    rules = get(base, "/api/v1/rules")
    unhealthy = [r["name"] for g in rules["groups"] for r in g["rules"] if r.get("health") != "ok"]
    alerts = [f'{r["name"]}: {r["state"]}' for g in rules["groups"] for r in g["rules"]]
    failures += [f"rule {name} is not healthy" for name in unhealthy]
    page = f"""<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font: 13px system-ui, sans-serif; margin: 12px; background: #f6f8fa; }}
h1 {{ font-size: 18px; margin: 4px 0; }} h2 {{ font-size: 15px; margin: 14px 0 4px; width: 100%; }}
h3 {{ font-size: 13px; margin: 0 0 4px; }} .grid {{ display: flex; flex-wrap: wrap; gap: 8px; }}
.panel {{ background: #fff; border: 1px solid #d0d7de; border-radius: 4px; padding: 6px; width: 570px; }}
.keys {{ font-size: 11px; }} .note {{ color: #57606a; }} .axis {{ font-size: 9px; fill: #57606a; }}
</style></head><body><h1>flashsale dashboard: its queries evaluated by Prometheus on the ops test run</h1>
<p class="note">Not Grafana (not packaged for this box): the panels of k8s/monitoring/flashsale-dashboard.json,
each query run by Prometheus {html.escape(get(base, "/api/v1/status/buildinfo")["version"])} over the test's scrapes
($__rate_interval = 15s), drawn by ops-tests/render_dashboard.py. Alert rules: {html.escape(", ".join(alerts))}.</p>
<div class="grid">{"".join(blocks)}</div></body></html>"""
    out.parent.mkdir(parents=True, exist_ok=True)
    page_path = out.with_suffix(".html")
    page_path.write_text(page)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                             headless=True, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1250, "height": 900})
        tab.goto(page_path.as_uri())
        tab.screenshot(path=str(out), full_page=True)
        browser.close()
    for failure in failures:
        print(f"[render-dashboard] {failure}", file=sys.stderr)
    print(f"[render-dashboard] {out} ({len(dashboard['panels'])} panels, {len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
