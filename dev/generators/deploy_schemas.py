"""Write the JSON Schemas kubeconform needs, offline, for the kinds found in some manifests.

usage: deploy_schemas.py --k8s-wheel WHEEL --k8s-version 1.33.0 --crd CRD.yaml... \\
           --out DIR MANIFEST.yaml...

- Kubernetes kinds come from the ``kubernetes-validate`` wheel (PyPI), which ships the Kubernetes
  OpenAPI as JSON Schemas per version (``kubernetes-json-schema/v<version>-local-strict/``: every
  object closed with ``additionalProperties: false``). Its kind files ``$ref`` a shared
  ``_definitions.json`` by an absolute URL that kubeconform would try to download; each schema
  written here is standalone instead: the kind's schema plus the definitions it reaches, under
  ``$defs``, with local references.
- Custom resources come from CRD YAML (KEDA's, vendored in ``deploy/checks/``; the Prometheus
  operator's and Strimzi's, which ``scripts/check-deploy`` fetches or generates): each served
  version's ``openAPIV3Schema``, converted as kubeconform's ``openapi2jsonschema.py`` does in
  strict mode (``nullable`` becomes a ``null`` type, ``x-kubernetes-int-or-string`` a string or
  integer, objects with properties closed unless they preserve unknown fields).

File names follow kubeconform's ``{{ .ResourceKind }}{{ .KindSuffix }}.json``
(``deployment-apps-v1``, ``configmap-v1``, ``scaledobject-keda-v1alpha1``). A kind with no
schema is an error: nothing is skipped silently. Only the standard library and PyYAML.
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

K8S_DEFS_REF = "/api/_definitions.json#/$defs/"


def schema_file_name(api_version: str, kind: str) -> str:
    """kubeconform's name for a kind's schema (``registry.schemaPath``)."""
    group, _, version = api_version.rpartition("/")
    suffix = f"-{group.split('.')[0].lower()}-{version.lower()}" if group else f"-{version.lower()}"
    return f"{kind.lower()}{suffix}.json"


def kinds_in(manifests: Iterable[Path]) -> set[tuple[str, str]]:
    """Every (apiVersion, kind) of the YAML documents in ``manifests``."""
    found = set()
    for path in manifests:
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc:
                found.add((str(doc["apiVersion"]), str(doc["kind"])))
    return found


# --- Kubernetes ---------------------------------------------------------------------------------


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _localise(node: Any) -> Any:
    """Rewrite the shared-definitions URL to a local ``#/$defs/...`` reference."""
    if isinstance(node, dict):
        out = {k: _localise(v) for k, v in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(K8S_DEFS_REF):
            out["$ref"] = "#/$defs/" + ref[len(K8S_DEFS_REF) :]
        return out
    if isinstance(node, list):
        return [_localise(v) for v in node]
    return node


def kubernetes_schemas(wheel: Path, version: str) -> dict[str, dict[str, Any]]:
    """Standalone strict schemas of every kind in ``wheel`` for ``version``, by file name."""
    prefix = f"kubernetes_validate/kubernetes-json-schema/v{version}-local-strict/"
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.startswith(prefix) and n.endswith(".json")]
        if not names:
            raise SystemExit(f"deploy_schemas: {wheel.name} has no Kubernetes {version} schemas")
        definitions = json.loads(zf.read(prefix + "_definitions.json"))["$defs"]
        kinds = {n[len(prefix) :]: json.loads(zf.read(n)) for n in names}
    kinds.pop("_definitions.json", None)
    kinds.pop("all.json", None)
    return {"__definitions__": definitions, **kinds}


def standalone(kind_schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """``kind_schema`` with the definitions it reaches copied in, references made local."""
    schema: dict[str, Any] = _localise(kind_schema)
    schema.pop("$id", None)
    wanted: dict[str, Any] = {}
    todo = list(_refs(schema))
    while todo:
        ref = todo.pop()
        if not ref.startswith("#/$defs/"):
            raise SystemExit(f"deploy_schemas: unexpected reference {ref!r}")
        name = ref[len("#/$defs/") :]
        if name in wanted:
            continue
        if name not in definitions:
            raise SystemExit(f"deploy_schemas: no definition {name!r}")
        wanted[name] = _localise(definitions[name])
        todo.extend(_refs(wanted[name]))
    schema["$defs"] = wanted
    return schema


# --- custom resources ---------------------------------------------------------------------------


def _strict_openapi(node: Any) -> Any:
    """openapi2jsonschema.py's conversion of an ``openAPIV3Schema``, strict."""
    if isinstance(node, list):
        return [_strict_openapi(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key == "nullable":
            continue
        out[key] = _strict_openapi(value) if key != "enum" else value
    if node.get("x-kubernetes-int-or-string"):
        rest = {k: v for k, v in out.items() if k not in ("type", "format", "anyOf", "oneOf")}
        out = {**rest, "oneOf": [{"type": "string"}, {"type": "integer"}]}
    if node.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if "properties" in out and "additionalProperties" not in out and not preserve:
        out["additionalProperties"] = False
    return out


def crd_schemas(crd_path: Path) -> dict[str, dict[str, Any]]:
    """One JSON Schema per served version of the CRD(s) in ``crd_path``, by file name."""
    out = {}
    for crd in yaml.safe_load_all(crd_path.read_text(encoding="utf-8")):
        if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
            continue
        spec = crd["spec"]
        kind = spec["names"]["kind"]
        for version in spec["versions"]:
            if not version.get("served", True):
                continue
            schema = _strict_openapi(version["schema"]["openAPIV3Schema"])
            # The API server adds these two; a manifest must name its own kind and version.
            api_version = f"{spec['group']}/{version['name']}"
            schema.setdefault("properties", {})
            schema["properties"]["apiVersion"] = {"type": "string", "enum": [api_version]}
            schema["properties"]["kind"] = {"type": "string", "enum": [kind]}
            schema["required"] = sorted({*schema.get("required", ()), "apiVersion", "kind"})
            out[schema_file_name(api_version, kind)] = schema
    if not out:
        raise SystemExit(f"deploy_schemas: no CustomResourceDefinition in {crd_path}")
    return out


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--k8s-wheel", type=Path, required=True)
    parser.add_argument("--k8s-version", required=True, help="e.g. 1.33.0")
    parser.add_argument("--crd", type=Path, action="append", default=[])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("manifests", type=Path, nargs="+")
    args = parser.parse_args(argv)

    k8s = kubernetes_schemas(args.k8s_wheel, args.k8s_version)
    definitions = k8s.pop("__definitions__")
    custom: dict[str, dict[str, Any]] = {}
    for crd in args.crd:
        custom |= crd_schemas(crd)

    args.out.mkdir(parents=True, exist_ok=True)
    missing = []
    for api_version, kind in sorted(kinds_in(args.manifests)):
        name = schema_file_name(api_version, kind)
        if name in custom:
            schema = custom[name]
        elif name in k8s:
            schema = standalone(k8s[name], definitions)
        else:
            missing.append(f"{api_version} {kind} ({name})")
            continue
        (args.out / name).write_text(json.dumps(schema, indent=1), encoding="utf-8")
        print(f"schema {name}")
    if missing:
        print("deploy_schemas: no schema for " + ", ".join(missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
