"""scripts/validate-deploy.sh accepts the real deployment files and rejects broken ones.

Each broken case copies the files the validator reads into a temporary tree, breaks one thing
and expects the validator to exit non-zero naming the problem.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from deploy_checks import relaxed_env_names  # noqa: E402

COPIED = [
    "docker-compose.yml",
    "k8s",
    "deploy-tests/deploy_checks.py",
    "deploy-tests/monitoring_checks.py",
    "monitoring",
    "deploy-tests/requirements.txt",
    "deploy-tests/schemas",
    "scripts/validate-deploy.sh",
    "order-api/Dockerfile",
    "order-worker/Dockerfile",
    "common/src/main/resources",
    "order-api/src/main/resources",
    "order-worker/src/main/resources",
]


def validate(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(root / "scripts/validate-deploy.sh"), str(root)],
        capture_output=True, text=True, timeout=900,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for relative in COPIED:
        source, target = ROOT / relative, tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not found in {path}: the test needs updating"
    path.write_text(text.replace(old, new, 1))


def assert_rejected(root: Path, *expected: str) -> None:
    result = validate(root)
    output = result.stdout + result.stderr
    assert result.returncode != 0, f"validator accepted a broken tree:\n{output}"
    for text in expected:
        assert text in output, f"expected {text!r} in the validator's output:\n{output}"


def test_accepts_the_committed_deployment_files() -> None:
    result = validate(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Valid: 0" not in result.stdout
    assert "[validate-deploy] OK" in result.stdout


def test_rejects_an_unknown_field_in_a_deployment(tree: Path) -> None:
    edit(tree / "k8s/base/order-api.yaml", "          readinessProbe:", "          readynessProbe:")
    assert_rejected(tree, "Deployment order-api is invalid", "readynessProbe")


def test_rejects_a_typo_in_the_scaled_object(tree: Path) -> None:
    edit(tree / "k8s/base/order-worker.yaml", "  minReplicaCount: 1", "  minReplicasCount: 1")
    assert_rejected(tree, "ScaledObject order-worker is invalid", "minReplicasCount")


def test_rejects_a_rabbitmq_trigger_without_a_queue(tree: Path) -> None:
    edit(tree / "k8s/base/order-worker.yaml", "        queueName: flashsale.orders.requested\n", "")
    assert_rejected(tree, "ScaledObject order-worker is invalid", "queueName")


def test_rejects_a_typo_in_the_postgres_cluster(tree: Path) -> None:
    edit(tree / "k8s/overlays/prod/postgres-cluster.yaml", "  instances: 3", "  instance: 3")
    assert_rejected(tree, "Cluster flashsale-db is invalid")


def test_rejects_a_typo_in_the_rabbitmq_cluster(tree: Path) -> None:
    edit(tree / "k8s/overlays/prod/rabbitmq-cluster.yaml", "  persistence:", "  persistance:")
    assert_rejected(tree, "RabbitmqCluster flashsale-rabbitmq is invalid")


def test_rejects_a_config_map_variable_that_binds_to_no_property(tree: Path) -> None:
    edit(tree / "k8s/base/config.env", "DB_POOL_SIZE=4", "DB_POOL_SIZE=4\nDB_POOL_MAX=32")
    assert_rejected(tree, "order-api gets DB_POOL_MAX, which binds to no property")


def test_rejects_an_api_setting_given_to_the_worker(tree: Path) -> None:
    edit(tree / "docker-compose.yml", "      APP_WORKER_PREFETCH:", "      APP_MODE_DEFAULT: ASYNC\n      APP_WORKER_PREFETCH:")
    assert_rejected(tree, "docker-compose.yml services.order-worker: order-worker gets APP_MODE_DEFAULT")


def test_accepts_a_variable_in_the_relaxed_form_of_a_property_key(tree: Path) -> None:
    edit(tree / "docker-compose.yml", "      APP_WORKER_PREFETCH:", "      APP_WORKER_MAX_ATTEMPTS: 5\n      APP_WORKER_PREFETCH:")
    result = validate(tree)
    assert result.returncode == 0, result.stdout + result.stderr


def test_rejects_a_published_port_the_api_does_not_listen_on(tree: Path) -> None:
    edit(tree / "docker-compose.yml", '"${API_PORT:-8080}:8080"', '"${API_PORT:-8080}:8090"')
    assert_rejected(tree, "services.order-api: container ports [8090] but order-api listens on 8080")


def test_rejects_a_compose_file_outside_the_compose_spec(tree: Path) -> None:
    edit(tree / "docker-compose.yml", "condition: service_healthy", "condition: service_healty")
    assert_rejected(tree, "'service_healty' is not one of")


def test_rejects_a_readiness_probe_on_the_wrong_path(tree: Path) -> None:
    edit(tree / "k8s/base/order-worker.yaml", "path: /actuator/health/readiness", "path: /actuator/health")
    assert_rejected(tree, "Deployment order-worker: readinessProbe is not an httpGet of /actuator/health/readiness")


def test_rejects_a_grace_period_shorter_than_the_shutdown_phase(tree: Path) -> None:
    edit(tree / "k8s/base/order-worker.yaml", "terminationGracePeriodSeconds: 45", "terminationGracePeriodSeconds: 20")
    assert_rejected(tree, "Deployment order-worker: terminationGracePeriodSeconds 20 does not outlast")


def test_rejects_a_committed_secret(tree: Path) -> None:
    edit(tree / "k8s/base/kustomization.yaml", "DB_PASSWORD=change-me", "DB_PASSWORD=s3cr3t-prod-password")
    assert_rejected(tree, "key DB_PASSWORD holds a value without the 'change-me' placeholder")


def test_rejects_a_scaled_object_watching_another_queue(tree: Path) -> None:
    edit(tree / "k8s/base/order-worker.yaml", "queueName: flashsale.orders.requested", "queueName: flashsale.orders.retry")
    assert_rejected(tree, "watches queue 'flashsale.orders.retry', the worker consumes 'flashsale.orders.requested'")


def test_rejects_a_dockerfile_exposing_another_port(tree: Path) -> None:
    edit(tree / "order-worker/Dockerfile", "EXPOSE 8081", "EXPOSE 8080")
    assert_rejected(tree, "order-worker/Dockerfile: EXPOSE [8080] but order-worker listens on 8081")


def test_relaxed_binding_accepts_canonical_and_legacy_forms() -> None:
    assert relaxed_env_names("app.worker.batch-size") == {"APP_WORKER_BATCHSIZE", "APP_WORKER_BATCH_SIZE"}
