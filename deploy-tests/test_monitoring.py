"""deploy-tests/monitoring_checks.py finds metric names in PromQL, and fails on a metric no app exports
or on rules that drifted from the PrometheusRule."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from monitoring_checks import check, metric_names  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def test_metric_names_ignore_functions_labels_ranges_and_grouping() -> None:
    expr = ('sum by (mode) (rate(flashsale_purchases_total{outcome=~"CONFIRMED|ACCEPTED"}[$__rate_interval]))'
            ' / max without (instance) (up{job="x"}) and deriv(max(q_messages)[10m:30s]) > 0')
    assert metric_names(expr) == {"flashsale_purchases_total", "up", "q_messages"}


def tree(tmp_path: Path) -> Path:
    for relative in ("monitoring", "k8s/monitoring", "order-api/src/main/java"):
        shutil.copytree(ROOT / relative, tmp_path / relative)
    return tmp_path


def rendered(root: Path) -> Path:
    """What kustomize renders from k8s/monitoring, built by hand (no kustomize needed here)."""
    rule = yaml.safe_load((root / "k8s/monitoring/prometheus-rule.yaml").read_text())
    platform = yaml.safe_load((root / "k8s/monitoring/platform-rule.yaml").read_text())
    dashboard = (root / "k8s/monitoring/flashsale-dashboard.json").read_text()
    config_map = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "flashsale-dashboard", "labels": {"grafana_dashboard": "1"}},
                  "data": {"flashsale-dashboard.json": dashboard}}
    path = root / "rendered.yaml"
    path.write_text(yaml.safe_dump_all([rule, platform, config_map]))
    return path


def scrape(root: Path, names: set[str]) -> Path:
    directory = root / "scrapes"
    directory.mkdir()
    (directory / "scrape-order-api.prom").write_text("".join(f'{n}{{application="x"}} 1.0\n' for n in sorted(names)))
    return directory


def used_names(root: Path) -> set[str]:
    dashboard = json.loads((root / "k8s/monitoring/flashsale-dashboard.json").read_text())
    names = set()
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            names |= metric_names(target["expr"])
    for group in yaml.safe_load((root / "monitoring/rules.yml").read_text())["groups"]:
        for rule in group["rules"]:
            names |= metric_names(rule["expr"])
    return names


def test_accepts_files_whose_metrics_are_all_scraped(tmp_path: Path) -> None:
    root = tree(tmp_path)
    assert check(root, rendered(root), scrape(root, used_names(root)), True) == []


def test_rejects_a_dashboard_query_on_a_metric_no_app_exports(tmp_path: Path) -> None:
    root = tree(tmp_path)
    scrapes = scrape(root, used_names(root))
    path = root / "k8s/monitoring/flashsale-dashboard.json"
    dashboard = json.loads(path.read_text())
    dashboard["panels"][1]["targets"][0]["expr"] = "sum(rate(flashsale_purchases_totl[1m]))"
    path.write_text(json.dumps(dashboard))
    errors = check(root, rendered(root), scrapes, True)
    assert any("flashsale_purchases_totl" in e for e in errors), errors


def test_rejects_rules_that_differ_from_the_prometheus_rule(tmp_path: Path) -> None:
    root = tree(tmp_path)
    scrapes = scrape(root, used_names(root))
    built = rendered(root)
    path = root / "monitoring/rules.yml"
    path.write_text(path.read_text().replace("for: 2m", "for: 20m", 1))
    errors = check(root, built, scrapes, True)
    assert any("differ from monitoring/rules.yml" in e for e in errors), errors


def test_requires_a_scrape_when_asked(tmp_path: Path) -> None:
    root = tree(tmp_path)
    errors = check(root, rendered(root), root / "missing", True)
    assert any("no scrape" in e for e in errors), errors


def platform_rule_errors(root: Path, old: str, new: str) -> list[str]:
    """What the check finds once k8s/monitoring/platform-rule.yaml has {new} for {old}."""
    path = root / "k8s/monitoring/platform-rule.yaml"
    text = path.read_text()
    assert old in text, f"{old!r} not found in {path}: the test needs updating"
    path.write_text(text.replace(old, new))
    return check(root, rendered(root), None, False)


def test_rejects_a_rule_the_prometheus_operator_ignores(tmp_path: Path) -> None:
    errors = platform_rule_errors(tree(tmp_path), "    release: prometheus\n", "")
    assert any("PrometheusRule flashsale-platform lacks the label" in e for e in errors), errors


def test_rejects_a_platform_alert_on_a_metric_no_exporter_has(tmp_path: Path) -> None:
    errors = platform_rule_errors(tree(tmp_path), "rabbitmq_alarms_memory_used_watermark", "rabbitmq_alarm_memory")
    assert any("rabbitmq_alarm_memory (used by PrometheusRule flashsale-platform) is in no exporter's list" in e
               for e in errors), errors
    assert any("no alert on a RabbitMQ memory alarm" in e for e in errors), errors


@pytest.mark.parametrize(("alert", "expected"), [
    pytest.param("FlashsalePendingTooOld", "no alert on the oldest pending reservation's age",
                 id="the_oldest_pending_reservations_age"),
    pytest.param("FlashsaleWorkerPostgresTimeouts", "no alert on the worker's Postgres waits cut short",
                 id="the_workers_postgres_timeouts"),
])
def test_requires_an_alert_on_each_sale_day_failure(tmp_path: Path, alert: str, expected: str) -> None:
    root = tree(tmp_path)
    path = root / "monitoring/rules.yml"
    rules = yaml.safe_load(path.read_text())
    rules["groups"][0]["rules"] = [r for r in rules["groups"][0]["rules"] if r["alert"] != alert]
    path.write_text(yaml.safe_dump(rules))
    errors = check(root, rendered(root), None, False)
    assert any(expected in e for e in errors), errors


def test_accepts_the_committed_platform_rules(tmp_path: Path) -> None:
    root = tree(tmp_path)
    assert check(root, rendered(root), None, False) == []
