#!/usr/bin/env python3
"""Checks the dashboard and the alert rules against each other and against what the apps export.

  monitoring_checks.py ROOT RENDERED_K8S_MONITORING_YAML [--scrape-dir DIR] [--require-scrape]

1. k8s/monitoring renders a PrometheusRule whose spec.groups equal monitoring/rules.yml (the file
   Prometheus loads in docker-compose and promtool checks), and a ConfigMap carrying the dashboard JSON.
2. Every metric that a dashboard query or a rule names is exported by order-api or order-worker: it
   appears in the scrapes that ops-tests/run.sh saves from the running apps (scrape-*.prom), or, for a
   meter registered on its first event (say, an AUTO switch), it is listed in
   monitoring/metrics-on-first-event.txt together with the source file that registers it, and that
   file does register it.
3. Issue 28, finding 1: every PrometheusRule carries the label kube-prometheus-stack selects rules by; the
   platform rules (k8s/monitoring/platform-rule.yaml) name only exporter metrics listed in
   monitoring/exporter-metrics.txt under a prefix their exporter uses; and between them the rules alert on
   each failure a sale day needs to hear about (REQUIRED_ALERTS).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from manifests import load_all_yaml, load_yaml  # libyaml's parser where PyYAML has it

# PromQL words that are not metric names.
PROMQL_WORDS = {
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk",
    "quantile", "limitk", "limit_ratio", "by", "without", "on", "ignoring", "group_left", "group_right",
    "and", "or", "unless", "offset", "bool", "atan2", "rate", "irate", "increase", "delta", "idelta",
    "deriv", "predict_linear", "histogram_quantile", "abs", "absent", "absent_over_time", "ceil", "floor",
    "round", "clamp", "clamp_min", "clamp_max", "changes", "resets", "label_replace", "label_join",
    "scalar", "vector", "time", "timestamp", "sort", "sort_desc", "exp", "ln", "log2", "log10", "sqrt",
    "avg_over_time", "min_over_time", "max_over_time", "sum_over_time", "count_over_time",
    "quantile_over_time", "stddev_over_time", "stdvar_over_time", "last_over_time", "present_over_time",
    "inf", "nan",
}


# The label kube-prometheus-stack's Prometheus selects PodMonitors and PrometheusRules by (its Helm release).
PROMETHEUS_SELECTOR = {"release": "prometheus"}
PLATFORM_RULE = "flashsale-platform"
# Each exporter's metric prefix (monitoring/exporter-metrics.txt).
EXPORTER_PREFIXES = {
    "prometheus": ("up",),
    "kube-state-metrics": ("kube_",),
    "redis_exporter": ("redis_",),
    "rabbitmq_prometheus": ("rabbitmq_",),
    "cloudnative-pg": ("cnpg_",),
}
# What a sale day must be paged or warned about, and the metric an alert on it reads.
REQUIRED_ALERTS = {
    "the API's 5xx rate": "http_server_requests_seconds_count",
    "the purchase p99": "http_server_requests_seconds",
    "container restarts": "kube_pod_container_status_restarts_total",
    "an autoscaler at its maximum": "kube_horizontalpodautoscaler_spec_max_replicas",
    "Redis master loss": "redis_instance_info",
    "a RabbitMQ memory alarm": "rabbitmq_alarms_memory_used_watermark",
    "a RabbitMQ disk alarm": "rabbitmq_alarms_free_disk_space_watermark",
    "a lost synchronous standby": "cnpg_pg_replication_streaming_replicas",
    "the oldest pending reservation's age": "flashsale_worker_pending_oldest_age_seconds",
    "the worker's Postgres waits cut short (a row lock held open)": "flashsale_worker_postgres_timeouts_total",
}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (label matchers, ranges and grouping removed)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)", text):
        word = match.group(1)
        rest = text[match.end():].lstrip()
        if word.lower() in PROMQL_WORDS or rest.startswith("("):
            continue
        names.add(word)
    return names


def dashboard_exprs(dashboard: dict) -> list[str]:
    exprs = []

    def walk(panels):
        for panel in panels:
            exprs.extend(t["expr"] for t in panel.get("targets", []) if t.get("expr"))
            walk(panel.get("panels", []))

    walk(dashboard.get("panels", []))
    return exprs


def rule_exprs(groups: dict) -> list[str]:
    return [str(rule["expr"]) for group in groups["groups"] for rule in group["rules"]]


def scraped_names(scrape_dir: Path) -> set[str]:
    names = set()
    for scrape in sorted(scrape_dir.glob("scrape-*.prom")):
        for line in scrape.read_text().splitlines():
            if line and not line.startswith("#"):
                names.add(re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0))
    return names


def first_event_metrics(root: Path) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """metric -> (source file, meter name) from monitoring/metrics-on-first-event.txt, and errors."""
    listed, errors = {}, []
    path = root / "monitoring" / "metrics-on-first-event.txt"
    if not path.exists():
        return listed, errors
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        metric, source, meter = line.split()
        text = (root / source).read_text() if (root / source).exists() else ""
        if f'"{meter}"' not in text:
            errors.append(f"{path.name}: {source} does not register the meter {meter!r} ({metric})")
        listed[metric] = (source, meter)
    return listed, errors


def exporter_metrics(root: Path) -> tuple[set[str], list[str]]:
    """The metrics monitoring/exporter-metrics.txt lists, and errors (a name outside its exporter's prefix)."""
    listed, errors = set(), []
    path = root / "monitoring" / "exporter-metrics.txt"
    if not path.exists():
        return listed, [f"{path.relative_to(root)} is missing"]
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        metric, exporter = line.split()[:2]
        if not metric.startswith(EXPORTER_PREFIXES.get(exporter, ("\0",))):
            errors.append(f"{path.name}: {metric} is not a {exporter} metric (prefixes {EXPORTER_PREFIXES.get(exporter)})")
        listed.add(metric)
    return listed, errors


def check_platform_rules(root: Path, prometheus_rules: list[dict], rules_file: dict) -> list[str]:
    """Finding 1 of issue 28: rules the Prometheus Operator loads, on exporters that exist, covering a sale day."""
    errors = []
    for rule in prometheus_rules:
        labels = rule["metadata"].get("labels") or {}
        if not PROMETHEUS_SELECTOR.items() <= labels.items():
            errors.append(f"PrometheusRule {rule['metadata']['name']} lacks the label {PROMETHEUS_SELECTOR}: "
                          "kube-prometheus-stack's ruleSelector ignores it")
    platform = [r for r in prometheus_rules if r["metadata"]["name"] == PLATFORM_RULE]
    if len(platform) != 1:
        errors.append(f"k8s/monitoring renders no PrometheusRule {PLATFORM_RULE} (platform-rule.yaml)")
    listed, listing_errors = exporter_metrics(root)
    errors += listing_errors
    platform_exprs = [str(r["expr"]) for p in platform for g in p["spec"]["groups"] for r in g["rules"]]
    for expr in platform_exprs:
        for name in sorted(metric_names(expr) - listed):
            errors.append(f"{name} (used by PrometheusRule {PLATFORM_RULE}) is in no exporter's list "
                          "(monitoring/exporter-metrics.txt)")
    alerted = {name for expr in platform_exprs + rule_exprs(rules_file) for name in metric_names(expr)}
    for what, metric in REQUIRED_ALERTS.items():
        if metric not in alerted:
            errors.append(f"no alert on {what} (no rule reads {metric})")
    return errors


def check(root: Path, rendered: Path, scrape_dir: Path | None, require_scrape: bool) -> list[str]:
    errors: list[str] = []
    docs = [d for d in load_all_yaml(rendered.read_text()) if d]
    rules_file = load_yaml((root / "monitoring" / "rules.yml").read_text())
    dashboard = json.loads((root / "k8s" / "monitoring" / "flashsale-dashboard.json").read_text())

    prometheus_rules = [d for d in docs if d.get("kind") == "PrometheusRule"]
    application_rules = [d for d in prometheus_rules if d["metadata"]["name"] != PLATFORM_RULE]
    if len(application_rules) != 1:
        errors.append(f"k8s/monitoring renders {len(application_rules)} application PrometheusRules, expected 1")
    elif application_rules[0]["spec"] != rules_file:
        errors.append("the PrometheusRule's spec.groups differ from monitoring/rules.yml: keep them equal")
    errors += check_platform_rules(root, prometheus_rules, rules_file)
    dashboards = [d for d in docs if d.get("kind") == "ConfigMap" and d["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
    if len(dashboards) != 1 or json.loads(dashboards[0]["data"]["flashsale-dashboard.json"]) != dashboard:
        errors.append("k8s/monitoring must render one ConfigMap labelled grafana_dashboard=1 carrying flashsale-dashboard.json")

    used: dict[str, set[str]] = {}
    for where, exprs in (("dashboard", dashboard_exprs(dashboard)), ("rules", rule_exprs(rules_file))):
        if not exprs:
            errors.append(f"the {where} has no query")
        for expr in exprs:
            for name in metric_names(expr):
                used.setdefault(name, set()).add(where)

    scraped = scraped_names(scrape_dir) if scrape_dir and scrape_dir.is_dir() else set()
    if not scraped:
        if require_scrape:
            errors.append(f"no scrape-*.prom in {scrape_dir}: run ops-tests/run.sh first")
        else:
            print(f"monitoring checks: no scrape in {scrape_dir}, metric names not compared (run ops-tests/run.sh)")
        return errors
    listed, listing_errors = first_event_metrics(root)
    errors += listing_errors
    for name, where in sorted(used.items()):
        if name not in scraped and name not in listed:
            errors.append(f"{name} (used by the {' and the '.join(sorted(where))}) is not exported by the apps' scrapes")
    print(f"monitoring checks: {len(used)} metric names used by the dashboard and rules, all exported "
          f"({len([n for n in used if n in scraped])} in the scrapes, {len([n for n in used if n not in scraped])} registered on first event)"
          if not errors else "monitoring checks: FAILED")
    return errors


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("rendered", type=Path)
    parser.add_argument("--scrape-dir", type=Path)
    parser.add_argument("--require-scrape", action="store_true")
    args = parser.parse_args()
    errors = check(args.root, args.rendered, args.scrape_dir, args.require_scrape)
    for error in errors:
        print(f"monitoring checks: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
