"""The second sale-day review (issue 28): what the rendered overlays must hold beyond deploy_checks.py's.

Called by deploy_checks.Checks for each rendered overlay; each check names its finding:
1. the monitoring reaches what it watches (the Prometheus Operator's selector label, the API's way to the
   broker's management API with a user allowed to read it, scrapes of the data tier);
2. sizes from the declared sale (sale_plan.py): crons pinned to its date, replica counts, Guaranteed CPU,
   a PriorityClass, Redis's and the broker's headroom;
3. a data tier that survives a node: a broker PDB, one Redis node and one Sentinel per Kubernetes node, app
   pods that node autoscalers leave alone;
6. a sale window rendered on its own: ScaledObjects only, the same as the whole overlay's;
7. a broker sized to guidance and an order queue bounded from the plan;
8. workers at their measured concurrency, scaled on orders;
10. every image field read (by digest in a release), NetworkPolicies in front of the Postgres and RabbitMQ pods.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Protocol

from doc_checks import DocChecks
from images import image_is_pinned
from manifests import container_of, deployed, env_of, named_config
from network_policies import egress_ports, ingress_ports
from sale_plan import SALE_CAPACITY, SalePlan, plan, read_env


class Checks(Protocol):
    """What this review needs of deploy_checks.Checks, which calls it (named here, so neither imports the
    other)."""

    root: Path
    apps: dict[str, Any]
    release: bool

    def expect(self, condition: bool, problem: str) -> None: ...

# kube-prometheus-stack selects PodMonitors by its Helm release's name.
PROMETHEUS_SELECTOR = {"release": "prometheus"}
# Tags that let a RabbitMQ user read the management API.
MANAGEMENT_TAGS = {"management", "monitoring", "administrator"}
# The operator's production guidance for a RabbitMQ node (cluster-operator docs, "Production checklist").
RABBITMQ_MIN_CPU = 2.0
# Annotations node autoscalers honour (Cluster Autoscaler, Karpenter): they never evict these pods to
# consolidate nodes; KEDA's scale-in and kubectl drain still remove them.
NO_AUTOSCALER_EVICTION = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false", "karpenter.sh/do-not-disrupt": "true"}
# Ports the operators' pods expose for Prometheus: CloudNativePG instance, Pooler, RabbitMQ.
DATA_TIER_SCRAPE_PORTS = {"postgres": {9187, 9127}, "rabbitmq": {15692}}
# Issue 40, finding 6: the edge's request timeout is above the longest answer the API can give (derived from
# its properties, longest_answer_s), by at most this margin: a longer one only holds connections nobody reads.
EDGE_TIMEOUT_MARGIN_S = 5
# The properties records whose @DefaultValue stands when application.yml does not set the key.
PROPERTIES_RECORDS = {
    "app.purchase": "order-api/src/main/java/dev/flashsale/api/purchase/PurchaseProperties.java",
    "app.door.line": "order-api/src/main/java/dev/flashsale/api/door/WaitingLineProperties.java",
}


def cpu_cores(quantity: object) -> float:
    text = str(quantity)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def seconds(value: str) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)", value)
    if not match:
        raise ValueError(f"unparseable duration {value!r}")
    return float(match.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[match.group(2)]


def sale_plan(root: Path) -> SalePlan | None:
    path = root / SALE_CAPACITY
    return plan(read_env(path)) if path.is_file() else None


def images(node: object, path: str = "") -> list[tuple[str, str]]:
    """Every image field of a document, wherever an operator puts it (image, imageName, *Image)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}.{key}" if path else key
            if isinstance(value, str) and (key in ("image", "imageName") or key.endswith("Image")):
                found.append((where, value))
            else:
                found += images(value, where)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += images(item, f"{path}[{index}]")
    return found


class SaleDayChecks:
    def __init__(self, checks: Checks) -> None:
        self.checks = checks
        self.plan = sale_plan(checks.root)

    def expect(self, condition: bool, problem: str) -> None:
        self.checks.expect(condition, problem)

    def check(self, overlay: str, docs: list[dict], by_kind: dict, deployments: dict) -> None:
        self.check_monitoring(overlay, by_kind, deployments)
        self.check_resources(overlay, by_kind, deployments)
        self.check_node_loss(overlay, by_kind, deployments)
        self.check_worker(overlay, deployments)
        self.check_images(overlay, docs)
        if overlay == "prod":
            self.check_plan(overlay, by_kind, deployments)
            DocChecks(self.checks).check(overlay, by_kind, deployments, self.plan)
            self.check_broker(overlay, by_kind)
            self.check_data_tier_policies(overlay, by_kind)
            self.check_data_tier_held(overlay, by_kind)
            self.check_canary_gate(overlay, deployments)
            self.check_edge(overlay, by_kind)

    # 1. Monitoring that sees ------------------------------------------------------------------------

    def check_monitoring(self, overlay: str, by_kind: dict, deployments: dict) -> None:
        monitors = by_kind.get("PodMonitor", []) + by_kind.get("ServiceMonitor", [])
        for monitor in monitors:
            labels = monitor["metadata"].get("labels") or {}
            self.expect(PROMETHEUS_SELECTOR.items() <= labels.items(),
                        f"{overlay}: {monitor['kind']} {monitor['metadata']['name']} lacks the label {PROMETHEUS_SELECTOR}: "
                        "kube-prometheus-stack's Prometheus ignores it and scrapes nothing")
        api = deployments.get("order-api")
        if api is not None:
            # The default URL's port (a placeholder with a nested one: ${RABBITMQ_MANAGEMENT_URL:http://${host}:15672}).
            url = str(self.checks.apps["order-api"].properties.get("app.ops.broker-management-url", ""))
            port = int(re.search(r":(\d+)[/}]*$", url).group(1)) if re.search(r":(\d+)[/}]*$", url) else 80
            egress = egress_ports(by_kind.get("NetworkPolicy", []), "order-api")
            self.expect(port in egress, f"{overlay}: NetworkPolicy for order-api: egress to the broker's management API "
                        f"(port {port}, app.ops.broker-management-url) not allowed: flashsale_queue_messages stays empty")
            rabbit_ingress = ingress_ports(by_kind.get("NetworkPolicy", []), "rabbitmq")
            if rabbit_ingress:
                self.expect(port in rabbit_ingress, f"{overlay}: NetworkPolicy rabbitmq does not admit the management API "
                            f"(port {port}) the API reads")
            users = {u["metadata"]["name"]: u for u in by_kind.get("User", [])}
            container = container_of(api, "order-api")
            for variable in container.get("env", []):
                ref = ((variable.get("valueFrom") or {}).get("secretKeyRef") or {}).get("name", "")
                if variable["name"] == "RABBITMQ_USER" and ref.endswith("-user-credentials"):
                    user = users.get(ref.removesuffix("-user-credentials"))
                    tags = set((user or {}).get("spec", {}).get("tags") or [])
                    self.expect(bool(tags & MANAGEMENT_TAGS),
                                f"{overlay}: User {ref.removesuffix('-user-credentials')} (order-api's broker user) has no "
                                f"management tag {sorted(MANAGEMENT_TAGS)}: the management API refuses its queue reads")
        if overlay != "prod":
            return
        scraped = [m["spec"].get("selector", {}).get("matchLabels", {}) for m in monitors]
        for cluster in by_kind.get("Cluster", []):
            self.expect(any(s and s.items() <= {"cnpg.io/cluster": cluster["metadata"]["name"], "cnpg.io/podRole": "instance"}.items()
                            for s in scraped),
                        f"{overlay}: nothing scrapes Cluster {cluster['metadata']['name']}'s instances (cnpg_* metrics)")
        for pooler in by_kind.get("Pooler", []):
            self.expect(any(s and s.items() <= {"cnpg.io/poolerName": pooler["metadata"]["name"]}.items() for s in scraped),
                        f"{overlay}: nothing scrapes Pooler {pooler['metadata']['name']}")
        for broker in by_kind.get("RabbitmqCluster", []):
            self.expect(any(s == {"app.kubernetes.io/name": broker["metadata"]["name"]} for s in scraped),
                        f"{overlay}: nothing scrapes RabbitmqCluster {broker['metadata']['name']} (rabbitmq_* on 15692)")

    # 2. Sizes from the declared sale -------------------------------------------------------------------

    def check_resources(self, overlay: str, by_kind: dict, deployments: dict) -> None:
        priorities = {pc["metadata"]["name"]: pc["value"] for pc in by_kind.get("PriorityClass", [])}
        for app, deployment in deployed(deployments):
            where = f"{overlay}: Deployment {app}"
            pod = deployment["spec"]["template"]["spec"]
            for container in pod.get("initContainers", []) + pod["containers"]:
                resources = container.get("resources", {})
                requests, limits = resources.get("requests", {}), resources.get("limits", {})
                for resource in ("cpu", "memory"):
                    self.expect(resource in limits and str(requests.get(resource)) == str(limits[resource]),
                                f"{where} container {container['name']}: {resource} request {requests.get(resource)} != limit "
                                f"{limits.get(resource)}: not Guaranteed QoS (throttled to its request in the burst)")
            priority = pod.get("priorityClassName")
            self.expect(priority in priorities and priorities[priority] < priorities.get("flashsale-data", 0),
                        f"{where}: no PriorityClass of its own below flashsale-data ({priority!r})")

    def check_plan(self, overlay: str, by_kind: dict, deployments: dict) -> None:
        sale = self.plan
        self.expect(sale is not None, f"{overlay}: no declared sale ({SALE_CAPACITY}): sizes come from nowhere")
        if sale is None:
            return
        pods = {"order-api": sale.api_pods, "order-worker": sale.worker_pods}
        cpus = {"order-api": sale.api_pod_cpu, "order-worker": sale.worker_pod_cpu}
        for app, deployment in deployed(deployments):
            container = container_of(deployment, app)
            cpu = cpu_cores(container.get("resources", {}).get("limits", {}).get("cpu", "0"))
            self.expect(cpu == cpus[app], f"{overlay}: Deployment {app}: CPU {cpu:g}, the sale plan sizes pods of {cpus[app]:g}")
        for so in by_kind.get("ScaledObject", []):
            app = so["spec"]["scaleTargetRef"]["name"]
            where = f"{overlay}: ScaledObject {so['metadata']['name']}"
            crons = [t for t in so["spec"]["triggers"] if t["type"] == "cron"]
            self.expect(len(crons) == 1, f"{where}: {len(crons)} sale-window cron triggers, expected one for the declared sale")
            for trigger in crons:
                metadata = trigger["metadata"]
                self.expect(metadata.get("timezone") == sale.timezone and metadata.get("start") == sale.start_cron
                            and metadata.get("end") == sale.end_cron,
                            f"{where}: sale window {metadata.get('start')!r} to {metadata.get('end')!r} "
                            f"({metadata.get('timezone')}) is not the declared sale's {sale.start_cron!r} to {sale.end_cron!r} "
                            f"({sale.timezone}): a cron must be pinned to the sale's date")
                self.expect(int(metadata.get("desiredReplicas", 0)) == pods.get(app),
                            f"{where}: sale window holds {metadata.get('desiredReplicas')} pods, the sale plan derives "
                            f"{pods.get(app)} (python3 deploy-tests/sale_plan.py)")
            self.expect(so["spec"].get("maxReplicaCount", 0) >= pods.get(app, 0) and
                        so["spec"].get("minReplicaCount", 1) <= pods.get(app, 0),
                        f"{where}: replica bounds {so['spec'].get('minReplicaCount')}..{so['spec'].get('maxReplicaCount')} "
                        f"do not hold the plan's {pods.get(app)}")
            if app == "order-api":
                # Issue 40, finding 1: the maximum comes out of the plan, and the autoscaler's CPU target is the
                # plan's own assumption (one number).
                self.expect(so["spec"].get("maxReplicaCount") == sale.api_max_pods,
                            f"{where}: maxReplicaCount {so['spec'].get('maxReplicaCount')}, the sale plan derives "
                            f"{sale.api_max_pods} ({sale.api_pods} pods x API_MAX_OVER_PLAN)")
                targets = [float(t["metadata"]["value"]) for t in so["spec"]["triggers"] if t["type"] == "cpu"]
                self.expect(targets == [sale.target_cpu_utilization * 100],
                            f"{where}: CPU target {targets} %, the sale plan sizes the fleet for "
                            f"{sale.target_cpu_utilization * 100:g} % (TARGET_CPU_UTILIZATION)")
            if app == "order-worker":
                rates = [t for t in so["spec"]["triggers"] if t["type"] == "prometheus"
                         and "flashsale_purchases_total" in t["metadata"].get("query", "") and "ACCEPTED" in t["metadata"]["query"]]
                self.expect(len(rates) == 1 and float(rates[0]["metadata"]["threshold"]) == sale.worker_orders_per_s_per_pod,
                            f"{where}: no trigger on the accepted orders' rate with the plan's "
                            f"{sale.worker_orders_per_s_per_pod:g} orders/s per pod: the fleet scales on messages, not orders")
        self.expect(sale.redis_core_share <= sale.redis_max_core_share,
                    f"{overlay}: the declared sale needs {sale.redis_core_share:.2f} of Redis's one command thread, above the "
                    f"bound {sale.redis_max_core_share:g}: one master cannot take this sale")
        for replication in by_kind.get("RedisReplication", []):
            cpu = cpu_cores(replication["spec"].get("kubernetesConfig", {}).get("resources", {}).get("requests", {}).get("cpu", "0"))
            self.expect(cpu >= sale.redis_core_share / sale.redis_max_core_share,
                        f"{overlay}: RedisReplication {replication['metadata']['name']}: CPU request {cpu:g} is below the "
                        f"{sale.redis_core_share / sale.redis_max_core_share:.2f} the sale needs")
        # Issue 40, finding 7: the queue's bound counts messages of one ASYNC group commit each.
        api = self.checks.apps["order-api"]
        max_batch = api.resolve("app.purchase.async.max-batch", {})
        linger = api.resolve("app.purchase.async.linger", {})
        self.expect(max_batch is not None and float(max_batch) == sale.orders_per_message_max,
                    f"{overlay}: ORDERS_PER_MESSAGE_MAX {sale.orders_per_message_max:g} is not order-api's "
                    f"app.purchase.async.max-batch {max_batch}")
        self.expect(linger is not None and seconds(linger) * 1000 == sale.async_linger_ms,
                    f"{overlay}: ASYNC_LINGER_MS {sale.async_linger_ms:g} is not order-api's app.purchase.async.linger {linger}")
        self.check_pooler_connections(overlay, by_kind)
        for broker in by_kind.get("RabbitmqCluster", []):
            cpu = cpu_cores(broker["spec"].get("resources", {}).get("requests", {}).get("cpu", "0"))
            self.expect(cpu >= sale.rabbitmq_node_cpu_needed(),
                        f"{overlay}: RabbitmqCluster {broker['metadata']['name']}: CPU request {cpu:g} is below the "
                        f"{sale.rabbitmq_node_cpu_needed():.2f} the sale needs on the queue leader's node")

    def check_pooler_connections(self, overlay: str, by_kind: dict) -> None:
        """Every pod the autoscalers may run, at its pool size, fits under each Pooler's max_client_conn."""
        pool = int(named_config(by_kind).get("DB_POOL_SIZE", "0"))
        pods = sum(so["spec"].get("maxReplicaCount", 0) for so in by_kind.get("ScaledObject", []))
        for pooler in by_kind.get("Pooler", []):
            limit = int(pooler["spec"]["pgbouncer"].get("parameters", {}).get("max_client_conn", "100"))
            self.expect(pods * pool <= limit,
                        f"{overlay}: Pooler {pooler['metadata']['name']}: {pods} pods at most x DB_POOL_SIZE {pool} = "
                        f"{pods * pool} client connections, above max_client_conn {limit}")

    # 3. A node's loss ------------------------------------------------------------------------------------

    def check_node_loss(self, overlay: str, by_kind: dict, deployments: dict) -> None:
        for app, deployment in deployed(deployments):
            annotations = deployment["spec"]["template"]["metadata"].get("annotations") or {}
            self.expect(NO_AUTOSCALER_EVICTION.items() <= annotations.items(),
                        f"{overlay}: Deployment {app}: node autoscalers may evict its warm pods mid-sale "
                        f"(annotations {NO_AUTOSCALER_EVICTION})")
        pdbs = by_kind.get("PodDisruptionBudget", [])
        for broker in by_kind.get("RabbitmqCluster", []):
            name, replicas = broker["metadata"]["name"], broker["spec"].get("replicas", 1)
            budgets = [p for p in pdbs if p["spec"]["selector"].get("matchLabels") == {"app.kubernetes.io/name": name}]
            self.expect(any(p["spec"].get("maxUnavailable") == 1 or
                            p["spec"].get("minAvailable", 0) > replicas // 2 for p in budgets),
                        f"{overlay}: RabbitmqCluster {name}: no PodDisruptionBudget keeping a majority of its {replicas} "
                        "brokers: a drain can take two and stop the quorum queues")
        for kind, label in (("RedisReplication", "{name}"), ("RedisSentinel", "{name}-sentinel")):
            for resource in by_kind.get(kind, []):
                app = label.format(name=resource["metadata"]["name"])
                terms = (resource["spec"].get("affinity", {}).get("podAntiAffinity", {})
                         .get("requiredDuringSchedulingIgnoredDuringExecution", []))
                self.expect(any(t.get("topologyKey") == "kubernetes.io/hostname" and
                                t.get("labelSelector", {}).get("matchLabels") == {"app": app} for t in terms),
                            f"{overlay}: {kind} {resource['metadata']['name']}: no required anti-affinity per node: the master "
                            "and two Sentinels can share a node, and its loss leaves no quorum to fail over")

    def check_data_tier_held(self, overlay: str, by_kind: dict) -> None:
        """Issue 40, finding 3: no data-tier pod, the Pooler included, can be evicted or preempted in the window
        except one at a time by a drain: a budget, the data tier's priority, one pod per node, Guaranteed
        resources, and the annotations node autoscalers honour."""
        hostname = "kubernetes.io/hostname"
        pdbs = [p["spec"]["selector"].get("matchLabels") or {} for p in by_kind.get("PodDisruptionBudget", [])]

        def required_per_node(affinity: dict, labels: dict) -> bool:
            terms = (affinity or {}).get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])
            return any(t.get("topologyKey") == hostname and t.get("labelSelector", {}).get("matchLabels") == labels
                       for t in terms)

        held = []  # (where, priority, budget, one per node, [resources], annotations)
        for cluster in by_kind.get("Cluster", []):
            spec = cluster["spec"]
            affinity = spec.get("affinity", {})
            held.append((f"Cluster {cluster['metadata']['name']}", spec.get("priorityClassName"),
                         spec.get("enablePDB", True) is not False,
                         affinity.get("enablePodAntiAffinity") is True and affinity.get("podAntiAffinityType") == "required"
                         and affinity.get("topologyKey") == hostname,
                         [spec.get("resources", {})], spec.get("inheritedMetadata", {}).get("annotations") or {}))
        for pooler in by_kind.get("Pooler", []):
            name, template = pooler["metadata"]["name"], pooler["spec"].get("template", {})
            pod = template.get("spec", {})
            held.append((f"Pooler {name}", pod.get("priorityClassName"), {"cnpg.io/poolerName": name} in pdbs,
                         required_per_node(pod.get("affinity"), {"cnpg.io/poolerName": name}),
                         [next((c.get("resources", {}) for c in pod.get("containers", []) if c["name"] == "pgbouncer"), {})],
                         template.get("metadata", {}).get("annotations") or {}))
        for broker in by_kind.get("RabbitmqCluster", []):
            name, spec = broker["metadata"]["name"], broker["spec"]
            template = spec.get("override", {}).get("statefulSet", {}).get("spec", {}).get("template", {})
            held.append((f"RabbitmqCluster {name}", template.get("spec", {}).get("priorityClassName"),
                         {"app.kubernetes.io/name": name} in pdbs,
                         required_per_node(spec.get("affinity"), {"app.kubernetes.io/name": name}),
                         [spec.get("resources", {})], template.get("metadata", {}).get("annotations") or {}))
        for kind, label in (("RedisReplication", "{name}"), ("RedisSentinel", "{name}-sentinel")):
            for resource in by_kind.get(kind, []):
                name, spec = resource["metadata"]["name"], resource["spec"]
                resources = [spec.get("kubernetesConfig", {}).get("resources", {})]
                if spec.get("redisExporter", {}).get("enabled"):
                    resources.append(spec["redisExporter"].get("resources", {}))
                held.append((f"{kind} {name}", spec.get("priorityClassName"), spec.get("pdb", {}).get("enabled") is True,
                             required_per_node(spec.get("affinity"), {"app": label.format(name=name)}), resources,
                             resource["metadata"].get("annotations") or {}))
        for where, priority, budget, per_node, resources, annotations in held:
            where = f"{overlay}: {where}"
            self.expect(priority == "flashsale-data", f"{where}: priority {priority!r}, not flashsale-data: an application "
                        "scale-out can preempt it")
            self.expect(budget, f"{where}: no PodDisruptionBudget: a drain can take all its pods at once")
            self.expect(per_node, f"{where}: no required anti-affinity per node: one node's loss can take two of its pods")
            for resource in resources:
                requests, limits = resource.get("requests", {}), resource.get("limits", {})
                self.expect(all(r in limits and str(requests.get(r)) == str(limits[r]) for r in ("cpu", "memory")),
                            f"{where}: requests {requests} != limits {limits}: not Guaranteed QoS (evicted first under "
                            "node pressure)")
            self.expect(NO_AUTOSCALER_EVICTION.items() <= annotations.items(),
                        f"{where}: node autoscalers may evict its pods mid-sale (annotations {NO_AUTOSCALER_EVICTION})")

    def check_canary_gate(self, overlay: str, deployments: dict) -> None:
        """Issue 40, finding 5: a release reaches the fleet only through a canary pod whose purchases succeed
        (k8s/canary.sh reads the gate from these annotations): no gate, or one that does not read the canary's
        purchase answers, server errors with 503 among them, and its warm-up, is rejected."""
        api = deployments.get("order-api")
        if api is None:
            return
        annotations = api["metadata"].get("annotations") or {}
        query = re.sub(r"\s+", " ", annotations.get("flashsale.dev/canary-gate-query", ""))
        where = f"{overlay}: Deployment order-api"
        self.expect(bool(query), f"{where}: no purchase-success gate (flashsale.dev/canary-gate-query): a release that "
                    "fails every purchase turns Ready and rolls through every pod")
        if not query:
            return
        self.expect('pod=~"order-api-canary-.+"' in query and 'uri="/api/v1/sales/{saleId}/orders"' in query
                    and 'status!~"5.."' in query,
                    f"{where}: the canary gate does not read the canary pod's purchase answers that are not 5xx "
                    f"(503 included): {query!r}")
        self.expect("flashsale_warmup_failed" in query, f"{where}: the canary gate ignores the canary's warm-up "
                    "(flashsale_warmup_failed)")
        minimum = annotations.get("flashsale.dev/canary-gate-min", "")
        self.expect(re.fullmatch(r"0?\.\d+|1(\.0*)?", minimum) is not None and float(minimum) >= 0.9,
                    f"{where}: canary gate minimum {minimum!r} is not a share of at least 0.9")

    # 6. The sale window on its own --------------------------------------------------------------------

    def check_sale_window(self, window: list[dict], prod: list[dict]) -> None:
        kinds = sorted({d["kind"] for d in window})
        self.expect(kinds == ["ScaledObject"], f"sale-window: renders {kinds}, not ScaledObjects only: applying it mid-sale "
                    "would re-apply more than the calendar")
        key = lambda d: (d["kind"], d["metadata"]["name"])  # noqa: E731
        ours = {key(d): d for d in window}
        theirs = {key(d): d for d in prod if d["kind"] == "ScaledObject"}
        self.expect(ours == theirs, "sale-window: its ScaledObjects differ from the prod overlay's "
                    f"({sorted(set(ours) ^ set(theirs)) or 'same names, different specs'})")

    # 7. The broker --------------------------------------------------------------------------------------

    def check_broker(self, overlay: str, by_kind: dict) -> None:
        for broker in by_kind.get("RabbitmqCluster", []):
            cpu = cpu_cores(broker["spec"].get("resources", {}).get("requests", {}).get("cpu", "0"))
            self.expect(cpu >= RABBITMQ_MIN_CPU, f"{overlay}: RabbitmqCluster {broker['metadata']['name']}: CPU request "
                        f"{cpu:g}, below the operator's production guidance of {RABBITMQ_MIN_CPU:g}")
        queue = self.checks.apps["order-worker"].resolve("app.messaging.queue", {})
        policies = [p for p in by_kind.get("Policy", []) if re.search(p["spec"]["pattern"], queue)]
        self.expect(len(policies) == 1, f"{overlay}: {len(policies)} Policies match queue {queue}: RabbitMQ applies one")
        for policy in policies:
            definition = policy["spec"].get("definition", {})
            wanted = self.plan.order_queue_max_length if self.plan else None
            self.expect(definition.get("max-length") == wanted and definition.get("overflow", "reject-publish") == "reject-publish",
                        f"{overlay}: Policy {policy['metadata']['name']}: max-length {definition.get('max-length')}, the sale plan "
                        f"bounds {queue} at {wanted} (reject-publish): unbounded, the broker's memory alarm blocks every publisher")

    # 8. The workers ---------------------------------------------------------------------------------------

    def check_worker(self, overlay: str, deployments: dict) -> None:
        worker = deployments.get("order-worker")
        if worker is None:
            return
        container = container_of(worker, "order-worker")
        env = env_of(container)
        config = self.checks.apps["order-worker"]
        measured = config.resolve("spring.rabbitmq.listener.simple.concurrency", {})
        deployed = config.resolve("spring.rabbitmq.listener.simple.concurrency", env)
        self.expect(deployed == measured, f"{overlay}: Deployment order-worker: {deployed} consumers per pod override the "
                    f"measured default of {measured} (docs/decisions/0003-one-worker-consumer-100ms-batches.md)")

    # 9. The edge ---------------------------------------------------------------------------------------

    def api_property(self, key: str) -> str:
        """order-api's value for a key: application.yml's (placeholders at their defaults), else its record's
        @DefaultValue."""
        value = self.checks.apps["order-api"].resolve(key, {})
        if value:
            return str(value)
        prefix, name = key.rsplit(".", 1)
        camel = re.sub(r"-(\w)", lambda m: m.group(1).upper(), name)
        source = (self.checks.root / PROPERTIES_RECORDS[prefix]).read_text()
        match = re.search(rf'@DefaultValue\("([^"]*)"\)[^,)]*\b{camel}\b', source)
        if match is None:
            raise ValueError(f"no value for {key}: neither application.yml nor {PROPERTIES_RECORDS[prefix]} sets it")
        return match.group(1)

    def longest_answer_s(self) -> tuple[float, str]:
        """The longest a purchase can take inside the API, and how: the waiting line at a full door, then the
        slowest of SYNC's commit (plus the lookup of an unknown outcome, one query), ASYNC's confirm plus
        Prefer: wait, or a replay's wait for its original plus its own confirm."""
        s = lambda key: seconds(self.api_property(key))  # noqa: E731
        line = s("app.door.line.max-wait") if self.api_property("app.door.line.enabled").lower() == "true" else 0
        paths = {
            "SYNC commit-timeout + a lookup (spring.jdbc.template.query-timeout)":
                s("app.purchase.commit-timeout") + seconds(str(self.checks.apps["order-api"].resolve(
                    "spring.jdbc.template.query-timeout", {}))),
            "ASYNC confirm-timeout + max-prefer-wait": s("app.purchase.confirm-timeout") + s("app.purchase.max-prefer-wait"),
            "replay-wait + confirm-timeout": s("app.purchase.replay-wait") + s("app.purchase.confirm-timeout"),
        }
        slowest = max(paths, key=paths.get)
        return line + paths[slowest], f"line max-wait {line:g} s + {slowest} {paths[slowest]:g} s"

    def check_edge(self, overlay: str, by_kind: dict) -> None:
        longest, how = self.longest_answer_s()
        routes = [r for r in by_kind.get("HTTPRoute", [])
                  if any(b.get("name") == "order-api" for rule in r["spec"].get("rules", []) for b in rule.get("backendRefs", []))]
        self.expect(bool(routes), f"{overlay}: no HTTPRoute to order-api: no edge with timeouts in front of the API")
        for route in routes:
            for rule in route["spec"].get("rules", []):
                where = f"{overlay}: HTTPRoute {route['metadata']['name']}"
                timeout = rule.get("timeouts", {}).get("request")
                self.expect(timeout is not None and longest < seconds(timeout) <= longest + EDGE_TIMEOUT_MARGIN_S,
                            f"{where}: rule without a request timeout above the API's longest answer, {longest:g} s "
                            f"({how}), by at most {EDGE_TIMEOUT_MARGIN_S} s ({timeout!r}): the edge cuts accepted orders")
                self.expect(not rule.get("retry"), f"{where}: retries a request: a POST purchase must never be retried by the edge")

    # 10. Provenance --------------------------------------------------------------------------------------

    def check_images(self, overlay: str, docs: list[dict]) -> None:
        # A release (validate-deploy.sh --release, after k8s/pin-images.sh) runs images by digest only: a tag
        # can be pushed again, a digest names one build.
        release = self.checks.release and overlay == "prod"
        for doc in docs:
            for where, image in images(doc.get("spec") or {}):
                self.expect(image_is_pinned(image, overlay),
                            f"{overlay}: {doc['kind']} {doc['metadata']['name']} {where}: image {image!r} is not an "
                            "immutable tag or digest")
                if release:
                    self.expect("@sha256:" in image,
                                f"{overlay}: {doc['kind']} {doc['metadata']['name']} {where}: image {image!r} has no "
                                "digest (release: run k8s/pin-images.sh)")

    def check_data_tier_policies(self, overlay: str, by_kind: dict) -> None:
        policies = by_kind.get("NetworkPolicy", [])
        for label, kinds in (("postgres", ("Cluster", "Pooler")), ("rabbitmq", ("RabbitmqCluster",))):
            if not any(by_kind.get(kind) for kind in kinds):
                continue
            opened = ingress_ports(policies, label)
            self.expect(bool(opened), f"{overlay}: no NetworkPolicy admits traffic to the {label} pods: anything in the "
                        "cluster reaches them")
            missing = DATA_TIER_SCRAPE_PORTS[label] - ingress_ports(policies, label, "monitoring")
            self.expect(bool(opened) and not missing, f"{overlay}: NetworkPolicy for the {label} pods does not admit "
                        f"Prometheus (namespace monitoring) on {sorted(missing)}")


