"""The sale plan: what a declared sale (k8s/overlays/prod/sale-capacity.env) needs from the prod overlay.

    python3 deploy-tests/sale_plan.py k8s/overlays/prod/sale-capacity.env

prints the plan; deploy_checks.py (through scripts/validate-deploy.sh) fails when the rendered prod overlay
disagrees with it (issue 28, finding 2). The model is a cost per path: every accepted order and every
refusal costs the measured CPU of each process it passes through, so at the peak

    API cores   = orders/s x API ms per order + refusals/s x API ms per refusal
    Redis share = orders/s x Redis ms per order + refusals/s x Redis ms per refusal   (of its one command thread)
    broker      = orders/s x RabbitMQ ms per order                              (of the queue leader's node)

and a fleet is sized so that it still runs at the target use after losing one zone. The API's pods are held
from the pre-warm on (the sale window's desiredReplicas); its autoscaler may add up to API_MAX_OVER_PLAN times
that for a crowd above the declared one (maxReplicaCount). The order queue's bound is in messages, as RabbitMQ
counts x-max-length: the peak's publishes per second (one group commit's orders a message) times the seconds
it may hold. The reasoning and the numbers: docs/sale-capacity.md.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

SALE_CAPACITY = Path("k8s/overlays/prod/sale-capacity.env")


def read_env(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    return values


def cron(moment: datetime) -> str:
    """A five-field cron expression (KEDA's cron scaler) that fires once a year, on this date."""
    return f"{moment.minute} {moment.hour} {moment.day} {moment.month} *"


@dataclass(frozen=True)
class SalePlan:
    timezone: str
    scale_out: datetime
    scale_in: datetime
    orders_per_s: float
    refusals_per_s: float
    api_cores: float
    api_pods: int
    api_max_pods: int
    api_pod_cpu: float
    target_cpu_utilization: float
    worker_pods: int
    worker_pod_cpu: float
    worker_orders_per_s_per_pod: float
    redis_core_share: float
    redis_max_core_share: float
    rabbitmq_cores: float
    rabbitmq_max_node_share: float
    order_queue_max_length: int
    orders_per_message: float
    order_queue_max_orders: int
    order_queue_max_seconds: float
    orders_per_message_max: float
    async_linger_ms: float
    refusal_cost_measured: bool
    ping_ms_order_run: float
    ping_ms_refusal_run: float
    api_ms_per_refusal: float

    @property
    def start_cron(self) -> str:
        return cron(self.scale_out)

    @property
    def end_cron(self) -> str:
        return cron(self.scale_in)

    def rabbitmq_node_cpu_needed(self) -> float:
        return self.rabbitmq_cores / self.rabbitmq_max_node_share

    def lines(self) -> list[str]:
        return [
            f"sale window   {self.scale_out:%Y-%m-%d %H:%M} to {self.scale_in:%Y-%m-%d %H:%M} {self.timezone}"
            f" (cron start '{self.start_cron}', end '{self.end_cron}')",
            f"peak          {self.orders_per_s:.0f} orders/s accepted, {self.refusals_per_s:.0f} refusals/s"
            + ("" if self.refusal_cost_measured else "  [cost per refusal is a PLACEHOLDER]"),
            f"order-api     {self.api_cores:.2f} cores at the peak -> {self.api_pods} pods of {self.api_pod_cpu:g} CPU"
            f" (requests = limits) from the pre-warm on, at most {self.api_max_pods}; CPU target"
            f" {self.target_cpu_utilization * 100:g} %",
            f"order-worker  {self.worker_pods} pods of {self.worker_pod_cpu:g} CPU; KEDA target"
            f" {self.worker_orders_per_s_per_pod:g} accepted orders/s per pod",
            f"redis         {self.redis_core_share:.2f} of its one command thread (bound {self.redis_max_core_share:g})",
            f"rabbitmq      {self.rabbitmq_cores:.2f} cores on the queue leader's node (needs a CPU request >="
            f" {self.rabbitmq_node_cpu_needed():.2f})",
            f"order queue   x-max-length {self.order_queue_max_length} messages: {self.order_queue_max_seconds:g} s of the"
            f" peak's publishes at {self.orders_per_message:g} order(s) a message; at most"
            f" {self.order_queue_max_orders} orders in full messages",
            f"measured at   orders on a box whose ping cost {self.ping_ms_order_run:g} ms, refusals on one at"
            f" {self.ping_ms_refusal_run:g} ms (x{self.ping_ms_refusal_run / self.ping_ms_order_run:.2f}): the refusals,"
            f" {self.refusal_api_share() * 100:.0f} % of the API's cores, are costed on the slower box",
        ]

    def refusal_api_share(self) -> float:
        return self.refusals_per_s * self.api_ms_per_refusal / 1000 / self.api_cores


def plan(env: dict[str, str]) -> SalePlan:
    number = lambda key: float(env[key])  # noqa: E731
    opens = datetime.fromisoformat(env["SALE_OPENS"])
    closes = datetime.fromisoformat(env["SALE_CLOSES"])
    if closes <= opens:
        raise ValueError(f"SALE_CLOSES {closes} is not after SALE_OPENS {opens}")
    # Rounded: 50,000 x (1 - 0.98) is 1000.0000000000009 in floating point.
    orders = round(number("PEAK_ARRIVALS_PER_S") * (1 - number("REFUSAL_SHARE")), 6)
    refusals = round(number("PEAK_ARRIVALS_PER_S") * number("REFUSAL_SHARE"), 6)
    # A refusal after sell-out is answered from the API's memory; what Redis spends per refusal is its
    # share of the background (the flash-sale drill's "cost after sell-out" step).
    api_refusal_ms = number("API_MS_PER_REFUSAL")
    redis_refusal_ms = number("REDIS_MS_PER_REFUSAL")
    zones = number("ZONES")
    survive_a_zone = zones / (zones - 1)
    api_cores = (orders * number("API_MS_PER_ORDER") + refusals * api_refusal_ms) / 1000
    api_pods = math.ceil(api_cores / (number("API_POD_CPU") * number("TARGET_CPU_UTILIZATION")) * survive_a_zone)
    worker_pods = math.ceil(orders / number("WORKER_ORDERS_PER_S_PER_POD") * survive_a_zone)
    api_pods = max(int(number("MIN_API_PODS")), api_pods)
    # The ASYNC path's group commit puts what one pod accepts within a linger into one message (at least one
    # order, at most max-batch): the queue's bound counts those messages, not orders.
    max_batch = number("ORDERS_PER_MESSAGE_MAX")
    orders_per_message = min(max_batch, max(1.0, orders / api_pods * number("ASYNC_LINGER_MS") / 1000))
    max_length = math.ceil(orders / orders_per_message * number("ORDER_QUEUE_MAX_SECONDS"))
    return SalePlan(
        timezone=env["SALE_TIMEZONE"],
        scale_out=opens - timedelta(minutes=number("PREWARM_MINUTES")),
        scale_in=closes + timedelta(minutes=number("SCALE_IN_AFTER_MINUTES")),
        orders_per_s=orders,
        refusals_per_s=refusals,
        api_cores=api_cores,
        api_pods=api_pods,
        api_max_pods=math.ceil(api_pods * number("API_MAX_OVER_PLAN")),
        api_pod_cpu=number("API_POD_CPU"),
        target_cpu_utilization=number("TARGET_CPU_UTILIZATION"),
        worker_pods=max(int(number("MIN_WORKER_PODS")), worker_pods),
        worker_pod_cpu=number("WORKER_POD_CPU"),
        worker_orders_per_s_per_pod=number("WORKER_ORDERS_PER_S_PER_POD"),
        redis_core_share=(orders * number("REDIS_MS_PER_ORDER") + refusals * redis_refusal_ms) / 1000,
        redis_max_core_share=number("REDIS_MAX_CORE_SHARE"),
        rabbitmq_cores=orders * number("RABBITMQ_MS_PER_ORDER") / 1000,
        rabbitmq_max_node_share=number("RABBITMQ_MAX_NODE_SHARE"),
        order_queue_max_length=max_length,
        orders_per_message=round(orders_per_message, 2),
        order_queue_max_orders=math.ceil(max_length * max_batch),
        order_queue_max_seconds=number("ORDER_QUEUE_MAX_SECONDS"),
        orders_per_message_max=max_batch,
        async_linger_ms=number("ASYNC_LINGER_MS"),
        refusal_cost_measured=env.get("REFUSAL_COST_MEASURED", "false") == "true",
        ping_ms_order_run=number("PING_MS_ORDER_RUN"),
        ping_ms_refusal_run=number("PING_MS_REFUSAL_RUN"),
        api_ms_per_refusal=api_refusal_ms,
    )


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else SALE_CAPACITY
    for line in plan(read_env(path)).lines():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
