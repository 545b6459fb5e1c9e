"""Turns an operator's CustomResourceDefinition into the JSON schema kubeconform reads (k8s/crd-schemas).

    python3 deploy-tests/crd_schema.py CRD.yaml VERSION > k8s/crd-schemas/GROUP/KIND_VERSION.json

Like kubeconform's openapi2jsonschema: the version's openAPIV3Schema, with additionalProperties false on
every object that lists its properties (unless it preserves unknown fields), so `-strict` rejects a
misspelt field; int-or-string fields accept both. The upstream CRDs come from the operators' Go modules
(go mod download MODULE@VERSION, then config/crd/bases/ in the module directory); k8s/crd-schemas/README.md
lists which module and version each schema was generated from.
"""

from __future__ import annotations

import json
import sys

import yaml


def strict(node: object) -> object:
    if isinstance(node, list):
        return [strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: strict(value) for key, value in node.items()}
    if node.pop("x-kubernetes-int-or-string", False):
        node.pop("type", None)
        node.pop("format", None)
        node["oneOf"] = [{"type": "string"}, {"type": "integer"}]
    if "properties" in node and "additionalProperties" not in node and \
            not node.get("x-kubernetes-preserve-unknown-fields"):
        node["additionalProperties"] = False
    return node


def main(crd_path: str, version: str) -> None:
    crd = yaml.safe_load(open(crd_path))
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    schema = strict(versions[version]["schema"]["openAPIV3Schema"])
    # Metadata is validated by the API server, not by the CRD: allow any, as kubeconform's converter does.
    schema["properties"]["metadata"] = {"type": "object"}
    json.dump(schema, sys.stdout, separators=(",", ":"), sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
