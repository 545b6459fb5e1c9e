"""What the deployment checkers read of the rendered manifests, written once: YAML, the applications, a
Deployment's container of a name, a container's literal environment, the ConfigMap of settings."""

from __future__ import annotations

import yaml

# libyaml's parser where PyYAML has it (the pip wheels do): the pure-Python one took most of a run, and the
# deploy-tests run this ~90 times.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

APPS = ("order-api", "order-worker")


def container_of(deployment: dict, name: str) -> dict:
    """The Deployment's container of that name (the application's own, not a sidecar)."""
    return next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def env_of(container: dict) -> dict[str, str]:
    """The container's literal environment, name to value as a string (a valueFrom entry reads as "")."""
    return {e["name"]: str(e.get("value", "")) for e in container.get("env", [])}


def deployed(deployments: dict) -> list[tuple[str, dict]]:
    """(application, its Deployment) for each application an overlay deploys, in APPS's order."""
    return [(app, deployments[app]) for app in APPS if app in deployments]


def load_yaml(text):
    return yaml.load(text, Loader=_YAML_LOADER)


def load_all_yaml(text):
    return yaml.load_all(text, Loader=_YAML_LOADER)


def named_config(by_kind: dict) -> dict[str, str]:
    """The data of the flashsale-config ConfigMap (its name carries kustomize's hash suffix)."""
    for config_map in by_kind.get("ConfigMap", []):
        if config_map["metadata"]["name"].startswith("flashsale-config"):
            return config_map.get("data") or {}
    return {}
