"""Cross-checks between the deployment files and the applications' configuration.

Schema validation (compose-spec, Kubernetes, CRDs) says each file is well formed; these checks say
the files fit the applications: every variable given to an application container binds to a
property the application has, ports and probe paths are the ones the applications serve, shutdown
grace periods outlast Spring's shutdown phases, KEDA watches the queue the worker consumes, and no
committed Secret holds anything but a placeholder. The sale-day checks (issue 16) add what a sale needs:
readiness on the instance's own state, synchronous replication, backups and a pooler, migrations before
the applications, JVMs sized from a measured footprint, pre-sale scaling, a warm-up before readiness and
an AOT cache in the images, fail-closed secrets, Redis limits, metrics on a management port, pinned images.

    python3 deploy-tests/deploy_checks.py ROOT RENDERED.yaml... [--sale-window SALE_WINDOW.yaml] [--release]

ROOT is the repository; each RENDERED.yaml is the output of `kustomize build` for one overlay, and
SALE_WINDOW.yaml that of k8s/overlays/prod/sale-window. --release: the prod overlay is about to be
applied, every image of it must name its digest (k8s/pin-images.sh). The second review's checks (issue 28) are in
sale_day_checks.py.
Exits 1 and prints every problem found when a check fails.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path


from images import image_is_pinned
from manifests import APPS, container_of, deployed, env_of, load_all_yaml, load_yaml, named_config
from network_policies import egress_ports, rule_ports
from sale_day_checks import SaleDayChecks


COMMON_MODULE = "common"
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_.\-]+)(?::([^}]*))?\}")
# Read by the JVM or by Spring itself rather than through a key in the application's files.
NON_PROPERTY_VARIABLES = {"JAVA_TOOL_OPTIONS", "SPRING_PROFILES_ACTIVE"}
SECRET_PLACEHOLDER = "change-me"
# Secrets an operator generates in the cluster (CloudNativePG <cluster>-app, the RabbitMQ Messaging Topology
# Operator's <user>-user-credentials): referenced by the manifests, never part of them.
OPERATOR_SECRET_SUFFIXES = ("-app", "-user-credentials")
LIVENESS_PATH = "/actuator/health/liveness"
READINESS_PATH = "/actuator/health/readiness"
PROMETHEUS_PATH = "/actuator/prometheus"
# Health indicators about the instance itself; anything else in a readiness group is a shared dependency.
LOCAL_HEALTH_INDICATORS = {"readinessState", "livenessState", "ping", "diskSpace"}
# The API image's entry point that migrates and exits (the migration Job, the compose service).
MIGRATION_MAIN = "dev.flashsale.api.schema.SchemaMigration"
# Committed outside the heap, measured under load on JDK 25 with G1 (NMT: code cache, metaspace, class
# space, GC structures, symbols, threads) plus the compiler arenas' peak; docs/operations.md#jvm-sizing.
MEASURED_NON_HEAP_MIB = {"order-api": 256 + 54, "order-worker": 200 + 50}
# Concurrent batch writers on one sale's stock row beyond which more workers only queue on its lock.
HOT_ROW_WRITERS = 12
# 5. Cold starts: the property that makes the API rehearse its purchase path before it reports ready.
WARMUP_PROPERTY = "app.warmup.enabled"


@dataclass
class AppConfig:
    """What one application reads: its property keys (flattened) and their raw values."""

    name: str
    properties: dict[str, object] = field(default_factory=dict)

    def env_names(self) -> set[str]:
        names = set(NON_PROPERTY_VARIABLES)
        for key, value in self.properties.items():
            names |= relaxed_env_names(key)
            for match in PLACEHOLDER.finditer(str(value)):
                if match.group(1).upper() == match.group(1):
                    names.add(match.group(1))
        return names

    def resolve(self, key: str, env: dict[str, str]) -> str | None:
        """The value of a property given the container's environment (placeholders resolved)."""
        for name in relaxed_env_names(key):
            if name in env:
                return env[name]
        if key not in self.properties:
            return None

        def substitute(match: re.Match[str]) -> str:
            variable, default = match.group(1), match.group(2)
            return env.get(variable, default if default is not None else "")

        return PLACEHOLDER.sub(substitute, str(self.properties[key]))

    def placeholder_default(self, variable: str) -> str | None:
        for value in self.properties.values():
            for match in PLACEHOLDER.finditer(str(value)):
                if match.group(1) == variable:
                    return match.group(2)
        return None


def relaxed_env_names(key: str) -> set[str]:
    """Environment variable names Spring Boot binds to a property key.

    Canonical form: dots to underscores, dashes removed (app.worker.batch-size ->
    APP_WORKER_BATCHSIZE); the legacy form Spring still accepts turns dashes into underscores
    (APP_WORKER_BATCH_SIZE).
    """
    canonical = key.replace(".", "_").replace("-", "").upper()
    legacy = key.replace(".", "_").replace("-", "_").upper()
    return {canonical, legacy}


def flatten(node: object, prefix: str = "") -> dict[str, object]:
    if isinstance(node, dict):
        flat: dict[str, object] = {}
        for key, value in node.items():
            flat.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: node}


def read_properties(path: Path) -> dict[str, object]:
    if path.suffix == ".properties":
        flat = {}
        for line in path.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "!")) and "=" in line:
                key, value = line.split("=", 1)
                flat[key.strip()] = value.strip()
        return flat
    flat = {}
    for document in load_all_yaml(path.read_text()):
        if document:
            flat.update(flatten(document))
    return flat


def load_app(root: Path, app: str) -> AppConfig:
    """The application's own configuration files plus the classpath files it imports."""
    resource_dirs = [root / app / "src/main/resources", root / COMMON_MODULE / "src/main/resources"]
    own = sorted(
        p
        for p in (root / app / "src/main/resources").glob("application*")
        if p.suffix in (".yml", ".yaml", ".properties")
    )
    if not own:
        raise SystemExit(f"no application configuration found for {app} under {resource_dirs[0]}")
    config = AppConfig(app)
    pending, seen = list(own), set()
    while pending:
        path = pending.pop(0)
        if path in seen:
            continue
        seen.add(path)
        properties = read_properties(path)
        config.properties.update(properties)
        for imported in str(properties.get("spring.config.import", "")).split(","):
            imported = imported.strip().removeprefix("optional:")
            if imported.startswith("classpath:"):
                name = imported.removeprefix("classpath:").lstrip("/")
                pending += [d / name for d in resource_dirs if (d / name).is_file()]
    return config


def duration_seconds(value: str) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)?", str(value).strip())
    if not match:
        raise ValueError(f"unparseable duration {value!r}")
    number, unit = float(match.group(1)), match.group(2) or "ms"
    return number * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


class Checks:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.apps = {app: load_app(root, app) for app in APPS}
        self.problems: list[str] = []
        self.passed = 0
        self.release = False
        self.sale_day = SaleDayChecks(self)

    def expect(self, condition: bool, problem: str) -> None:
        if condition:
            self.passed += 1
        else:
            self.problems.append(problem)

    def check_env_names(self, where: str, app: str, env: dict[str, str]) -> None:
        valid = self.apps[app].env_names()
        for name in sorted(env):
            self.expect(
                name in valid,
                f"{where}: {app} gets {name}, which binds to no property of {app} "
                "(not a ${VAR} placeholder nor the relaxed form of a key in its application*.yml)",
            )

    def server_port(self, app: str, env: dict[str, str]) -> int:
        return int(self.apps[app].resolve("server.port", env))

    def management_port(self, app: str, env: dict[str, str]) -> int:
        port = self.apps[app].resolve("management.server.port", env)
        return int(port) if port else self.server_port(app, env)

    def shutdown_phase(self, app: str) -> float:
        value = self.apps[app].properties.get("spring.lifecycle.timeout-per-shutdown-phase", "30s")
        return duration_seconds(str(value))

    # Dockerfile ---------------------------------------------------------------------------

    def check_dockerfile(self) -> None:
        # One Dockerfile for both applications: the MODULE build argument names the application, PORT its port.
        path = self.root / "Dockerfile"
        where = str(path.relative_to(self.root))
        if not path.is_file():
            self.problems.append(f"{where}: missing")
            return
        text = path.read_text()
        stages = re.findall(r"^FROM\s+(\S+)", text, re.MULTILINE)
        self.expect(len(stages) >= 2, f"{where}: not a multi-stage build")
        self.expect(bool(stages) and stages[-1].startswith("eclipse-temurin:25-jre"),
                    f"{where}: runtime stage is not eclipse-temurin:25-jre")
        self.expect(re.search(r'\./mvnw -B\b.*-DskipTests -pl "\$MODULE" -am package', text) is not None,
                    f"{where}: build stage does not run ./mvnw -B -DskipTests -pl \"$MODULE\" -am package")
        self.expect("-Djarmode=tools" in text and "extract --layers" in text,
                    f"{where}: the jar is not extracted into layers with the tools jarmode")
        # 5. Cold starts: an AOT cache trained in the image and used by the entry point, on the jar run by
        # the JVM's own class loader (classes the launcher loads from nested jars never reach the cache).
        # The entry point's arguments are in a file the JVM reads (java @file), written at build time.
        entry = re.search(r"^ENTRYPOINT\s+(\[.*\])\s*$", text, re.MULTILINE)
        entrypoint = json.loads(entry.group(1)) if entry else []
        argfile = entrypoint[1][1:] if entrypoint[:1] == ["java"] and len(entrypoint) == 2 and \
            entrypoint[1].startswith("@") else None
        self.expect(re.search(r'-XX:AOTCacheOutput=\S+.*-Dspring\.context\.exit=onRefresh', text) is not None,
                    f"{where}: no AOT cache training run (-XX:AOTCacheOutput=... -Dspring.context.exit=onRefresh)")
        written = re.search(rf"printf '%s\\n' (.*) > {re.escape(argfile)}$", text, re.MULTILINE) if argfile else None
        arguments = written.group(1).split() if written else []
        self.expect(any(a.startswith('"-XX:AOTCache=') for a in arguments)
                    and arguments[-2:] == ["-jar", '"$MODULE.jar"'] and "--launcher" not in text,
                    f"{where}: the entry point does not run the $MODULE jar with -XX:AOTCache "
                    "(a cold JVM at every start)")
        users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
        self.expect(bool(users) and users[-1].split(":")[0] not in ("root", "0"),
                    f"{where}: runs as root")
        self.expect("MaxRAMPercentage" in text, f"{where}: no container-aware heap flag (MaxRAMPercentage)")
        self.expect(re.search(r"JAVA_TOOL_OPTIONS=\"[^\"]*-XX:\+Use(G1|Parallel|Z|Serial)GC", text) is not None,
                    f"{where}: JAVA_TOOL_OPTIONS chooses no collector: below 2 CPUs or 1792 MiB the JVM picks Serial")
        exposed = re.findall(r"^EXPOSE\s+(.+?)\s*$", text, re.MULTILINE)
        self.expect(exposed == ["${PORT}"], f"{where}: EXPOSE {exposed}, not the PORT build argument")
        self.expect(re.search(r"SERVER_PORT=\$\{PORT\}", text) is not None,
                    f"{where}: SERVER_PORT is not the PORT build argument it exposes")
        health = re.search(r"^HEALTHCHECK\b((?:.*\\\n)*.*)", text, re.MULTILINE)
        self.expect(health is not None and "/actuator/health/" in health.group(1),
                    f"{where}: no HEALTHCHECK on an actuator health path")

    def check_image_build(self, where: str, app: str, build: dict) -> None:
        # The one Dockerfile, from the repository root, with the application's module and default port.
        args = compose_mapping(build.get("args"))
        self.expect(build.get("dockerfile") == "Dockerfile" and build.get("context") in (".", "./"),
                    f"{where}: not built from the Dockerfile with the repository root as context")
        self.expect(args.get("MODULE") == app, f"{where}: builds the image with MODULE={args.get('MODULE')}, not {app}")
        port = self.server_port(app, {})
        self.expect(str(args.get("PORT")) == str(port),
                    f"{where}: builds the image with PORT={args.get('PORT')} but {app} listens on {port}")

    # docker-compose.yml ------------------------------------------------------------------

    def check_compose(self) -> None:
        path = self.root / "docker-compose.yml"
        compose = load_yaml(path.read_text())
        services = compose.get("services", {})
        for app in APPS:
            where = f"docker-compose.yml services.{app}"
            service = services.get(app)
            if service is None:
                self.problems.append(f"{where}: missing")
                continue
            raw_env = compose_mapping(service.get("environment"))
            env = {k: compose_default(str(v)) for k, v in raw_env.items()}
            self.check_env_names(where, app, env)
            port = self.server_port(app, env)
            targets = [compose_port_target(p) for p in service.get("ports", [])]
            targets += [int(str(p).split("/")[0]) for p in service.get("expose", [])]
            self.expect(targets and all(t == port for t in targets),
                        f"{where}: container ports {targets} but {app} listens on {port}")
            test = " ".join(service.get("healthcheck", {}).get("test", []))
            self.expect(f"/{port}" in test and READINESS_PATH in test,
                        f"{where}: healthcheck does not probe {READINESS_PATH} on port {port}")
            self.check_image_build(where, app, service.get("build", {}))
            grace = duration_seconds(str(service.get("stop_grace_period", "10s")))
            self.expect(grace > self.shutdown_phase(app),
                        f"{where}: stop_grace_period {grace}s does not outlast the {self.shutdown_phase(app)}s shutdown phase")
            depends = service.get("depends_on") or {}
            for dependency, condition in depends.items():
                expected = "service_completed_successfully" if dependency == "migrate" else "service_healthy"
                self.expect(condition.get("condition") == expected,
                            f"{where}: depends_on {dependency} without condition {expected}")
            # 3. Both applications start after the migration, and the workers do not wait for the API.
            self.expect("migrate" in depends, f"{where}: does not wait for the migrate service")
            if app == "order-worker":
                self.expect("order-api" not in depends,
                            f"{where}: waits for order-api: the schema comes from the migrate service")
            else:
                self.expect(str(raw_env.get("SPRING_FLYWAY_ENABLED", "")).lower() == "false",
                            f"{where}: still migrates (SPRING_FLYWAY_ENABLED): the migrate service owns the schema")
                self.check_warmup(where, env)
            # 4. An explicit collector and a limit that holds the heap plus the measured non-heap footprint.
            limit = (((service.get("deploy") or {}).get("resources") or {}).get("limits") or {}).get("memory", "0")
            self.check_java_options(where, app, str(raw_env.get("JAVA_TOOL_OPTIONS", "")), mebibytes(limit))
        migrate = services.get("migrate")
        self.expect(migrate is not None and MIGRATION_MAIN in " ".join(migrate.get("entrypoint", []) + migrate.get("command", []))
                    and (migrate.get("depends_on") or {}).get("postgres", {}).get("condition") == "service_healthy",
                    f"docker-compose.yml: no migrate service running {MIGRATION_MAIN} once Postgres is healthy")
        if migrate is not None:
            self.check_migration_class_path("docker-compose.yml services.migrate",
                                            migrate.get("entrypoint", []) + migrate.get("command", []))
            self.check_image_build("docker-compose.yml services.migrate", "order-api", migrate.get("build", {}))
        if migrate is not None:
            raw = migrate.get("environment", {})
            self.check_env_names("docker-compose.yml services.migrate", "order-api", {k: str(v) for k, v in raw.items()})
        # 6. Secrets fail closed: no committed default for any of them, and never the local profile.
        text = path.read_text()
        for variable in sorted(set(re.findall(r"\$\{(\w*(?:PASSWORD|PASS|SECRET)\w*):?-", text))):
            self.problems.append(f"docker-compose.yml: ${{{variable}}} has a committed default; make it required "
                                 f"(${{{variable}:?...}}) so a stack never runs with a known secret")
        self.expect(not re.search(r"SPRING_PROFILES_ACTIVE\W.*local", text),
                    "docker-compose.yml: sets the local profile, which accepts the committed placeholder secrets")
        # 8. Pinned, supported images.
        for name, service in services.items():
            image = str(service.get("image", ""))
            if image and "build" not in service:
                self.expect(image_is_pinned(image, "compose"),
                            f"docker-compose.yml services.{name}: image {image!r} is not an immutable tag or digest")
                self.expect(not re.search(r"rabbitmq:3\.", image),
                            f"docker-compose.yml services.{name}: RabbitMQ 3.x is out of support")
        worker = services.get("order-worker", {})
        self.expect("container_name" not in worker and not worker.get("ports"),
                    "docker-compose.yml services.order-worker: container_name or published ports prevent --scale")

    def check_redis_version(self) -> None:
        """4. One Redis version everywhere: the one scripts/services.sh installs (the tests and the drills run
        it), named by every Redis and Sentinel image of Compose and Kubernetes."""
        services = self.root / "scripts/services.sh"
        declared = re.search(r"^REDIS_VERSION=([\d.]+)$", services.read_text(), re.M) if services.is_file() else None
        self.expect(declared is not None, "scripts/services.sh: no REDIS_VERSION (the Redis version it installs)")
        if declared is None:
            return
        files = [self.root / "docker-compose.yml"] + sorted((self.root / "k8s").rglob("*.y*ml"))
        found = 0
        for path in files:
            for image in re.findall(r"^\s*(?:-\s*)?(?:image|imageName):\s*[\"']?([^\s\"']+)", path.read_text(), re.M):
                name, _, tag = image.split("@")[0].rpartition(":")
                if name.rsplit("/", 1)[-1] not in ("redis", "redis-sentinel"):
                    continue
                found += 1
                self.expect(tag.removeprefix("v") == declared.group(1),
                            f"{path.relative_to(self.root)}: image {image} is not Redis {declared.group(1)}, the version "
                            "scripts/services.sh installs (one Redis version everywhere)")
        self.expect(found > 0, "no Redis image found in docker-compose.yml or k8s/")

    def check_references(self) -> None:
        """8. Every Markdown file the deployment files point at exists."""
        for path in sorted((self.root / "k8s").rglob("*")):
            if path.is_file() and path.suffix in (".yaml", ".yml", ".env", ".md"):
                for reference in re.findall(r"[\w./-]+\.md\b", path.read_text()):
                    self.expect((self.root / reference).is_file() or (path.parent / reference).is_file(),
                                f"{path.relative_to(self.root)}: refers to {reference}, which does not exist")

    # Rendered Kubernetes overlays -------------------------------------------------------------

    def check_rendered(self, rendered: Path) -> None:
        docs = [d for d in load_all_yaml(rendered.read_text()) if d]
        by_kind: dict[str, list[dict]] = {}
        for doc in docs:
            by_kind.setdefault(doc["kind"], []).append(doc)
        named = {(d["kind"], d["metadata"]["name"]): d for d in docs}
        overlay = rendered.stem

        for secret in by_kind.get("Secret", []):
            values = {k: base64.b64decode(v).decode() for k, v in (secret.get("data") or {}).items()}
            values.update(secret.get("stringData") or {})
            for key, value in values.items():
                # A user name, or a URL without credentials (KEDA's management API host), is no secret.
                not_secret = key.endswith("_USER") or ("://" in value and "@" not in value)
                self.expect(SECRET_PLACEHOLDER in value or not_secret,
                            f"{overlay}: Secret {secret['metadata']['name']} key {key} holds a value without "
                            f"the '{SECRET_PLACEHOLDER}' placeholder: real secrets are never committed")

        deployments = {d["metadata"]["name"]: d for d in by_kind.get("Deployment", [])}
        worker_env: dict[str, str] = {}
        for app in APPS:
            where = f"{overlay}: Deployment {app}"
            deployment = deployments.get(app)
            if deployment is None:
                self.problems.append(f"{where}: missing")
                continue
            pod = deployment["spec"]["template"]["spec"]
            containers = {c["name"]: c for c in pod["containers"]}
            container = containers.get(app)
            if container is None:
                self.problems.append(f"{where}: no container named {app}")
                continue
            env = self.container_env(overlay, where, container, named)
            if app == "order-worker":
                worker_env = env
            self.check_env_names(where, app, env)
            port = self.server_port(app, env)
            management = self.management_port(app, env)
            ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
            self.expect(port in ports.values(), f"{where}: no containerPort {port} (the port {app} listens on)")
            for probe, path in (("livenessProbe", LIVENESS_PATH), ("readinessProbe", READINESS_PATH)):
                http = container.get(probe, {}).get("httpGet")
                self.expect(http is not None and http.get("path") == path and
                            ports.get(http.get("port"), http.get("port")) == management,
                            f"{where}: {probe} is not an httpGet of {path} on port {management}")
            startup = container.get("startupProbe", {}).get("httpGet")
            if startup:
                self.expect(startup.get("path", "").startswith("/actuator/health") and
                            ports.get(startup.get("port"), startup.get("port")) == management,
                            f"{where}: startupProbe is not on the actuator health port {management}")
            annotations = deployment["spec"]["template"]["metadata"].get("annotations", {})
            if annotations.get("prometheus.io/scrape") == "true":
                self.expect(annotations.get("prometheus.io/port") == str(management) and
                            annotations.get("prometheus.io/path") == PROMETHEUS_PATH,
                            f"{where}: prometheus.io annotations do not point at {PROMETHEUS_PATH} on {management}")
            pre_stop = container.get("lifecycle", {}).get("preStop", {})
            sleep = float(pre_stop.get("sleep", {}).get("seconds", 0))
            command = pre_stop.get("exec", {}).get("command", [])
            if len(command) == 2 and command[0] == "sleep":
                sleep = float(command[1])
            if app == "order-api":
                self.expect(sleep > 0, f"{where}: no preStop sleep to let endpoints drain")
            grace = pod.get("terminationGracePeriodSeconds", 30)
            self.expect(grace > sleep + self.shutdown_phase(app),
                        f"{where}: terminationGracePeriodSeconds {grace} does not outlast preStop {sleep}s + "
                        f"shutdown phase {self.shutdown_phase(app)}s")
            self.expect(bool(container.get("resources", {}).get("requests")) and
                        bool(container.get("resources", {}).get("limits", {}).get("memory")),
                        f"{where}: no resource requests and memory limit")
            for service in by_kind.get("Service", []):
                if service["spec"].get("selector", {}).get("app.kubernetes.io/name") == app:
                    for service_port in service["spec"]["ports"]:
                        target = service_port.get("targetPort", service_port["port"])
                        self.expect(ports.get(target, target) == port,
                                    f"{overlay}: Service {service['metadata']['name']} targets {target}, "
                                    f"not {app}'s port {port}")
            self.check_network_policy(overlay, app, env, port, by_kind.get("NetworkPolicy", []))

        self.check_keda(overlay, by_kind, named, deployments, worker_env)
        workloads = list(deployments.values()) + by_kind.get("StatefulSet", [])
        # Pods an operator runs carry labels of its own: RabbitMQ's app.kubernetes.io/name is the cluster's name.
        operator_pods = [{"app.kubernetes.io/name": b["metadata"]["name"]} for b in by_kind.get("RabbitmqCluster", [])]
        operator_pods += [{"cnpg.io/poolerName": p["metadata"]["name"]} for p in by_kind.get("Pooler", [])]
        for pdb in by_kind.get("PodDisruptionBudget", []):
            selector = pdb["spec"]["selector"].get("matchLabels", {})
            self.expect(any(selector.items() <= w["spec"]["template"]["metadata"]["labels"].items()
                            for w in workloads) or selector in operator_pods,
                        f"{overlay}: PodDisruptionBudget {pdb['metadata']['name']} selects no workload's pods")
        self.check_sale_day(overlay, docs, by_kind, named, deployments)
        self.sale_day.check(overlay, docs, by_kind, deployments)
        for hpa in by_kind.get("HorizontalPodAutoscaler", []):
            self.expect(hpa["spec"]["scaleTargetRef"]["name"] in deployments,
                        f"{overlay}: HorizontalPodAutoscaler {hpa['metadata']['name']} targets no Deployment")

    # Sale day (issue 16): what must hold so the deployment survives a sale -----------------------

    def check_sale_day(self, overlay: str, docs: list[dict], by_kind: dict, named: dict,
                       deployments: dict) -> None:
        self.check_readiness(overlay, by_kind, deployments)
        self.check_migrations(overlay, by_kind, deployments)
        self.check_jvm_sizing(overlay, deployments)
        self.check_scaling(overlay, by_kind, deployments)
        self.check_platform(overlay, docs, by_kind, deployments)
        self.check_redis(overlay, by_kind)
        self.check_redis_failover(overlay, by_kind, named, deployments)
        # 6. TLS to a managed Redis is a setting, not a rebuild.
        self.expect("REDIS_SSL" in named_config(by_kind) and
                    all("REDIS_SSL" in self.apps[app].env_names() for app in APPS),
                    f"{overlay}: no REDIS_SSL in flashsale-config bound to spring.data.redis.ssl.enabled")
        for deployment in deployments.values():
            for container in deployment["spec"]["template"]["spec"]["containers"]:
                profiles = env_of(container).get("SPRING_PROFILES_ACTIVE", "")
                self.expect("local" not in profiles.split(","),
                            f"{overlay}: Deployment {deployment['metadata']['name']}: the local profile accepts the "
                            "committed placeholder secrets")
        if by_kind.get("Cluster"):
            self.check_database(overlay, by_kind, deployments)
        if by_kind.get("RabbitmqCluster"):
            self.check_broker(overlay, by_kind, named, deployments)

    def check_readiness(self, overlay: str, by_kind: dict, deployments: dict) -> None:
        # 1. Readiness is the instance's own state: a dependency blip must not empty the Service.
        for app in APPS:
            include = str(self.apps[app].resolve("management.endpoint.health.group.readiness.include", {}) or "")
            members = {m.strip() for m in include.split(",") if m.strip()}
            shared = members - LOCAL_HEALTH_INDICATORS
            self.expect(not shared, f"{app}: readiness group includes shared dependencies {sorted(shared)}: a blip "
                        "in one marks every pod NotReady (keep them in /actuator/health, not in readiness)")
        for pdb in by_kind.get("PodDisruptionBudget", []):
            selector = pdb["spec"]["selector"].get("matchLabels", {})
            if selector.get("app.kubernetes.io/name") in APPS:
                self.expect(pdb["spec"].get("unhealthyPodEvictionPolicy") == "AlwaysAllow",
                            f"{overlay}: PodDisruptionBudget {pdb['metadata']['name']}: NotReady pods use up the budget "
                            "(set unhealthyPodEvictionPolicy: AlwaysAllow)")

    def check_migrations(self, overlay: str, by_kind: dict, deployments: dict) -> None:
        # 3. Migrations run once per release, in a Job with its own deadline, never in a pod's start-up (issue 28,
        #    finding 5: an init container ran Flyway behind its lock on every scale-out, and crash-looped during a
        #    Postgres failover); the API and the workers wait for their schema version inside their startup probe.
        for deployment in deployments.values():
            for init in deployment["spec"]["template"]["spec"].get("initContainers", []):
                self.expect(MIGRATION_MAIN not in " ".join(init.get("command", []) + init.get("args", [])),
                            f"{overlay}: Deployment {deployment['metadata']['name']}: init container {init['name']} runs "
                            f"{MIGRATION_MAIN}: every pod start pays a Flyway run (use the migration Job)")
        api = deployments.get("order-api")
        if api is None:
            return
        main = container_of(api, "order-api")
        jobs = [(job, c) for job in by_kind.get("Job", []) for c in job["spec"]["template"]["spec"]["containers"]
                if MIGRATION_MAIN in " ".join(c.get("command", []) + c.get("args", []))]
        self.expect(len(jobs) == 1, f"{overlay}: no Job runs {MIGRATION_MAIN} (the migration step before the rollout)")
        for job, container in jobs:
            where = f"{overlay}: Job {job['metadata']['name']} container {container['name']}"
            command = container.get("command", [])
            self.expect(bool(command) and command[0] == "timeout" and container.get("image") == main.get("image"),
                        f"{where}: the migration needs its own deadline (timeout SECONDS ...) and the API's own image")
            self.expect(job["spec"].get("backoffLimit", 6) >= 1,
                        f"{where}: backoffLimit 0: a Postgres failover during the migration fails the release")
            self.check_env_names(where, "order-api", env_of(container))
            self.check_migration_class_path(where, command + container.get("args", []))
            name = job["spec"]["template"]["metadata"].get("labels", {}).get("app.kubernetes.io/name", "")
            egress = egress_ports(by_kind.get("NetworkPolicy", []), name)
            self.expect({5432, 53} <= egress, f"{where}: its pods (app.kubernetes.io/name {name!r}) may not reach "
                        "PostgreSQL and DNS")
        env = env_of(main)
        self.expect(env.get("SPRING_FLYWAY_ENABLED", "true") != "false",
                    f"{overlay}: Deployment order-api: SPRING_FLYWAY_ENABLED=false: the API would start on any schema "
                    "instead of waiting for its version")
        self.expect(str(self.apps["order-api"].resolve("app.schema.migrate", env)).lower() == "false",
                    f"{overlay}: Deployment order-api: the application container still migrates (APP_SCHEMA_MIGRATE)")
        for app, deployment in deployed(deployments):
            container = container_of(deployment, app)
            app_env = env_of(container)
            wait = self.apps[app].resolve("app.schema.wait-timeout", app_env)
            probe = container.get("startupProbe") or container.get("livenessProbe") or {}
            budget = probe.get("periodSeconds", 10) * probe.get("failureThreshold", 3) + probe.get("initialDelaySeconds", 0)
            self.expect(bool(wait) and 0 < duration_seconds(wait) < budget,
                        f"{overlay}: Deployment {app}: app.schema.wait-timeout {wait} is not within its startup probe's "
                        f"{budget} s: a pod waiting for its schema is restarted instead")

    def check_jvm_sizing(self, overlay: str, deployments: dict) -> None:
        # 4. An explicit collector, and a limit that holds the heap plus the measured non-heap footprint.
        for app, deployment in deployed(deployments):
            container = container_of(deployment, app)
            where = f"{overlay}: Deployment {app}"
            env = env_of(container)
            resources = container.get("resources", {})
            limit = mebibytes(resources.get("limits", {}).get("memory", "0"))
            self.check_java_options(where, app, env.get("JAVA_TOOL_OPTIONS", ""), limit)
            requested = cpu_cores(resources.get("requests", {}).get("cpu", "0"))
            cpu_limit = resources.get("limits", {}).get("cpu")
            self.expect(cpu_limit is None or requested >= cpu_cores(cpu_limit) / 2,
                        f"{where}: CPU request {requested} is less than half its limit {cpu_limit}: requests must "
                        "reflect real use (the autoscaler's utilisation and the scheduler both read them)")

    def check_java_options(self, where: str, app: str, options: str, limit_mib: float) -> None:
        self.expect(re.search(r"-XX:\+Use(G1|Parallel|Z|Shenandoah|Serial)GC\b", options) is not None,
                    f"{where}: JAVA_TOOL_OPTIONS chooses no collector: below 2 CPUs or 1792 MiB the JVM picks Serial")
        heap = heap_mib(options, limit_mib)
        headroom = limit_mib - heap if heap is not None else 0
        self.expect(heap is not None and headroom >= MEASURED_NON_HEAP_MIB[app],
                    f"{where}: memory limit {limit_mib:.0f} MiB leaves {headroom:.0f} MiB beside the heap; "
                    f"{app} measured {MEASURED_NON_HEAP_MIB[app]} MiB outside it (docs/operations.md#jvm-sizing)")

    def check_scaling(self, overlay: str, by_kind: dict, deployments: dict) -> None:
        # 5. Workers never shrink on an unreadable metric; new pods settle before they count; prod pre-scales.
        for app, deployment in deployed(deployments):
            self.expect(deployment["spec"].get("minReadySeconds", 0) > 0,
                        f"{overlay}: Deployment {app}: no minReadySeconds: a cold pod counts as available at once")
        api = deployments.get("order-api")
        if api is not None:
            container = container_of(api, "order-api")
            self.check_warmup(f"{overlay}: Deployment order-api",
                              env_of(container))
        for so in by_kind.get("ScaledObject", []):
            target = so["spec"]["scaleTargetRef"]["name"]
            where = f"{overlay}: ScaledObject {so['metadata']['name']}"
            if target == "order-worker":
                self.expect(so["spec"].get("fallback", {}).get("behavior") == "currentReplicasIfHigher",
                            f"{where}: fallback shrinks a busy fleet when the queue metric is unreadable "
                            "(behavior: currentReplicasIfHigher)")
                self.expect(so["spec"].get("minReplicaCount", 0) >= 2, f"{where}: fewer than 2 workers at minimum")
            if overlay == "prod":
                self.expect(any(t["type"] == "cron" for t in so["spec"]["triggers"]),
                            f"{where}: no cron trigger: nothing scales out before the sale starts")
        scaled = {so["spec"]["scaleTargetRef"]["name"] for so in by_kind.get("ScaledObject", [])}
        scaled |= {h["spec"]["scaleTargetRef"]["name"] for h in by_kind.get("HorizontalPodAutoscaler", [])}
        self.expect("order-api" in scaled, f"{overlay}: nothing scales order-api")
        if overlay == "prod":
            self.expect(any(so["spec"]["scaleTargetRef"]["name"] == "order-api" for so in by_kind.get("ScaledObject", [])),
                        f"{overlay}: order-api has no ScaledObject with a sale-window cron trigger")

    def check_warmup(self, where: str, env: dict[str, str]) -> None:
        # 5. Readiness waits for the warm-up: a pod added during a spike does not take traffic cold.
        self.expect(str(self.apps["order-api"].resolve(WARMUP_PROPERTY, env)).lower() == "true",
                    f"{where}: no warm-up ({WARMUP_PROPERTY} is not true): the instance reports ready with a cold JVM")

    def check_migration_class_path(self, where: str, command: list[str]) -> None:
        # The migration runs from the API image: its class path must be the image's layout (the Dockerfile).
        class_path = command[command.index("-cp") + 1] if "-cp" in command[:-1] else ""
        self.expect(class_path == "/app/order-api.jar",
                    f"{where}: class path {class_path!r} is not the image's /app/order-api.jar")

    def check_platform(self, overlay: str, docs: list[dict], by_kind: dict, deployments: dict) -> None:
        # 8. Metrics off the public port, zone spread, pinned images, current RabbitMQ, DNS that works everywhere.
        api = deployments.get("order-api")
        if api is not None:
            container = container_of(api, "order-api")
            env = env_of(container)
            server, management = self.server_port("order-api", env), self.management_port("order-api", env)
            self.expect(management != server, f"{overlay}: Deployment order-api: actuator (metrics, health) on the "
                        f"public port {server}; set MANAGEMENT_PORT")
            ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
            for service in by_kind.get("Service", []):
                if service["spec"].get("selector", {}).get("app.kubernetes.io/name") == "order-api":
                    targets = {ports.get(sp.get("targetPort"), sp.get("targetPort")) for sp in service["spec"]["ports"]}
                    self.expect(management not in targets,
                                f"{overlay}: Service {service['metadata']['name']} exposes the management port {management}")
        for app, deployment in deployed(deployments):
            keys = {c["topologyKey"] for c in deployment["spec"]["template"]["spec"].get("topologySpreadConstraints", [])}
            self.expect("topology.kubernetes.io/zone" in keys, f"{overlay}: Deployment {app}: not spread over zones")
            if overlay == "prod":
                monitors = [m for m in by_kind.get("PodMonitor", []) + by_kind.get("ServiceMonitor", [])
                            if m["spec"].get("selector", {}).get("matchLabels", {}).get("app.kubernetes.io/name") == app]
                self.expect(bool(monitors), f"{overlay}: no PodMonitor or ServiceMonitor for {app}")
        for doc in docs:
            spec = doc.get("spec")
            if not isinstance(spec, dict):
                continue
            template = (spec.get("template") or {}).get("spec") or {}
            images = [(c["name"], c.get("image", "")) for c in
                      (template.get("containers") or []) + (template.get("initContainers") or []) if c.get("image")]
            for key in ("image", "imageName"):
                if isinstance(spec.get(key), str):
                    images.append((key, spec[key]))
            for name, image in images:
                where = f"{overlay}: {doc['kind']} {doc['metadata']['name']} {name}"
                self.expect(image_is_pinned(image, overlay), f"{where}: image {image!r} is not an immutable tag or digest")
                if re.search(r"(^|/)rabbitmq:", image):
                    self.expect(not re.search(r"rabbitmq:3\.", image), f"{where}: RabbitMQ 3.x is out of support")
        dns = [rule for policy in by_kind.get("NetworkPolicy", []) for rule in policy["spec"].get("egress", [])
               if any(p.get("port") == 53 for p in rule.get("ports", []))]
        self.expect(bool(dns) and all(not rule.get("to") or any("ipBlock" in peer for peer in rule["to"]) for rule in dns),
                    f"{overlay}: DNS egress is limited to kube-dns pods, which fails with NodeLocal DNSCache")

    def check_redis(self, overlay: str, by_kind: dict) -> None:
        # 7. Redis refuses writes before the kernel kills it; it is not evicted or preempted lightly; it is watched.
        for sts in by_kind.get("StatefulSet", []):
            labels = sts["spec"]["template"]["metadata"]["labels"]
            if labels.get("flashsale.dev/dependency") != "redis":
                continue
            where = f"{overlay}: StatefulSet {sts['metadata']['name']}"
            pod = sts["spec"]["template"]["spec"]
            redis = next(c for c in pod["containers"] if "redis-server" in c.get("args", []) + c.get("command", []))
            env = env_of(redis)
            args = [re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), a) for a in redis.get("args", [])]
            maxmemory = args[args.index("--maxmemory") + 1] if "--maxmemory" in args else None
            limit = mebibytes(redis.get("resources", {}).get("limits", {}).get("memory", "0"))
            self.expect(maxmemory is not None and 0 < redis_mib(maxmemory) <= 0.8 * limit,
                        f"{where}: maxmemory {maxmemory} is not set below 80% of the {limit:.0f} MiB limit "
                        "(a full Redis must refuse writes, not be OOM-killed)")
            self.expect(any(pdb["spec"]["selector"].get("matchLabels", {}).items() <= labels.items()
                            for pdb in by_kind.get("PodDisruptionBudget", [])), f"{where}: no PodDisruptionBudget")
            priority = pod.get("priorityClassName")
            self.expect(priority is not None and any(pc["metadata"]["name"] == priority
                                                     for pc in by_kind.get("PriorityClass", [])),
                        f"{where}: no PriorityClass (or it is not part of the overlay)")
            self.expect(any(c is not redis and c.get("ports") for c in pod["containers"]),
                        f"{where}: no metrics exporter beside Redis")

    def check_redis_failover(self, overlay: str, by_kind: dict, named: dict, deployments: dict) -> None:
        # 9. Redis keeps what it acknowledged across a restart (AOF); production's Redis fails over by itself
        #    (replicas and Sentinel) and the applications follow the new master.
        for sts in by_kind.get("StatefulSet", []):
            if sts["spec"]["template"]["metadata"]["labels"].get("flashsale.dev/dependency") != "redis":
                continue
            for container in sts["spec"]["template"]["spec"]["containers"]:
                args = container.get("args", []) + container.get("command", [])
                if "redis-server" in args:
                    options = dict(zip(args[1::2], args[2::2])) if args[0] == "redis-server" else {}
                    self.expect(options.get("--appendonly") == "yes" and
                                options.get("--appendfsync") in ("everysec", "always"),
                                f"{overlay}: StatefulSet {sts['metadata']['name']}: no append-only file fsynced "
                                "everysec or always (a restart loses every sale's stock)")
        replications = {r["metadata"]["name"]: r for r in by_kind.get("RedisReplication", [])}
        sentinels = by_kind.get("RedisSentinel", [])
        if overlay == "prod":
            self.expect(bool(replications) and bool(sentinels),
                        f"{overlay}: Redis has no replicas with Sentinel failover (RedisReplication + RedisSentinel): "
                        "a lost Redis node stops every sale until it is back")
        for name, replication in replications.items():
            where, spec = f"{overlay}: RedisReplication {name}", replication["spec"]
            self.expect(spec.get("clusterSize", 1) >= 3, f"{where}: fewer than a master and two replicas")
            config_name = spec.get("redisConfig", {}).get("additionalRedisConfig")
            config_map = named.get(("ConfigMap", config_name)) if config_name else None
            text = "\n".join((config_map or {}).get("data", {}).values())
            options = dict(line.split(None, 1) for line in text.splitlines() if line.strip() and " " in line.strip())
            self.expect(options.get("appendonly") == "yes" and options.get("appendfsync") in ("everysec", "always"),
                        f"{where}: no append-only file fsynced everysec or always in its additionalRedisConfig")
            self.expect(options.get("maxmemory-policy") == "noeviction",
                        f"{where}: maxmemory-policy is not noeviction (stock and reservations would be evicted)")
            limit = mebibytes(spec.get("kubernetesConfig", {}).get("resources", {}).get("limits", {}).get("memory", "0"))
            self.expect("maxmemory" in options and 0 < redis_mib(options["maxmemory"]) <= 0.8 * limit,
                        f"{where}: maxmemory {options.get('maxmemory')} is not set below 80% of the {limit:.0f} MiB limit")
            self.expect(spec.get("pdb", {}).get("enabled") is True, f"{where}: no PodDisruptionBudget")
            self.expect(spec.get("redisExporter", {}).get("enabled") is True, f"{where}: no metrics exporter")
            priority = spec.get("priorityClassName")
            self.expect(priority is not None and any(pc["metadata"]["name"] == priority
                                                     for pc in by_kind.get("PriorityClass", [])),
                        f"{where}: no PriorityClass (or it is not part of the overlay)")
        config = named_config(by_kind)
        for sentinel in sentinels:
            where, spec = f"{overlay}: RedisSentinel {sentinel['metadata']['name']}", sentinel["spec"]
            size = spec.get("clusterSize", 1)
            sentinel_config = spec.get("redisSentinelConfig", {})
            self.expect(size >= 3 and size % 2 == 1, f"{where}: {size} Sentinels cannot elect a leader through a loss")
            self.expect(sentinel_config.get("redisReplicationName") in replications,
                        f"{where}: watches {sentinel_config.get('redisReplicationName')!r}, no RedisReplication here")
            quorum = int(sentinel_config.get("quorum", "2"))
            self.expect(size // 2 < quorum <= size, f"{where}: quorum {quorum} of {size} is not a majority")
            master = sentinel_config.get("masterGroupName", "myMaster")
            service = f"{sentinel['metadata']['name']}-sentinel:26379"
            self.expect("redis-sentinel" in config.get("SPRING_PROFILES_ACTIVE", "").split(","),
                        f"{where}: the applications do not run the redis-sentinel profile (they would connect to "
                        "one Redis node and never follow a failover)")
            self.expect(config.get("REDIS_SENTINEL_MASTER") == master,
                        f"{where}: REDIS_SENTINEL_MASTER is {config.get('REDIS_SENTINEL_MASTER')!r}, Sentinel "
                        f"monitors {master!r}")
            # Issue 40, finding 2: each Sentinel by its pod, so Lettuce can try the next when one answers wrong.
            statefulset = f"{sentinel['metadata']['name']}-sentinel"
            pods = [f"{statefulset}-{i}.{statefulset}-headless:26379" for i in range(size)]
            self.expect(config.get("REDIS_SENTINEL_NODES", "").split(",") == pods,
                        f"{where}: REDIS_SENTINEL_NODES {config.get('REDIS_SENTINEL_NODES')!r} does not list its "
                        f"{size} Sentinels by pod ({','.join(pods)}), not the Service {service}")
            for app in APPS:
                resolved = self.apps[app].resolve("spring.data.redis.sentinel.master", config)
                self.expect(resolved == master,
                            f"{where}: {app} binds spring.data.redis.sentinel.master to {resolved!r}, not {master!r}")
                egress = egress_ports(by_kind.get("NetworkPolicy", []), app)
                self.expect(26379 in egress, f"{where}: {app} may not reach Sentinel's port 26379")

    def check_database(self, overlay: str, by_kind: dict, deployments: dict) -> None:
        # 2. A 201 survives a failover; backups; no primary switch mid-sale; a pooler in front.
        config = named_config(by_kind)
        for cluster in by_kind["Cluster"]:
            spec, where = cluster["spec"], f"{overlay}: Cluster {cluster['metadata']['name']}"
            synchronous = spec.get("postgresql", {}).get("synchronous", {})
            self.expect(synchronous.get("number", 0) >= 1 and synchronous.get("dataDurability", "required") == "required"
                        or spec.get("minSyncReplicas", 0) >= 1,
                        f"{where}: asynchronous replication: a failover can lose orders already answered 201")
            self.expect("barmanObjectStore" in spec.get("backup", {}) or
                        any(p.get("isWALArchiver") for p in spec.get("plugins", [])),
                        f"{where}: no WAL archiving (backup.barmanObjectStore or a WAL-archiver plugin)")
            self.expect(spec.get("primaryUpdateStrategy") == "supervised",
                        f"{where}: primaryUpdateStrategy is not supervised: the operator may switch primaries mid-sale")
            poolers = [p for p in by_kind.get("Pooler", []) if p["spec"]["cluster"]["name"] == cluster["metadata"]["name"]]
            self.expect(bool(poolers), f"{where}: no Pooler in front of it")
            self.expect(any(config.get("DB_HOST") == p["metadata"]["name"] for p in poolers),
                        f"{overlay}: DB_HOST {config.get('DB_HOST')!r} bypasses the Pooler")
        pool = config.get("DB_POOL_SIZE", "?")
        for so in by_kind.get("ScaledObject", []):
            if so["spec"]["scaleTargetRef"]["name"] == "order-worker" and "order-worker" in deployments:
                worker = container_of(deployments["order-worker"], "order-worker")
                env = env_of(worker)
                consumers = int(self.apps["order-worker"].resolve("spring.rabbitmq.listener.simple.concurrency", env))
                writers = so["spec"]["maxReplicaCount"] * consumers
                self.expect(writers <= HOT_ROW_WRITERS,
                            f"{overlay}: ScaledObject {so['metadata']['name']}: up to {writers} consumers writing batches "
                            f"on one hot stock row (more than {HOT_ROW_WRITERS} only queue on its lock; {pool} connections each)")

    def check_broker(self, overlay: str, by_kind: dict, named: dict, deployments: dict) -> None:
        # 6. Scoped broker users; 8. anti-affinity and an explicit quorum-queue delivery limit.
        for cluster in by_kind["RabbitmqCluster"]:
            where = f"{overlay}: RabbitmqCluster {cluster['metadata']['name']}"
            self.expect(bool(cluster["spec"].get("affinity", {}).get("podAntiAffinity")), f"{where}: no pod anti-affinity")
        for app, deployment in deployed(deployments):
            container = container_of(deployment, app)
            for variable in container.get("env", []):
                ref = (variable.get("valueFrom") or {}).get("secretKeyRef") or {}
                if variable["name"] in ("RABBITMQ_USER", "RABBITMQ_PASSWORD"):
                    self.expect(bool(ref) and not ref.get("name", "").endswith("-default-user"),
                                f"{overlay}: Deployment {app}: {variable['name']} from {ref.get('name')}, the broker's "
                                "default administrator")
        for ta in by_kind.get("TriggerAuthentication", []):
            refs = [r["name"] for r in ta["spec"].get("secretTargetRef", []) if r["parameter"] in ("username", "password")]
            self.expect(len(refs) == 2 and not any(r.endswith("-default-user") for r in refs) and not ta["spec"].get("env"),
                        f"{overlay}: TriggerAuthentication {ta['metadata']['name']}: KEDA does not use a user of its own")
        queue = self.apps["order-worker"].resolve("app.messaging.queue", {})
        limits = [p for p in by_kind.get("Policy", []) if "delivery-limit" in p["spec"].get("definition", {})
                  and re.search(p["spec"]["pattern"], queue)]
        self.expect(bool(limits), f"{overlay}: no Policy sets the delivery limit of quorum queue {queue} explicitly")


    def container_env(self, overlay: str, where: str, container: dict, named: dict) -> dict[str, str]:
        env: dict[str, str] = {}
        for source in container.get("envFrom", []):
            prefix = source.get("prefix", "")
            if "configMapRef" in source:
                ref = named.get(("ConfigMap", source["configMapRef"]["name"]))
                data = (ref or {}).get("data") or {}
            else:
                ref = named.get(("Secret", source["secretRef"]["name"]))
                data = {k: base64.b64decode(v).decode() for k, v in ((ref or {}).get("data") or {}).items()}
            ref_name = (source.get("configMapRef") or source.get("secretRef"))["name"]
            self.expect(ref is not None, f"{where}: envFrom {ref_name} is not part of the overlay")
            env.update({prefix + k: v for k, v in data.items()})
        for variable in container.get("env", []):
            env[variable["name"]] = str(variable.get("value", "<from a Secret>"))
        return env

    def check_network_policy(self, overlay: str, app: str, env: dict[str, str], port: int,
                             policies: list[dict]) -> None:
        own = [p for p in policies
               if p["spec"]["podSelector"].get("matchLabels", {}).get("app.kubernetes.io/name") == app]
        where = f"{overlay}: NetworkPolicy for {app}"
        if not own:
            self.problems.append(f"{where}: missing")
            return
        egress = egress_ports(policies, app)
        ingress = {port for p in own for rule in p["spec"].get("ingress", []) for port in rule_ports(rule)}
        config = self.apps[app]
        needed = {
            "PostgreSQL": int(config.resolve("spring.datasource.url", env).split(":")[-1].split("/")[0]),
            "Redis": int(config.resolve("spring.data.redis.port", env)),
            "RabbitMQ": int(config.resolve("spring.rabbitmq.port", env)),
            "DNS": 53,
        }
        for what, needed_port in needed.items():
            self.expect(needed_port in egress, f"{where}: egress to {what} port {needed_port} not allowed")
        self.expect(port in ingress, f"{where}: ingress to port {port} (HTTP/metrics) not allowed")
        extra = ingress - {port, self.management_port(app, env)}
        self.expect(not extra, f"{where}: ingress allows ports {sorted(extra)} that {app} does not serve")

    def check_keda(self, overlay: str, by_kind: dict, named: dict, deployments: dict,
                   worker_env: dict[str, str]) -> None:
        scaled = by_kind.get("ScaledObject", [])
        for so in scaled:
            self.expect(so["spec"]["scaleTargetRef"]["name"] in deployments,
                        f"{overlay}: ScaledObject {so['metadata']['name']} targets no Deployment")
        scaled = [so for so in scaled if so["spec"]["scaleTargetRef"]["name"] == "order-worker"]
        self.expect(len(scaled) == 1, f"{overlay}: expected one KEDA ScaledObject for order-worker")
        queue = self.apps["order-worker"].resolve("app.messaging.queue", worker_env)
        for so in scaled:
            where = f"{overlay}: ScaledObject {so['metadata']['name']}"
            for trigger in so["spec"]["triggers"]:
                if trigger["type"] != "rabbitmq":
                    continue
                self.expect(trigger["metadata"].get("queueName") == queue,
                            f"{where}: watches queue {trigger['metadata'].get('queueName')!r}, the worker consumes {queue!r}")
                auth = trigger.get("authenticationRef", {}).get("name")
                ta = named.get(("TriggerAuthentication", auth))
                self.expect(ta is not None, f"{where}: TriggerAuthentication {auth!r} is not part of the overlay")
                if ta is None:
                    continue
                for ref in ta["spec"].get("secretTargetRef", []):
                    secret = named.get(("Secret", ref["name"]))
                    if secret is None and ref["name"].endswith(OPERATOR_SECRET_SUFFIXES):
                        continue
                    self.expect(secret is not None and ref["key"] in (secret.get("data") or {}),
                                f"{overlay}: TriggerAuthentication {auth} reads missing Secret key {ref['name']}/{ref['key']}")
                for ref in ta["spec"].get("env", []):
                    self.expect(ref["name"] in worker_env and ref.get("containerName", "order-worker") == "order-worker",
                                f"{overlay}: TriggerAuthentication {auth} reads {ref['name']}, which order-worker's env lacks")


def mebibytes(quantity: object) -> float:
    """A Kubernetes (1Gi, 640Mi, 512M), Compose (1g, 768m) or Redis (320mb) memory quantity in MiB."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]i|[KMGT]|[kmgt]b?|)", str(quantity).strip())
    if not match:
        raise ValueError(f"unparseable memory quantity {quantity!r}")
    number, unit = float(match.group(1)), match.group(2)
    binary = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 ** 2}
    if unit.endswith("i"):
        return number * binary[unit[0].lower()]
    if unit in ("K", "M", "G", "T"):
        return number * 1000 ** "KMGT".index(unit) * 1000 / 1024 ** 2
    if unit:
        return number * binary[unit[0]]
    return number / 1024 ** 2


def redis_mib(value: str) -> float:
    return mebibytes(value.lower())


def cpu_cores(quantity: object) -> float:
    text = str(quantity)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def heap_mib(options: str, limit_mib: float) -> float | None:
    """The largest heap JAVA_TOOL_OPTIONS lets the JVM take, in MiB (-Xmx, else MaxRAMPercentage of the limit)."""
    xmx = re.findall(r"-Xmx(\d+)([kKmMgG]?)", options)
    if xmx:
        number, unit = xmx[-1]
        return int(number) * {"k": 1 / 1024, "m": 1, "g": 1024, "": 1 / 1024 ** 2}[unit.lower()]
    percentage = re.findall(r"-XX:MaxRAMPercentage=(\d+(?:\.\d+)?)", options)
    return float(percentage[-1]) / 100 * limit_mib if percentage else None


def compose_default(value: str) -> str:
    """The value compose substitutes when the variable is unset: ${VAR:-default} -> default."""
    return re.sub(r"\$\{[A-Za-z0-9_]+(?::?([-?])([^}]*))?\}",
                  lambda m: m.group(2) if m.group(1) == "-" else "", value)


def compose_mapping(value: object) -> dict:
    """A compose mapping (environment, build args), written as a mapping or as a list of NAME=value."""
    if isinstance(value, list):
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in value)
    return dict(value or {})


def compose_port_target(port: object) -> int:
    if isinstance(port, dict):
        return int(port["target"])
    return int(str(port).split("/")[0].rsplit(":", 1)[-1])


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    sale_window = None
    if "--sale-window" in argv:
        index = argv.index("--sale-window")
        sale_window = Path(argv[index + 1])
        argv = argv[:index] + argv[index + 2:]
    release = "--release" in argv
    argv = [a for a in argv if a != "--release"]
    checks = Checks(Path(argv[0]))
    checks.release = release
    checks.check_dockerfile()
    checks.check_compose()
    checks.check_references()
    checks.check_redis_version()
    for rendered in argv[1:]:
        checks.check_rendered(Path(rendered))
    prod = [Path(r) for r in argv[1:] if Path(r).stem == "prod"]
    if sale_window is not None and prod:
        checks.sale_day.check_sale_window([d for d in load_all_yaml(sale_window.read_text()) if d],
                                          [d for d in load_all_yaml(prod[0].read_text()) if d])
    if checks.problems:
        for problem in checks.problems:
            print(f"FAIL {problem}", file=sys.stderr)
        print(f"deploy checks: {checks.passed} passed, {len(checks.problems)} failed", file=sys.stderr)
        return 1
    print(f"deploy checks: {checks.passed} passed (env names vs application*.yml, ports, probes, "
          "grace periods, KEDA queue, NetworkPolicy ports, placeholder secrets)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
