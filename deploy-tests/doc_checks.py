"""The numbers the deployment pages state, against the manifests and the sale plan (issue 40, finding 8).

k8s/README.md and docs/operations.md quote sizes, bounds and timeouts; each quote is found by its sentence and
compared with what the rendered prod overlay, the base's ScaledObjects, the applications' configuration or
the sale plan hold. A quote whose sentence is gone fails too (the check is updated with the page). The plan's
output quoted in a page (between <!-- sale-plan --> and <!-- /sale-plan -->) must be the plan's output,
line for line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from manifests import container_of, env_of, load_all_yaml, named_config

if TYPE_CHECKING:
    from deploy_checks import Checks
    from sale_plan import SalePlan

PAGES_WITH_THE_PLAN = ("k8s/README.md", "docs/sale-capacity.md")
RUNBOOKS = ("k8s/README.md", "docs/operations.md")
# Runbook steps that take away what the data tier needs in the window (issue 40, finding 2): an operator scaled
# to nothing (redis-operator configures replication and tells the Sentinels which master to watch), or
# CloudNativePG's reconciliation switched off (its operator is what promotes a standby).
OPERATOR_REMOVED = [
    re.compile(r"kubectl\b[^`\n]*\bscale\b[^`\n]*operator[^`\n]*--replicas[= ]0\b"),
    re.compile(r"kubectl\b[^`\n]*\bscale\b[^`\n]*--replicas[= ]0\b[^`\n]*operator"),
    re.compile(r"cnpg\.io/reconciliationLoop=disabled"),
]
PLAN_BLOCK = re.compile(r"<!-- sale-plan -->\n(.*?)<!-- /sale-plan -->", re.S)


@dataclass(frozen=True)
class Facts:
    """What the quotes are compared with."""

    plan: SalePlan
    deployments: dict[str, dict]
    prod_scaled: dict[str, dict]
    base_scaled: dict[str, dict]
    poolers: list[dict]
    config: dict[str, str]
    worker_prefetch: int
    worker_consumers: int

    def container(self, app: str) -> dict:
        return container_of(self.deployments[app], app)

    def resources(self, app: str) -> tuple[str, str, str, str]:
        resources = self.container(app)["resources"]
        return (str(resources["requests"]["cpu"]), str(resources["limits"]["cpu"]),
                str(resources["requests"]["memory"]), str(resources["limits"]["memory"]))

    def cpu_target(self, scaled: dict) -> str:
        return next(t["metadata"]["value"] for t in scaled["order-api"]["spec"]["triggers"] if t["type"] == "cpu")

    def startup_seconds(self, app: str) -> int:
        probe = self.container(app)["startupProbe"]
        return probe["periodSeconds"] * probe["failureThreshold"]


@dataclass(frozen=True)
class Quote:
    page: str
    sentence: str  # a regular expression; its groups are the numbers
    expected: Callable[[Facts], tuple[object, ...]]


QUOTES = [
    Quote("docs/operations.md", r"KEDA `ScaledObject` \(CPU (\d+) %, (\d+)–(\d+) pods;",
          lambda f: (f.cpu_target(f.base_scaled), f.base_scaled["order-api"]["spec"]["minReplicaCount"],
                     f.base_scaled["order-api"]["spec"]["maxReplicaCount"])),
    Quote("docs/operations.md", r"The API scales on CPU \((\d+) %; (\d+)–(\d+) pods, (\d+)–(\d+) in prod\)",
          lambda f: (f.cpu_target(f.prod_scaled), f.base_scaled["order-api"]["spec"]["minReplicaCount"],
                     f.base_scaled["order-api"]["spec"]["maxReplicaCount"],
                     f.prod_scaled["order-api"]["spec"]["minReplicaCount"],
                     f.prod_scaled["order-api"]["spec"]["maxReplicaCount"])),
    Quote("docs/operations.md", r"the API scales on CPU through its KEDA `ScaledObject` \((\d+)–(\d+) pods; (\d+)–(\d+) in prod",
          lambda f: (f.base_scaled["order-api"]["spec"]["minReplicaCount"],
                     f.base_scaled["order-api"]["spec"]["maxReplicaCount"],
                     f.prod_scaled["order-api"]["spec"]["minReplicaCount"],
                     f.prod_scaled["order-api"]["spec"]["maxReplicaCount"])),
    Quote("docs/operations.md", r"the workers scale on queue length with KEDA \((\d+)–(\d+) pods",
          lambda f: (f.base_scaled["order-worker"]["spec"]["minReplicaCount"],
                     f.base_scaled["order-worker"]["spec"]["maxReplicaCount"])),
    Quote("docs/operations.md", r"the workers on the queue length, (\d+)–(\d+) pods",
          lambda f: (f.prod_scaled["order-worker"]["spec"]["minReplicaCount"],
                     f.prod_scaled["order-worker"]["spec"]["maxReplicaCount"])),
    Quote("docs/operations.md", r"CPU: the API requests (\S+) and is limited to (\S+) core\(s\), the worker requests (\S+) and "
          r"is limited to (\S+)",
          lambda f: (*f.resources("order-api")[:2], *f.resources("order-worker")[:2])),
    Quote("docs/operations.md", r"a start-up probe \((\d+) s for the API\)", lambda f: (f.startup_seconds("order-api"),)),
    Quote("docs/operations.md", r"scales `order-worker` between (\d+) and (\d+) pods",
          lambda f: (f.prod_scaled["order-worker"]["spec"]["minReplicaCount"],
                     f.prod_scaled["order-worker"]["spec"]["maxReplicaCount"])),
    Quote("docs/operations.md", r"The queue-length target is (\d+) messages per pod",
          lambda f: (next(t["metadata"]["value"] for t in f.prod_scaled["order-worker"]["spec"]["triggers"]
                          if t["type"] == "rabbitmq"),)),
    Quote("docs/operations.md", r"a Prometheus trigger, (\d+) orders/s per pod",
          lambda f: (int(f.plan.worker_orders_per_s_per_pod),)),
    Quote("docs/operations.md", r"concurrent batch transactions \((\d+) pods × (\d+) consumers? each\)",
          lambda f: (f.prod_scaled["order-worker"]["spec"]["maxReplicaCount"], f.worker_consumers)),
    Quote("docs/operations.md", r"each worker pod holds up to (\d+) of those",
          lambda f: (f.worker_prefetch * f.worker_consumers,)),
    Quote("docs/operations.md", r"`DB_POOL_SIZE` \((\d+)\) × \((\d+) API \+ (\d+) worker pods\) is (\d+) client connections, "
          r"under the Pooler's `max_client_conn` (\d+), which become at most (\d+) × (\d+) server connections",
          lambda f: (f.config["DB_POOL_SIZE"], f.prod_scaled["order-api"]["spec"]["maxReplicaCount"],
                     f.prod_scaled["order-worker"]["spec"]["maxReplicaCount"],
                     int(f.config["DB_POOL_SIZE"]) * (f.prod_scaled["order-api"]["spec"]["maxReplicaCount"]
                                                      + f.prod_scaled["order-worker"]["spec"]["maxReplicaCount"]),
                     f.poolers[0]["spec"]["pgbouncer"]["parameters"]["max_client_conn"],
                     f.poolers[0]["spec"]["instances"],
                     f.poolers[0]["spec"]["pgbouncer"]["parameters"]["default_pool_size"])),
    Quote("k8s/README.md", r"one Redis master spends ([\d.]+) of its one command thread against the bound ([\d.]+)",
          lambda f: (f"{f.plan.redis_core_share:.2f}", f"{f.plan.redis_max_core_share:g}")),
    Quote("k8s/README.md", r"the sale window holds (\d+) API pods and (\d+) workers, and the API's autoscaler may go to (\d+)",
          lambda f: (f.plan.api_pods, f.plan.worker_pods, f.plan.api_max_pods)),
]


class DocChecks:
    def __init__(self, checks: Checks) -> None:
        self.checks = checks

    def check(self, overlay: str, by_kind: dict, deployments: dict, plan: SalePlan | None) -> None:
        root = self.checks.root
        if plan is None:
            return
        for page in PAGES_WITH_THE_PLAN:
            path = root / page
            if not path.is_file():
                continue
            blocks = PLAN_BLOCK.findall(path.read_text())
            self.checks.expect(bool(blocks), f"{page}: no <!-- sale-plan --> block quoting the sale plan")
            for block in blocks:
                quoted = [line.strip() for line in block.splitlines() if line.strip()]
                wanted = [line.strip() for line in plan.lines()]
                self.checks.expect(quoted == wanted,
                                   f"{page}: the quoted sale plan differs from python3 deploy-tests/sale_plan.py's "
                                   f"output (first difference: {first_difference(quoted, wanted)})")
        for page in RUNBOOKS:
            path = root / page
            if path.is_file():
                for pattern in OPERATOR_REMOVED:
                    for match in pattern.finditer(path.read_text()):
                        self.checks.problems.append(
                            f"{page}: runbook step `{match.group(0)}` removes an operator the data tier depends on in the "
                            "window (freeze applies instead: apply only the sale window)")
        facts = self.facts(by_kind, deployments, plan)
        for quote in QUOTES:
            path = root / quote.page
            if not path.is_file():
                continue
            text = re.sub(r"\s+", " ", path.read_text())
            found = re.findall(quote.sentence, text)
            self.checks.expect(bool(found), f"{quote.page}: no sentence matching {quote.sentence!r} (update the page or "
                               "deploy-tests/doc_checks.py)")
            wanted = tuple(str(v) for v in quote.expected(facts))
            for numbers in found:
                numbers = (numbers,) if isinstance(numbers, str) else tuple(numbers)
                self.checks.expect(numbers == wanted,
                                   f"{quote.page}: states {numbers} where the manifests and the sale plan hold {wanted} "
                                   f"({quote.sentence!r})")

    def facts(self, by_kind: dict, deployments: dict, plan: SalePlan) -> Facts:
        base = [d for d in load_all_yaml((self.checks.root / "k8s/base/scaling/scaled-objects.yaml").read_text()) if d]
        worker = self.checks.apps["order-worker"]
        container = container_of(deployments["order-worker"], "order-worker")
        env = env_of(container)
        return Facts(
            plan=plan,
            deployments=deployments,
            prod_scaled={so["spec"]["scaleTargetRef"]["name"]: so for so in by_kind.get("ScaledObject", [])},
            base_scaled={so["spec"]["scaleTargetRef"]["name"]: so for so in base},
            poolers=by_kind.get("Pooler", []),
            config=named_config(by_kind),
            worker_prefetch=int(worker.resolve("spring.rabbitmq.listener.simple.prefetch", env)),
            worker_consumers=int(worker.resolve("spring.rabbitmq.listener.simple.concurrency", env)),
        )


def first_difference(quoted: list[str], wanted: list[str]) -> str:
    for have, want in zip(quoted, wanted):
        if have != want:
            return f"{have!r} should read {want!r}"
    return f"{len(quoted)} lines quoted, the plan prints {len(wanted)}"
