"""Reading NetworkPolicies, once for every checker: which pods a policy selects and which ports its rules
open, a rule's port range (port to endPort) included. deploy_checks.py and sale_day_checks.py read them here."""
from __future__ import annotations


def selects(policy: dict, app: str) -> bool:
    """Whether the policy applies to the pods of app (app.kubernetes.io/name, by label or In expression)."""
    selector = policy["spec"]["podSelector"]
    if selector.get("matchLabels", {}).get("app.kubernetes.io/name") == app:
        return True
    return any(e["key"] == "app.kubernetes.io/name" and e["operator"] == "In" and app in e["values"]
               for e in selector.get("matchExpressions", []))


def rule_ports(rule: dict) -> set:
    """The ports one ingress or egress rule opens: each number of a port..endPort range, a named port as its
    name, and None for an entry without a port (every port)."""
    opened: set = set()
    for entry in rule.get("ports", []):
        port = entry.get("port")
        if isinstance(port, int):
            opened |= set(range(port, entry.get("endPort", port) + 1))
        else:
            opened.add(port)
    return opened


def egress_ports(policies: list[dict], app: str) -> set:
    """Ports the Egress policies that select app's pods let them reach."""
    return {port for policy in policies
            if "Egress" in policy["spec"].get("policyTypes", []) and selects(policy, app)
            for rule in policy["spec"].get("egress", []) for port in rule_ports(rule)}


def ingress_ports(policies: list[dict], label: str, peer: str | None = None) -> set:
    """Ports the Ingress policies on pods labelled flashsale.dev/dependency=label open, to a given namespace
    (peer) or to anyone."""
    ports: set = set()
    for policy in policies:
        selector = policy["spec"]["podSelector"].get("matchLabels", {})
        if selector.get("flashsale.dev/dependency") != label or "Ingress" not in policy["spec"].get("policyTypes", []):
            continue
        for rule in policy["spec"].get("ingress", []):
            namespaces = {p.get("namespaceSelector", {}).get("matchLabels", {}).get("kubernetes.io/metadata.name")
                          for p in rule.get("from", [])}
            if peer is None or peer in namespaces:
                ports |= rule_ports(rule)
    return ports
