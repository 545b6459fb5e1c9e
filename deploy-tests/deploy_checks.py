"""Cross-checks between the deployment files and the applications' configuration.

Schema validation (compose-spec, Kubernetes, CRDs) says each file is well formed; these checks say
the files fit the applications: every variable given to an application container binds to a
property the application has, ports and probe paths are the ones the applications serve, shutdown
grace periods outlast Spring's shutdown phases, KEDA watches the queue the worker consumes, and no
committed Secret holds anything but a placeholder.

    python3 deploy-tests/deploy_checks.py ROOT RENDERED.yaml...

ROOT is the repository; each RENDERED.yaml is the output of `kustomize build` for one overlay.
Exits 1 and prints every problem found when a check fails.
"""

from __future__ import annotations

import base64
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

APPS = ("order-api", "order-worker")
COMMON_MODULE = "common"
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_.\-]+)(?::([^}]*))?\}")
# Read by the JVM or by Spring itself rather than through a key in the application's files.
NON_PROPERTY_VARIABLES = {"JAVA_TOOL_OPTIONS", "SPRING_PROFILES_ACTIVE"}
SECRET_PLACEHOLDER = "change-me"
LIVENESS_PATH = "/actuator/health/liveness"
READINESS_PATH = "/actuator/health/readiness"
PROMETHEUS_PATH = "/actuator/prometheus"


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
    for document in yaml.safe_load_all(path.read_text()):
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

    # Dockerfiles -------------------------------------------------------------------------

    def check_dockerfile(self, app: str) -> None:
        path = self.root / app / "Dockerfile"
        where = str(path.relative_to(self.root))
        if not path.is_file():
            self.problems.append(f"{where}: missing")
            return
        text = path.read_text()
        stages = re.findall(r"^FROM\s+(\S+)", text, re.MULTILINE)
        self.expect(len(stages) >= 2, f"{where}: not a multi-stage build")
        self.expect(bool(stages) and stages[-1].startswith("eclipse-temurin:25-jre"),
                    f"{where}: runtime stage is not eclipse-temurin:25-jre")
        self.expect(re.search(rf"\./mvnw -B\b.*-DskipTests -pl {app} -am package", text) is not None,
                    f"{where}: build stage does not run ./mvnw -B -DskipTests -pl {app} -am package")
        self.expect("-Djarmode=tools" in text and "extract --layers --launcher" in text,
                    f"{where}: the jar is not extracted into layers with the tools jarmode")
        users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
        self.expect(bool(users) and users[-1].split(":")[0] not in ("root", "0"),
                    f"{where}: runs as root")
        self.expect("MaxRAMPercentage" in text, f"{where}: no container-aware heap flag (MaxRAMPercentage)")
        default_port = self.server_port(app, {})
        exposed = [int(p) for p in re.findall(r"^EXPOSE\s+(\d+)", text, re.MULTILINE)]
        self.expect(exposed == [default_port], f"{where}: EXPOSE {exposed} but {app} listens on {default_port}")
        env_port = re.search(r"SERVER_PORT=(\d+)", text)
        image_port = int(env_port.group(1)) if env_port else default_port
        self.expect(image_port == default_port, f"{where}: SERVER_PORT={image_port} differs from EXPOSE {default_port}")
        health = re.search(r"^HEALTHCHECK\b((?:.*\\\n)*.*)", text, re.MULTILINE)
        self.expect(health is not None and "/actuator/health/" in health.group(1),
                    f"{where}: no HEALTHCHECK on an actuator health path")

    # docker-compose.yml ------------------------------------------------------------------

    def check_compose(self) -> None:
        path = self.root / "docker-compose.yml"
        compose = yaml.safe_load(path.read_text())
        services = compose.get("services", {})
        for app in APPS:
            where = f"docker-compose.yml services.{app}"
            service = services.get(app)
            if service is None:
                self.problems.append(f"{where}: missing")
                continue
            raw_env = service.get("environment", {})
            if isinstance(raw_env, list):
                raw_env = dict(item.split("=", 1) if "=" in item else (item, "") for item in raw_env)
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
            self.expect(service.get("build", {}).get("dockerfile") == f"{app}/Dockerfile" and
                        service.get("build", {}).get("context") in (".", "./"),
                        f"{where}: not built from {app}/Dockerfile with the repository root as context")
            grace = duration_seconds(str(service.get("stop_grace_period", "10s")))
            self.expect(grace > self.shutdown_phase(app),
                        f"{where}: stop_grace_period {grace}s does not outlast the {self.shutdown_phase(app)}s shutdown phase")
            for dependency, condition in (service.get("depends_on") or {}).items():
                self.expect(condition.get("condition") == "service_healthy",
                            f"{where}: depends_on {dependency} without condition service_healthy")
        worker = services.get("order-worker", {})
        self.expect("container_name" not in worker and not worker.get("ports"),
                    "docker-compose.yml services.order-worker: container_name or published ports prevent --scale")

    # Rendered Kubernetes overlays -------------------------------------------------------------

    def check_rendered(self, rendered: Path) -> None:
        docs = [d for d in yaml.safe_load_all(rendered.read_text()) if d]
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
        for pdb in by_kind.get("PodDisruptionBudget", []):
            selector = pdb["spec"]["selector"].get("matchLabels", {})
            self.expect(any(selector.items() <= d["spec"]["template"]["metadata"]["labels"].items()
                            for d in deployments.values()),
                        f"{overlay}: PodDisruptionBudget {pdb['metadata']['name']} selects no Deployment's pods")
        for hpa in by_kind.get("HorizontalPodAutoscaler", []):
            self.expect(hpa["spec"]["scaleTargetRef"]["name"] in deployments,
                        f"{overlay}: HorizontalPodAutoscaler {hpa['metadata']['name']} targets no Deployment")

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
        egress_ports = {pp.get("port") for p in policies if "Egress" in p["spec"].get("policyTypes", [])
                        and selects(p, app) for rule in p["spec"].get("egress", []) for pp in rule.get("ports", [])}
        ingress_ports = {pp.get("port") for p in own for rule in p["spec"].get("ingress", [])
                         for pp in rule.get("ports", [])}
        config = self.apps[app]
        needed = {
            "PostgreSQL": int(config.resolve("spring.datasource.url", env).split(":")[-1].split("/")[0]),
            "Redis": int(config.resolve("spring.data.redis.port", env)),
            "RabbitMQ": int(config.resolve("spring.rabbitmq.port", env)),
            "DNS": 53,
        }
        for what, needed_port in needed.items():
            self.expect(needed_port in egress_ports, f"{where}: egress to {what} port {needed_port} not allowed")
        self.expect(port in ingress_ports, f"{where}: ingress to port {port} (HTTP/metrics) not allowed")
        extra = ingress_ports - {port, self.management_port(app, env)}
        self.expect(not extra, f"{where}: ingress allows ports {sorted(extra)} that {app} does not serve")

    def check_keda(self, overlay: str, by_kind: dict, named: dict, deployments: dict,
                   worker_env: dict[str, str]) -> None:
        scaled = by_kind.get("ScaledObject", [])
        self.expect(len(scaled) == 1, f"{overlay}: expected one KEDA ScaledObject for order-worker")
        queue = self.apps["order-worker"].resolve("app.messaging.queue", worker_env)
        for so in scaled:
            where = f"{overlay}: ScaledObject {so['metadata']['name']}"
            target = so["spec"]["scaleTargetRef"]["name"]
            self.expect(target == "order-worker" and target in deployments, f"{where}: does not scale order-worker")
            for trigger in so["spec"]["triggers"]:
                self.expect(trigger["metadata"].get("queueName") == queue,
                            f"{where}: watches queue {trigger['metadata'].get('queueName')!r}, the worker consumes {queue!r}")
                auth = trigger.get("authenticationRef", {}).get("name")
                ta = named.get(("TriggerAuthentication", auth))
                self.expect(ta is not None, f"{where}: TriggerAuthentication {auth!r} is not part of the overlay")
                if ta is None:
                    continue
                for ref in ta["spec"].get("secretTargetRef", []):
                    secret = named.get(("Secret", ref["name"]))
                    self.expect(secret is not None and ref["key"] in (secret.get("data") or {}),
                                f"{overlay}: TriggerAuthentication {auth} reads missing Secret key {ref['name']}/{ref['key']}")
                for ref in ta["spec"].get("env", []):
                    self.expect(ref["name"] in worker_env and ref.get("containerName", "order-worker") == "order-worker",
                                f"{overlay}: TriggerAuthentication {auth} reads {ref['name']}, which order-worker's env lacks")


def selects(policy: dict, app: str) -> bool:
    selector = policy["spec"]["podSelector"]
    if selector.get("matchLabels", {}).get("app.kubernetes.io/name") == app:
        return True
    return any(e["key"] == "app.kubernetes.io/name" and e["operator"] == "In" and app in e["values"]
               for e in selector.get("matchExpressions", []))


def compose_default(value: str) -> str:
    """The value compose substitutes when the variable is unset: ${VAR:-default} -> default."""
    return re.sub(r"\$\{[A-Za-z0-9_]+(?::?-([^}]*))?\}", lambda m: m.group(1) or "", value)


def compose_port_target(port: object) -> int:
    if isinstance(port, dict):
        return int(port["target"])
    return int(str(port).split("/")[0].rsplit(":", 1)[-1])


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    checks = Checks(Path(argv[0]))
    for app in APPS:
        checks.check_dockerfile(app)
    checks.check_compose()
    for rendered in argv[1:]:
        checks.check_rendered(Path(rendered))
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
