"""Tests of network_policies.py: the one reading of NetworkPolicy ports that both checkers share."""
from network_policies import egress_ports, ingress_ports, rule_ports, selects


def policy(kind: str, selector: dict, rules: list[dict]) -> dict:
    return {"spec": {"podSelector": selector, "policyTypes": [kind], kind.lower(): rules}}


def test_a_port_range_opens_every_port_in_it():
    assert rule_ports({"ports": [{"port": 5430, "endPort": 5433}, {"port": 53}]}) == {5430, 5431, 5432, 5433, 53}


def test_egress_counts_ranges_of_policies_that_select_the_app():
    api = {"matchExpressions": [{"key": "app.kubernetes.io/name", "operator": "In", "values": ["order-api"]}]}
    other = {"matchLabels": {"app.kubernetes.io/name": "order-worker"}}
    policies = [policy("Egress", api, [{"ports": [{"port": 5672}, {"port": 15670, "endPort": 15675}]}]),
                policy("Egress", other, [{"ports": [{"port": 6379}]}])]
    assert selects(policies[0], "order-api") and not selects(policies[1], "order-api")
    ports = egress_ports(policies, "order-api")
    assert 15672 in ports and 5672 in ports and 6379 not in ports


def test_ingress_to_a_dependency_by_peer_namespace():
    rabbit = {"matchLabels": {"flashsale.dev/dependency": "rabbitmq"}}
    monitoring = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    policies = [policy("Ingress", rabbit, [{"from": [monitoring], "ports": [{"port": 15692}]},
                                           {"ports": [{"port": 5672}, {"port": 15672}]}])]
    assert ingress_ports(policies, "rabbitmq") == {15692, 5672, 15672}
    assert ingress_ports(policies, "rabbitmq", "monitoring") == {15692}
