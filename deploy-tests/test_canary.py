"""k8s/canary.sh: the canary's purchase-success gate passes a release whose canary sells, and stops one whose
canary fails its purchases or its warm-up (issue 40, finding 5). Prometheus and kubectl are stand-ins."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
TOOLS = Path(os.environ.get("FLASHSALE_TOOLS", Path.home() / ".cache/flashsale/bin"))


@pytest.fixture(scope="module", autouse=True)
def kustomize() -> None:
    if not (TOOLS / "kustomize").is_file():
        # scripts/validate-deploy.sh builds it; the suite's first test runs the validator.
        subprocess.run(["bash", str(ROOT / "scripts/validate-deploy.sh")], capture_output=True, timeout=900)


def canary(tmp_path: Path, command: str, prometheus_answer: dict | None = None) -> subprocess.CompletedProcess[str]:
    asked = tmp_path / "asked"
    curl = tmp_path / "curl"
    curl.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> {asked}\ncat {tmp_path / 'answer.json'}\n")
    (tmp_path / "answer.json").write_text(json.dumps(prometheus_answer or {}))
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(f"#!/bin/sh\nprintf 'kubectl %s\\n' \"$*\" >> {tmp_path / 'kubectl.log'}\n"
                       f"[ \"$1\" = apply ] && cat > {tmp_path / 'applied.yaml'}\nexit 0\n")
    for tool in (curl, kubectl):
        tool.chmod(0o755)
    return subprocess.run(["bash", str(ROOT / "k8s/canary.sh"), command, str(ROOT)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "CURL": str(curl), "KUBECTL": str(kubectl),
                                            "KUSTOMIZE": str(TOOLS / "kustomize")})


def answer(*values: str) -> dict:
    return {"status": "success", "data": {"resultType": "vector",
                                          "result": [{"metric": {}, "value": [1.7e9, v]} for v in values]}}


def test_the_gate_passes_a_canary_whose_purchases_succeed(tmp_path: Path) -> None:
    result = canary(tmp_path, "gate", answer("1"))
    assert result.returncode == 0, result.stderr
    asked = (tmp_path / "asked").read_text()
    assert 'pod=~"order-api-canary-.+"' in asked and "flashsale_warmup_failed" in asked


def test_the_gate_stops_a_canary_whose_purchases_fail(tmp_path: Path) -> None:
    result = canary(tmp_path, "gate", answer("0.4"))
    assert result.returncode != 0
    assert "purchase success 0.4, below the gate's 0.99" in result.stderr


def test_the_gate_stops_a_canary_with_no_answer(tmp_path: Path) -> None:
    # The query's `and on()` clauses leave nothing when the warm-up failed or no purchase was answered.
    result = canary(tmp_path, "gate", answer())
    assert result.returncode != 0
    assert "no answer to the gate" in result.stderr


def test_the_canary_is_one_pod_of_the_release_behind_the_apis_service(tmp_path: Path) -> None:
    result = canary(tmp_path, "start")
    assert result.returncode == 0, result.stderr
    applied = yaml.safe_load((tmp_path / "applied.yaml").read_text())
    assert applied["metadata"]["name"] == "order-api-canary" and applied["spec"]["replicas"] == 1
    labels = applied["spec"]["template"]["metadata"]["labels"]
    assert labels["app.kubernetes.io/name"] == "order-api" and labels["flashsale.dev/track"] == "canary"
    assert applied["spec"]["selector"]["matchLabels"]["flashsale.dev/track"] == "canary"
    assert "rollout status deploy/order-api-canary" in (tmp_path / "kubectl.log").read_text()
