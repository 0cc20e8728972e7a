"""What the deploy tests read: the manifests under deploy/ and the settings env file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import AliasChoices, BaseModel

from worker.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
K8S = ROOT / "deploy" / "k8s"


def manifests() -> list[tuple[str, dict[str, Any]]]:
    """(file name, document) of every Kubernetes object under deploy/k8s, kustomization aside."""
    out = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc:
                out.append((path.name, doc))
    return out


def manifest(kind: str, name: str) -> dict[str, Any]:
    found = [d for _, d in manifests() if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def kustomization() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((K8S / "kustomization.yaml").read_text(encoding="utf-8"))
    return doc


def env_file(path: Path) -> dict[str, str]:
    """``NAME=value`` lines of a kustomize env file (comments and blank lines skipped)."""
    out = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        assert sep, f"{path.name}: not NAME=value: {line!r}"
        assert name not in out, f"{path.name}: {name} set twice"
        out[name] = value
    return out


def settings_env() -> dict[str, str]:
    return env_file(K8S / "settings.env")


def containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The containers of a StatefulSet's, Deployment's or Job's pod template."""
    spec = doc["spec"]["template"]["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def setting_env_names(model: type[BaseModel] = Settings, prefix: str = "GW_") -> set[str]:
    """Every environment variable name that sets a field of ``model`` (nested ones with ``__``)."""
    names: set[str] = set()
    for field_name, info in model.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names |= {c for c in alias.choices if isinstance(c, str)}
            continue
        names.add(f"{prefix}{field_name.upper()}")
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names |= setting_env_names(annotation, f"{prefix}{field_name.upper()}__")
    return names
