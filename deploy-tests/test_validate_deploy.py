"""scripts/validate-deploy.sh accepts the real deployment files and rejects broken ones.

Each broken case copies the files the validator reads into a temporary tree, breaks one thing
and expects the validator to exit non-zero naming the problem.
"""

from __future__ import annotations

import os
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
    "deploy-tests/sale_day_checks.py",
    "deploy-tests/sale_plan.py",
    "deploy-tests/network_policies.py",
    "deploy-tests/images.py",
    "deploy-tests/manifests.py",
    "deploy-tests/doc_checks.py",
    "docs/operations.md",
    "docs/sale-capacity.md",
    "monitoring",
    "deploy-tests/requirements.txt",
    "deploy-tests/schemas",
    "scripts/validate-deploy.sh",
    "scripts/services.sh",
    "README.md",
    # The documents the manifests' comments cite (docs/FILE.md#anchor): the validator checks that they exist.
    "docs/operations.md",
    "docs/architecture.md",
    "docs/decisions",
    "docs/results/2026-11-26-bench-aa11ba3.md",
    "Dockerfile",
    "common/src/main/resources",
    "order-api/src/main/resources",
    "order-api/src/main/java/dev/flashsale/api/purchase/PurchaseProperties.java",
    "order-api/src/main/java/dev/flashsale/api/door/WaitingLineProperties.java",
    "order-worker/src/main/resources",
]


def validate(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(root / "scripts/validate-deploy.sh"), *options, str(root)],
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


def assert_rejected(root: Path, *expected: str, options: tuple[str, ...] = ()) -> None:
    result = validate(root, *options)
    output = result.stdout + result.stderr
    assert result.returncode != 0, f"validator accepted a broken tree:\n{output}"
    for text in expected:
        assert text in output, f"expected {text!r} in the validator's output:\n{output}"


def test_accepts_the_committed_deployment_files() -> None:
    result = validate(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Valid: 0" not in result.stdout
    assert "[validate-deploy] OK" in result.stdout


def test_accepts_a_variable_in_the_relaxed_form_of_a_property_key(tree: Path) -> None:
    edit(tree / "docker-compose.yml", "      APP_WORKER_PREFETCH:", "      APP_WORKER_MAX_ATTEMPTS: 5\n      APP_WORKER_PREFETCH:")
    result = validate(tree)
    assert result.returncode == 0, result.stdout + result.stderr


# Issue 16: each point of "a deployment that survives sale day" has a check that fails when it regresses.

COMMON_YML = "common/src/main/resources/application-common.yml"
PROD = "k8s/overlays/prod"


def test_rejects_a_database_without_wal_archiving(tree: Path) -> None:
    text = (tree / PROD / "postgres-cluster.yaml").read_text()
    start, end = text.index("  backup:\n"), text.index("  storage:\n")
    (tree / PROD / "postgres-cluster.yaml").write_text(text[:start] + text[end:])
    assert_rejected(tree, "Cluster flashsale-db: no WAL archiving")


def test_rejects_a_compose_secret_with_a_committed_default(tree: Path) -> None:
    text = (tree / "docker-compose.yml").read_text()
    (tree / "docker-compose.yml").write_text(text.replace(
        "${REDIS_PASSWORD:?run scripts/compose-env.sh (writes .env with generated secrets)}", "${REDIS_PASSWORD:-flashsale}"))
    assert_rejected(tree, "docker-compose.yml: ${REDIS_PASSWORD} has a committed default")


def test_rejects_applications_using_the_brokers_default_administrator(tree: Path) -> None:
    text = (tree / PROD / "credentials.yaml").read_text()
    (tree / PROD / "credentials.yaml").write_text(text.replace("flashsale-api-user-credentials", "flashsale-rabbitmq-default-user"))
    assert_rejected(tree, "Deployment order-api: RABBITMQ_USER from flashsale-rabbitmq-default-user")


def test_relaxed_binding_accepts_canonical_and_legacy_forms() -> None:
    assert relaxed_env_names("app.worker.batch-size") == {"APP_WORKER_BATCHSIZE", "APP_WORKER_BATCH_SIZE"}


# Issue 28: the second sale-day review. Each finding fixed has a check that fails when it regresses.

SALE = PROD + "/sale-capacity.env"


def test_rejects_a_broker_without_a_disruption_budget(tree: Path) -> None:
    text = (tree / PROD / "rabbitmq-cluster.yaml").read_text()
    start = text.index("---\n# The operator makes no disruption budget")
    end = text.index("---", start + 4)
    (tree / PROD / "rabbitmq-cluster.yaml").write_text(text[:start] + text[end:])
    assert_rejected(tree, "RabbitmqCluster flashsale-rabbitmq: no PodDisruptionBudget keeping a majority")


def test_rejects_a_sale_window_that_renders_more_than_scaled_objects(tree: Path) -> None:
    (tree / PROD / "sale-window/broker.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    edit(tree / PROD / "sale-window/kustomization.yaml", "  - ../../../base/scaling\n", "  - ../../../base/scaling\n  - broker.yaml\n")
    assert_rejected(tree, "sale-window: renders ['ConfigMap', 'ScaledObject'], not ScaledObjects only")


def test_rejects_a_release_whose_images_are_not_pinned_to_digests() -> None:
    # The committed files carry tags only (no registry here to look digests up): a release fails until
    # k8s/pin-images.sh has run, on every image field, the operators' included.
    assert_rejected(ROOT, "prod: RedisReplication flashsale-redis redisExporter.image: image "
                    "'quay.io/opstree/redis-exporter:v1.44.0' has no digest",
                    "prod: Deployment order-api template.spec.containers[0].image: image 'flashsale/order-api:0.1.0' has no digest",
                    "prod: Cluster flashsale-db imageName", options=("--release",))


def test_accepts_a_release_pinned_by_pin_images(tree: Path, tmp_path: Path) -> None:
    # A stand-in for the registry: each reference's own hash as its digest, in this temporary tree only.
    fake = tmp_path / "fake-digest"
    fake.write_text('#!/bin/sh\nprintf "sha256:%s\\n" "$(printf %s "$1" | sha256sum | cut -c1-64)"\n')
    fake.chmod(0o755)
    pinned = subprocess.run(["bash", str(tree / "k8s/pin-images.sh"), str(tree)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "DIGEST_CMD": str(fake)})
    assert pinned.returncode == 0, pinned.stderr
    assert "quay.io/opstree/redis-sentinel:v7.0.15@sha256:" in pinned.stderr
    result = validate(tree, "--release")
    assert result.returncode == 0, result.stdout + result.stderr


# Issue 40: the third sale-day review. Each check below failed on the tree at 0e66a3b (or did not exist).


def test_the_declared_sale_is_at_least_the_readmes_crowd() -> None:
    from sale_plan import plan, read_env

    sale = plan(read_env(ROOT / SALE))
    assert sale.orders_per_s >= 1000 and sale.refusals_per_s >= 49000


def test_rejects_a_pooler_without_a_disruption_budget(tree: Path) -> None:
    text = (tree / PROD / "postgres-cluster.yaml").read_text()
    (tree / PROD / "postgres-cluster.yaml").write_text(text[:text.index("---\n# CloudNativePG makes no budget for a Pooler")])
    assert_rejected(tree, "prod: Pooler flashsale-db-pooler-rw: no PodDisruptionBudget")


def test_rejects_applications_that_reach_sentinel_through_one_service(tree: Path) -> None:
    text = (tree / PROD / "kustomization.yaml").read_text()
    start = text.index("      - REDIS_SENTINEL_NODES=")
    end = text.index("\n", start)
    (tree / PROD / "kustomization.yaml").write_text(text[:start] + "      - REDIS_SENTINEL_NODES=flashsale-redis-sentinel:26379"
                                                   + text[end:])
    assert_rejected(tree, "RedisSentinel flashsale-redis: REDIS_SENTINEL_NODES 'flashsale-redis-sentinel:26379' does not "
                    "list its 3 Sentinels by pod")


def test_rejects_a_rollout_without_a_purchase_success_gate(tree: Path) -> None:
    text = (tree / "k8s/base/order-api.yaml").read_text()
    start = text.index("  annotations:\n    # The release's purchase-success gate")
    end = text.index("spec:\n  # No replicas")
    (tree / "k8s/base/order-api.yaml").write_text(text[:start] + text[end:])
    assert_rejected(tree, "prod: Deployment order-api: no purchase-success gate (flashsale.dev/canary-gate-query)")


# The broken trees: each case breaks one thing in a copy (a file relative to the root, the text it replaces
# and the text it puts there; one or more) and names what the validator must say about it.
REJECTED = [
    pytest.param(
        [("k8s/base/order-api.yaml", "          readinessProbe:", "          readynessProbe:")],
        ["Deployment order-api is invalid", "readynessProbe"],
        id="rejects_an_unknown_field_in_a_deployment",
    ),
    pytest.param(
        [("k8s/base/scaling/scaled-objects.yaml", "  minReplicaCount: 2", "  minReplicasCount: 2")],
        ["ScaledObject order-api is invalid", "minReplicasCount"],
        id="rejects_a_typo_in_the_scaled_object",
    ),
    pytest.param(
        [("k8s/base/scaling/scaled-objects.yaml", "        queueName: flashsale.orders.requested\n", "")],
        ["ScaledObject order-worker is invalid", "queueName"],
        id="rejects_a_rabbitmq_trigger_without_a_queue",
    ),
    pytest.param(
        [("k8s/overlays/prod/postgres-cluster.yaml", "  instances: 3", "  instance: 3")],
        ["Cluster flashsale-db is invalid"],
        id="rejects_a_typo_in_the_postgres_cluster",
    ),
    pytest.param(
        [("k8s/overlays/prod/rabbitmq-cluster.yaml", "  persistence:", "  persistance:")],
        ["RabbitmqCluster flashsale-rabbitmq is invalid"],
        id="rejects_a_typo_in_the_rabbitmq_cluster",
    ),
    pytest.param(
        [("k8s/base/config.env", "DB_POOL_SIZE=4", "DB_POOL_SIZE=4\nDB_POOL_MAX=32")],
        ["order-api gets DB_POOL_MAX, which binds to no property"],
        id="rejects_a_config_map_variable_that_binds_to_no_property",
    ),
    pytest.param(
        [
            ("docker-compose.yml",
             "      APP_WORKER_PREFETCH:",
             "      APP_MODE_DEFAULT: ASYNC\n      APP_WORKER_PREFETCH:"),
        ],
        ["docker-compose.yml services.order-worker: order-worker gets APP_MODE_DEFAULT"],
        id="rejects_an_api_setting_given_to_the_worker",
    ),
    pytest.param(
        [("docker-compose.yml", '"127.0.0.1:${API_PORT:-8080}:8080"', '"127.0.0.1:${API_PORT:-8080}:8090"')],
        ["services.order-api: container ports [8090] but order-api listens on 8080"],
        id="rejects_a_published_port_the_api_does_not_listen_on",
    ),
    pytest.param(
        [("docker-compose.yml", "condition: service_healthy", "condition: service_healty")],
        ["'service_healty' is not one of"],
        id="rejects_a_compose_file_outside_the_compose_spec",
    ),
    pytest.param(
        [("k8s/base/order-worker.yaml", "path: /actuator/health/readiness", "path: /actuator/health")],
        ["Deployment order-worker: readinessProbe is not an httpGet of /actuator/health/readiness"],
        id="rejects_a_readiness_probe_on_the_wrong_path",
    ),
    pytest.param(
        [("k8s/base/order-worker.yaml", "terminationGracePeriodSeconds: 45", "terminationGracePeriodSeconds: 20")],
        ["Deployment order-worker: terminationGracePeriodSeconds 20 does not outlast"],
        id="rejects_a_grace_period_shorter_than_the_shutdown_phase",
    ),
    pytest.param(
        [("k8s/base/kustomization.yaml", "DB_PASSWORD=change-me", "DB_PASSWORD=s3cr3t-prod-password")],
        ["key DB_PASSWORD holds a value without the 'change-me' placeholder"],
        id="rejects_a_committed_secret",
    ),
    pytest.param(
        [
            ("k8s/base/scaling/scaled-objects.yaml",
             "queueName: flashsale.orders.requested",
             "queueName: flashsale.orders.retry"),
        ],
        ["watches queue 'flashsale.orders.retry', the worker consumes 'flashsale.orders.requested'"],
        id="rejects_a_scaled_object_watching_another_queue",
    ),
    pytest.param(
        [("docker-compose.yml", 'MODULE: order-worker\n        PORT: "8081"', 'MODULE: order-worker\n        PORT: "8080"')],
        ["docker-compose.yml services.order-worker: builds the image with PORT=8080 but order-worker listens on 8081"],
        id="rejects_an_image_built_for_another_port",
    ),
    pytest.param(
        [("Dockerfile", "EXPOSE ${PORT}", "EXPOSE 8080")],
        ["Dockerfile: EXPOSE ['8080'], not the PORT build argument"],
        id="rejects_a_dockerfile_exposing_a_fixed_port",
    ),
    pytest.param(
        [("docker-compose.yml", "MODULE: order-api\n", "MODULE: order-worker\n")],
        ["docker-compose.yml services.migrate: builds the image with MODULE=order-worker, not order-api"],
        id="rejects_an_image_built_from_another_module",
    ),
    pytest.param(
        [(COMMON_YML, "include: readinessState", "include: readinessState,db,redis,rabbit")],
        ["order-api: readiness group includes shared dependencies ['db', 'rabbit', 'redis']"],
        id="rejects_a_readiness_group_with_shared_dependencies",
    ),
    pytest.param(
        [("k8s/base/order-api.yaml", "  unhealthyPodEvictionPolicy: AlwaysAllow\n", "")],
        ["PodDisruptionBudget order-api: NotReady pods use up the budget"],
        id="rejects_a_disruption_budget_that_counts_not_ready_pods",
    ),
    pytest.param(
        [(Path(PROD) / "postgres-cluster.yaml", "dataDurability: required", "dataDurability: preferred")],
        ["Cluster flashsale-db: asynchronous replication: a failover can lose orders already answered 201"],
        id="rejects_replication_that_can_lose_a_confirmed_order",
    ),
    pytest.param(
        [
            (Path(PROD) / "postgres-cluster.yaml",
             "primaryUpdateStrategy: supervised",
             "primaryUpdateStrategy: unsupervised"),
        ],
        ["primaryUpdateStrategy is not supervised"],
        id="rejects_unsupervised_primary_updates",
    ),
    pytest.param(
        [(Path(PROD) / "kustomization.yaml", "DB_HOST=flashsale-db-pooler-rw", "DB_HOST=flashsale-db-rw")],
        ["prod: DB_HOST 'flashsale-db-rw' bypasses the Pooler"],
        id="rejects_applications_that_bypass_the_pooler",
    ),
    pytest.param(
        [("k8s/base/scaling/scaled-objects.yaml", "maxReplicaCount: 6", "maxReplicaCount: 20")],
        ["ScaledObject order-worker: up to 20 consumers writing batches on one hot stock row"],
        id="rejects_more_workers_than_the_hot_row_takes",
    ),
    pytest.param(
        [
            ("k8s/base/order-api.yaml",
             '- name: APP_SCHEMA_MIGRATE\n              value: "false"',
             '- name: APP_SCHEMA_MIGRATE\n              value: "true"'),
        ],
        ["Deployment order-api: the application container still migrates"],
        id="rejects_an_api_that_migrates_inside_its_start_up",
    ),
    pytest.param(
        [
            ("k8s/base/migrate-job.yaml",
             "dev.flashsale.api.schema.SchemaMigration",
             "dev.flashsale.api.OrderApiApplication"),
        ],
        ["dev: no Job runs dev.flashsale.api.schema.SchemaMigration", "prod: no Job runs"],
        id="rejects_a_release_without_the_migration_job",
    ),
    pytest.param(
        [
            ("k8s/base/order-api.yaml",
             "      containers:\n",
             "      initContainers:\n        - name: migrate\n          image: flashsale/order-api:latest\n"
         '          command: ["timeout", "300", "java", "-cp", "/app/order-api.jar", "dev.flashsale.api.schema.SchemaMigration"]\n'
         "      containers:\n"),
        ],
        ["Deployment order-api: init container migrate runs dev.flashsale.api.schema.SchemaMigration"],
        id="rejects_an_init_container_that_migrates_at_every_pod_start",
    ),
    pytest.param(
        [
            ("k8s/base/order-worker.yaml",
             "- name: APP_SCHEMA_WAIT_TIMEOUT\n              value: 4m",
             "- name: APP_SCHEMA_WAIT_TIMEOUT\n              value: 10m"),
        ],
        ["Deployment order-worker: app.schema.wait-timeout 10m is not within its startup probe's 300 s"],
        id="rejects_a_schema_wait_the_startup_probe_cuts_short",
    ),
    pytest.param(
        [
            ("k8s/base/order-api.yaml",
             "            - name: APP_SCHEMA_MIGRATE\n",
             '            - name: SPRING_FLYWAY_ENABLED\n              value: "false"\n            - name: APP_SCHEMA_MIGRATE\n'),
        ],
        ["Deployment order-api: SPRING_FLYWAY_ENABLED=false"],
        id="rejects_an_api_that_starts_on_any_schema",
    ),
    pytest.param(
        [
            ("docker-compose.yml",
             "      # The schema comes from the migrate service, not from the API: workers start without waiting for it.\n"
         "      migrate:",
             "      order-api:"),
        ],
        ["services.order-worker: does not wait for the migrate service", "services.order-worker: waits for order-api"],
        id="rejects_compose_workers_that_wait_for_the_api_instead_of_the_migration",
    ),
    pytest.param(
        [("k8s/base/order-api.yaml", "-Xms512m -Xmx512m", "-Xms768m -Xmx768m")],
        ["Deployment order-api: memory limit 1024 MiB leaves 256 MiB beside the heap"],
        id="rejects_a_heap_that_leaves_too_little_of_the_limit",
    ),
    pytest.param(
        [("k8s/base/order-worker.yaml", "-XX:+UseG1GC ", "")],
        ["Deployment order-worker: JAVA_TOOL_OPTIONS chooses no collector"],
        id="rejects_a_jvm_left_to_pick_its_collector",
    ),
    pytest.param(
        [
            ("k8s/base/order-api.yaml",
             '            requests:\n              cpu: "2"\n              memory: 1Gi',
             '            requests:\n              cpu: 250m\n              memory: 1Gi'),
        ],
        ["Deployment order-api: CPU request 0.25 is less than half its limit 2"],
        id="rejects_a_cpu_request_far_below_use",
    ),
    pytest.param(
        [("k8s/base/scaling/scaled-objects.yaml", "behavior: currentReplicasIfHigher", "behavior: static")],
        ["ScaledObject order-worker: fallback shrinks a busy fleet"],
        id="rejects_a_fallback_that_shrinks_a_busy_worker_fleet",
    ),
    pytest.param(
        [
            (Path(PROD) / "sale-window/kustomization.yaml",
             "  - target:\n      group: keda.sh\n      kind: ScaledObject\n      name: order-api\n    path: sale-window-api.yaml\n",
             ""),
        ],
        ["prod: ScaledObject order-api: no cron trigger"],
        id="rejects_prod_without_pre_sale_scaling",
    ),
    pytest.param(
        [("k8s/base/order-api.yaml", "  minReadySeconds: 30\n", "")],
        ["Deployment order-api: no minReadySeconds"],
        id="rejects_pods_that_count_as_available_while_cold",
    ),
    pytest.param(
        [
            ("k8s/base/order-api.yaml",
             "            - name: APP_MODE_DEFAULT\n",
             "            - name: SPRING_PROFILES_ACTIVE\n              value: local\n            - name: APP_MODE_DEFAULT\n"),
        ],
        ["Deployment order-api: the local profile accepts the committed placeholder secrets"],
        id="rejects_the_local_profile_in_a_deployment",
    ),
    pytest.param(
        [("k8s/dependencies/redis/redis.yaml", "value: 320mb", "value: 500mb")],
        ["dev: StatefulSet redis: maxmemory 500mb is not set below 80% of the 512 MiB limit"],
        id="rejects_a_redis_maxmemory_near_its_limit",
    ),
    pytest.param(
        [("k8s/dependencies/redis/redis.yaml", "      priorityClassName: flashsale-data\n", "")],
        ["StatefulSet redis: no PriorityClass"],
        id="rejects_redis_without_a_priority_class",
    ),
    pytest.param(
        [("k8s/base/order-api.yaml", '            - name: MANAGEMENT_PORT\n              value: "8082"\n', "")],
        ["Deployment order-api: actuator (metrics, health) on the public port 8080"],
        id="rejects_metrics_on_the_public_port",
    ),
    pytest.param(
        [(Path(PROD) / "release-images/kustomization.yaml", '    newTag: "0.1.0"', '    newTag: "latest"')],
        ["prod: Deployment order-api order-api: image 'flashsale/order-api:latest' is not an immutable tag"],
        id="rejects_a_latest_image",
    ),
    pytest.param(
        [
            (Path(PROD) / "rabbitmq-cluster.yaml",
             "image: rabbitmq:4.1.4-management",
             "image: rabbitmq:3.13.7-management"),
        ],
        ["RabbitmqCluster flashsale-rabbitmq image: RabbitMQ 3.x is out of support"],
        id="rejects_an_unsupported_rabbitmq",
    ),
    pytest.param(
        [
            ("k8s/base/network-policies.yaml",
             "    - ports:\n        - port: 53",
             "    - to:\n        - podSelector:\n            matchLabels:\n              k8s-app: kube-dns\n"
         "      ports:\n        - port: 53"),
        ],
        ["DNS egress is limited to kube-dns pods"],
        id="rejects_a_dns_rule_that_misses_node_local_dns",
    ),
    pytest.param(
        [("k8s/base/kustomization.yaml", '(docs/operations.md#secrets;', "(k8s/README-deployment.md;")],
        ["k8s/base/kustomization.yaml: refers to k8s/README-deployment.md, which does not exist"],
        id="rejects_a_reference_to_a_missing_document",
    ),
    pytest.param(
        [("k8s/dependencies/redis/redis.yaml", '"--appendfsync", "everysec", ', "")],
        ["dev: StatefulSet redis: no append-only file fsynced everysec or always"],
        id="rejects_redis_without_an_fsynced_append_only_file",
    ),
    pytest.param(
        [(Path(PROD) / "kustomization.yaml", "../../dependencies/redis-sentinel", "../../dependencies/redis")],
        ["prod: Redis has no replicas with Sentinel failover"],
        id="rejects_prod_redis_without_sentinel_failover",
    ),
    pytest.param(
        [(Path(PROD) / "kustomization.yaml", "      - SPRING_PROFILES_ACTIVE=redis-sentinel\n", "")],
        ["RedisSentinel flashsale-redis: the applications do not run the redis-sentinel profile"],
        id="rejects_applications_that_do_not_follow_sentinel",
    ),
    pytest.param(
        [(Path(PROD) / "kustomization.yaml", "REDIS_SENTINEL_MASTER=flashsale", "REDIS_SENTINEL_MASTER=mymaster")],
        ["REDIS_SENTINEL_MASTER is 'mymaster', Sentinel monitors 'flashsale'"],
        id="rejects_applications_asking_sentinel_for_another_master",
    ),
    pytest.param(
        [
            ("k8s/dependencies/redis-sentinel/redis-replication.yaml",
             "maxmemory-policy noeviction",
             "maxmemory-policy allkeys-lru"),
        ],
        ["RedisReplication flashsale-redis: maxmemory-policy is not noeviction"],
        id="rejects_a_replicated_redis_that_evicts",
    ),
    # Issue 16, point 5 (cold JVMs): the warm-up gates readiness, and the images start from an AOT cache.
    pytest.param(
        [("k8s/base/order-api.yaml", '            - name: APP_WARMUP_ENABLED\n              value: "true"\n', "")],
        [
            "prod: Deployment order-api: no warm-up (app.warmup.enabled is not true)",
            "dev: Deployment order-api: no warm-up",
        ],
        id="rejects_an_api_deployment_without_the_warm_up",
    ),
    pytest.param(
        [("docker-compose.yml", '      APP_WARMUP_ENABLED: "true"\n', '      APP_WARMUP_ENABLED: "false"\n')],
        ["docker-compose.yml services.order-api: no warm-up"],
        id="rejects_a_compose_api_without_the_warm_up",
    ),
    pytest.param(
        [("Dockerfile", '"-XX:AOTCache=$MODULE.aot" ', "")],
        ["Dockerfile: the entry point does not run the $MODULE jar with -XX:AOTCache"],
        id="rejects_an_image_that_starts_without_its_aot_cache",
    ),
    pytest.param(
        [("Dockerfile", '-XX:AOTCacheOutput="$MODULE.aot"', "-XX:+UseG1GC")],
        ["Dockerfile: no AOT cache training run"],
        id="rejects_an_image_without_an_aot_training_run",
    ),
    pytest.param(
        [
            ("k8s/base/migrate-job.yaml",
             '"-cp", "/app/order-api.jar"',
             '"-cp", "/app/BOOT-INF/classes:/app/BOOT-INF/lib/*"'),
        ],
        ["Job order-api-migrate container migrate: class path '/app/BOOT-INF/classes:/app/BOOT-INF/lib/*'"],
        id="rejects_a_migration_class_path_the_image_does_not_have",
    ),
    pytest.param(
        [
            ("k8s/components/monitoring/pod-monitors.yaml",
             "  name: order-api\n  labels:\n    release: prometheus\n",
             "  name: order-api\n"),
        ],
        ["prod: PodMonitor order-api lacks the label {'release': 'prometheus'}"],
        id="rejects_pod_monitors_the_prometheus_operator_ignores",
    ),
    pytest.param(
        [
            ("k8s/base/network-policies.yaml",
             "        - port: 5672\n          protocol: TCP\n        - port: 15672\n",
             "        - port: 5672\n"),
        ],
        ["prod: NetworkPolicy for order-api: egress to the broker's management API (port 15672"],
        id="rejects_an_api_that_cannot_reach_the_management_api",
    ),
    pytest.param(
        [(Path(PROD) / "rabbitmq-cluster.yaml", "  tags: [management]\n", "")],
        ["prod: User flashsale-api (order-api's broker user) has no management tag"],
        id="rejects_an_api_broker_user_without_the_management_tag",
    ),
    pytest.param(
        [(Path(PROD) / "kustomization.yaml", "  - data-tier-monitors.yaml\n", "")],
        ["prod: nothing scrapes Cluster flashsale-db's instances", "nothing scrapes RabbitmqCluster"],
        id="rejects_a_data_tier_nobody_scrapes",
    ),
    pytest.param(
        [(Path(PROD) / "sale-window/sale-window-api.yaml", "start: 30 11 4 12 *", "start: 30 11 * * *")],
        [
            "ScaledObject order-api: sale window '30 11 * * *' to '30 13 4 12 *'",
            "a cron must be pinned to the sale's date",
        ],
        id="rejects_a_sale_window_not_pinned_to_the_sale",
    ),
    pytest.param(
        [(SALE, "REFUSAL_SHARE=0.98", "REFUSAL_SHARE=0.97")],
        ["ScaledObject order-worker: sale window holds 3 pods, the sale plan derives 4"],
        id="rejects_replicas_the_plan_does_not_derive",
    ),
    # Refusals from memory cost Redis 0.005 ms (issue 31): the README's crowd keeps one master 0.45 busy; 60,000
    # attempts (1,200 orders, 58,800 refusals) 0.54.
    pytest.param(
        [(SALE, "PEAK_ARRIVALS_PER_S=50000", "PEAK_ARRIVALS_PER_S=60000")],
        ["of Redis's one command thread, above the bound 0.5"],
        id="rejects_a_sale_that_one_redis_master_cannot_take",
    ),
    pytest.param(
        [
            ("k8s/base/order-api.yaml",
             '            limits:\n              cpu: "2"\n              memory: 1Gi',
             '            limits:\n              cpu: "4"\n              memory: 1Gi'),
        ],
        ["Deployment order-api container order-api: cpu request 2 != limit 4: not Guaranteed QoS"],
        id="rejects_a_burstable_api",
    ),
    pytest.param(
        [
            ("k8s/dependencies/redis-sentinel/redis-replication.yaml",
             "          labelSelector:\n            matchLabels:\n              app: flashsale-redis-sentinel\n",
             "          labelSelector:\n            matchLabels:\n              app: flashsale-redis-sentinel-x\n"),
        ],
        ["RedisSentinel flashsale-redis: no required anti-affinity per node"],
        id="rejects_sentinels_that_may_share_a_node",
    ),
    pytest.param(
        [("k8s/base/order-api.yaml", '        karpenter.sh/do-not-disrupt: "true"\n', "")],
        ["prod: Deployment order-api: node autoscalers may evict its warm pods mid-sale"],
        id="rejects_app_pods_a_node_autoscaler_may_evict",
    ),
    pytest.param(
        [(Path(PROD) / "rabbitmq-cluster.yaml", "    max-length: 60000\n", "")],
        [
            "Policy flashsale-orders-requested: max-length None, the sale plan bounds flashsale.orders.requested at 60000",
        ],
        id="rejects_an_unbounded_order_queue",
    ),
    pytest.param(
        [
            (Path(PROD) / "rabbitmq-cluster.yaml",
             '      cpu: "2"\n      memory: 2Gi',
             '      cpu: "1"\n      memory: 2Gi'),
        ],
        ["RabbitmqCluster flashsale-rabbitmq: CPU request 1, below the operator's production guidance of 2"],
        id="rejects_a_broker_below_the_operators_guidance",
    ),
    pytest.param(
        [
            ("k8s/base/order-worker.yaml",
             '            - name: APP_WORKER_BATCH_SIZE\n',
             '            - name: APP_WORKER_CONCURRENCY\n              value: "2"\n            - name: APP_WORKER_BATCH_SIZE\n'),
        ],
        ["Deployment order-worker: 2 consumers per pod override the measured default of 1"],
        id="rejects_workers_that_override_the_measured_concurrency",
    ),
    pytest.param(
        [
            (Path(PROD) / "sale-window/kustomization.yaml",
             "  - target:\n      group: keda.sh\n      kind: ScaledObject\n      name: order-worker\n    path: worker-orders.yaml\n",
             ""),
        ],
        ["ScaledObject order-worker: no trigger on the accepted orders' rate"],
        id="rejects_workers_scaled_on_messages_only",
    ),
    pytest.param(
        [(Path(PROD) / "edge.yaml", "      timeouts:\n        request: 20s\n", "")],
        ["HTTPRoute order-api: rule without a request timeout"],
        id="rejects_an_edge_without_a_request_timeout",
    ),
    pytest.param(
        [
            ("k8s/dependencies/redis-sentinel/redis-replication.yaml",
             "image: quay.io/opstree/redis-exporter:v1.44.0",
             "image: quay.io/opstree/redis-exporter:latest"),
        ],
        ["RedisReplication flashsale-redis redisExporter.image: image 'quay.io/opstree/redis-exporter:latest'"],
        id="rejects_a_floating_image_in_an_operator_field",
    ),
    pytest.param(
        [(Path(PROD) / "kustomization.yaml", "  - data-tier-network-policies.yaml\n", "")],
        ["prod: no NetworkPolicy admits traffic to the rabbitmq pods"],
        id="rejects_a_broker_open_to_the_whole_cluster",
    ),
    pytest.param(
        [
            ("k8s/dependencies/redis-sentinel/redis-replication.yaml",
             "image: quay.io/opstree/redis-sentinel:v7.0.15",
             "image: quay.io/opstree/redis-sentinel:v7.4.6"),
            ("docker-compose.yml", "image: redis:7.0.15", "image: redis:7.4.6"),
        ],
        [
            "redis-replication.yaml: image quay.io/opstree/redis-sentinel:v7.4.6 is not Redis 7.0.15",
            "docker-compose.yml: image redis:7.4.6 is not Redis 7.0.15",
        ],
        id="rejects_a_redis_version_other_than_the_one_services_sh_installs",
    ),
    pytest.param(
        [(Path(PROD) / "sale-window/sale-window-api.yaml", 'desiredReplicas: "34"', 'desiredReplicas: "3"')],
        ["ScaledObject order-api: sale window holds 3 pods, the sale plan derives 34"],
        id="rejects_a_pre_warm_the_plan_does_not_derive",
    ),
    pytest.param(
        [(Path(PROD) / "sale-window/kustomization.yaml", "        value: 51\n", "        value: 10\n")],
        ["ScaledObject order-api: maxReplicaCount 10, the sale plan derives 51"],
        id="rejects_an_api_maximum_the_plan_does_not_derive",
    ),
    pytest.param(
        [("k8s/base/scaling/scaled-objects.yaml", '        value: "50"', '        value: "70"')],
        ["ScaledObject order-api: CPU target [70.0] %, the sale plan sizes the fleet for 50 %"],
        id="rejects_an_autoscaler_target_other_than_the_plans",
    ),
    pytest.param(
        [(SALE, "ORDERS_PER_MESSAGE_MAX=100", "ORDERS_PER_MESSAGE_MAX=1")],
        ["ORDERS_PER_MESSAGE_MAX 1 is not order-api's app.purchase.async.max-batch 100"],
        id="rejects_a_queue_bound_whose_message_size_is_not_the_apis_batch",
    ),
    pytest.param(
        [(Path(PROD) / "postgres-cluster.yaml", 'max_client_conn: "400"', 'max_client_conn: "200"')],
        [
            "Pooler flashsale-db-pooler-rw: 57 pods at most x DB_POOL_SIZE 4 = 228 client connections, "
                    "above max_client_conn 200",
        ],
        id="rejects_more_pooled_connections_than_the_pooler_takes",
    ),
    pytest.param(
        [(Path(PROD) / "postgres-cluster.yaml", "    spec:\n      priorityClassName: flashsale-data\n", "    spec:\n")],
        ["prod: Pooler flashsale-db-pooler-rw: priority None, not flashsale-data"],
        id="rejects_a_pooler_an_application_scale_out_can_preempt",
    ),
    pytest.param(
        [
            (Path(PROD) / "postgres-cluster.yaml",
             "          requiredDuringSchedulingIgnoredDuringExecution:\n"
         "            - topologyKey: kubernetes.io/hostname\n",
             "          requiredDuringSchedulingIgnoredDuringExecution:\n            - topologyKey: topology.kubernetes.io/zone\n"),
        ],
        ["prod: Pooler flashsale-db-pooler-rw: no required anti-affinity per node"],
        id="rejects_a_pooler_that_may_share_a_node",
    ),
    pytest.param(
        [
            (Path(PROD) / "postgres-cluster.yaml",
             "            limits:\n              cpu: 500m\n",
             "            limits:\n              cpu: \"1\"\n"),
        ],
        ["prod: Pooler flashsale-db-pooler-rw: requests", "not Guaranteed QoS"],
        id="rejects_a_burstable_pooler",
    ),
    pytest.param(
        [
            ("k8s/dependencies/redis-sentinel/redis-replication.yaml",
             "  annotations:\n    cluster-autoscaler.kubernetes.io/safe-to-evict: \"false\"\n    karpenter.sh/do-not-disrupt: \"true\"\n",
             ""),
        ],
        ["prod: RedisReplication flashsale-redis: node autoscalers may evict its pods mid-sale"],
        id="rejects_a_redis_master_a_node_autoscaler_may_evict",
    ),
    pytest.param(
        [(Path(PROD) / "postgres-cluster.yaml", "    podAntiAffinityType: required\n", "")],
        ["prod: Cluster flashsale-db: no required anti-affinity per node"],
        id="rejects_postgres_instances_that_may_share_a_node",
    ),
    pytest.param(
        [
            ("k8s/README.md",
             "   Remove the label after the sale (step 6).",
             "   Remove the label after the sale (step 6).\n   `kubectl -n redis-operator scale deploy redis-operator --replicas=0`"),
        ],
        [
            "k8s/README.md: runbook step `kubectl -n redis-operator scale deploy redis-operator --replicas=0` "
                    "removes an operator the data tier depends on",
        ],
        id="rejects_a_runbook_that_scales_an_operator_to_zero",
    ),
    pytest.param(
        [(Path(PROD) / "edge.yaml", "        request: 20s", "        request: 10s")],
        [
            "HTTPRoute order-api: rule without a request timeout above the API's longest answer, 18 s "
                    "(line max-wait 3 s + ASYNC confirm-timeout + max-prefer-wait 15 s)",
        ],
        id="rejects_an_edge_that_cuts_the_longest_answer",
    ),
    # A longer Prefer: wait cap makes the committed 20 s too short: the bound is derived, not written down.
    pytest.param(
        [
            ("order-api/src/main/java/dev/flashsale/api/purchase/PurchaseProperties.java",
             '@DefaultValue("10s") Duration maxPreferWait',
             '@DefaultValue("30s") Duration maxPreferWait'),
        ],
        ["above the API's longest answer, 38 s"],
        id="the_edge_follows_the_apis_longest_answer",
    ),
    # Counts 503 (and 51x) as success: a release that refuses every purchase with 503 would pass.
    pytest.param(
        [("k8s/base/order-api.yaml", 'status!~"5.."', 'status!~"50[0-24-9]"')],
        ["prod: Deployment order-api: the canary gate does not read the canary pod's purchase answers"],
        id="rejects_a_canary_gate_that_ignores_503s",
    ),
    pytest.param(
        [("k8s/README.md", "22.29 cores at the peak -> 34 pods", "0.66 cores at the peak -> 3 pods")],
        ["k8s/README.md: the quoted sale plan differs from python3 deploy-tests/sale_plan.py's output"],
        id="rejects_a_stale_plan_quoted_in_the_runbook",
    ),
    pytest.param(
        [
            ("docs/operations.md",
             "each worker pod holds up to 250 of those",
             "each worker pod holds up to 500 of those"),
        ],
        ["docs/operations.md: states ('500',) where the manifests and the sale plan hold ('250',)"],
        id="rejects_a_stale_number_in_the_operations_page",
    ),
    pytest.param(
        [
            ("docs/operations.md",
             "CPU: the API requests 2 and is limited to 2 core(s)",
             "CPU: the API requests 1 and is limited to 2 core(s)"),
        ],
        [
            "docs/operations.md: states ('1', '2', '1', '1') where the manifests and the sale plan hold "
                    "('2', '2', '1', '1')",
        ],
        id="rejects_a_stale_cpu_size_in_the_operations_page",
    ),
]


@pytest.mark.parametrize(("edits", "expected"), REJECTED)
def test_a_broken_tree_is_rejected(tree: Path, edits: list[tuple[str | Path, str, str]], expected: list[str]) -> None:
    for relative, old, new in edits:
        edit(tree / relative, old, new)
    assert_rejected(tree, *expected)
