"""deploy/k8s/grafana: the dashboard as a ConfigMap for the Grafana chart's sidecar and as a
GrafanaDashboard of the Grafana operator.

kubeconform checks the ConfigMap against the Kubernetes schemas in scripts/check-deploy. The
operator's CRD is not served by any registry the project's machines reach, so the
GrafanaDashboard is checked here against its v1beta1 ``spec`` fields (those of the operator's
``config/crd/bases/grafana.integreatly.org_grafanadashboards.yaml``): no unknown field, the
required ``instanceSelector``, a ``configMapRef`` with its required ``key`` naming the ConfigMap
beside it.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from deploy_files import K8S, ROOT

from dev.generators import dashboard_k8s as gen

GRAFANA = K8S / "grafana"
#: GrafanaDashboard v1beta1 spec fields (grafana-operator v5).
SPEC_FIELDS = {
    "allowCrossNamespaceImport",
    "configMapRef",
    "contentCacheDuration",
    "datasources",
    "envFrom",
    "envs",
    "folder",
    "folderRef",
    "folderUID",
    "grafanaCom",
    "gzipJson",
    "instanceSelector",
    "json",
    "jsonnet",
    "jsonnetLib",
    "plugins",
    "resyncPeriod",
    "url",
    "urlAuthorization",
}
CONFIGMAP_REF_FIELDS = {"key", "name", "optional"}


def docs() -> dict[str, dict[str, Any]]:
    text = (GRAFANA / "dashboard.yaml").read_text(encoding="utf-8")
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d}


def test_dashboard_yaml_is_fresh() -> None:
    assert (GRAFANA / "dashboard.yaml").read_text(encoding="utf-8") == gen.build(), (
        "stale: run .venv/bin/python scripts/gen_dashboard_k8s.py"
    )


def test_the_configmap_carries_the_dashboard_for_the_sidecar() -> None:
    configmap = docs()["ConfigMap"]
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    (key,) = configmap["data"]
    committed = json.loads((ROOT / "deploy/grafana/grounding-worker.json").read_text())
    assert json.loads(configmap["data"][key]) == committed


def test_the_grafanadashboard_reads_the_configmap_with_known_fields_only() -> None:
    both = docs()
    dashboard, configmap = both["GrafanaDashboard"], both["ConfigMap"]
    assert dashboard["apiVersion"] == "grafana.integreatly.org/v1beta1"
    spec = dashboard["spec"]
    assert set(spec) <= SPEC_FIELDS, set(spec) - SPEC_FIELDS
    assert spec["instanceSelector"]["matchLabels"]
    ref = spec["configMapRef"]
    assert set(ref) <= CONFIGMAP_REF_FIELDS
    assert ref["name"] == configmap["metadata"]["name"]
    assert ref["key"] in configmap["data"]
    assert not {"json", "url", "gzipJson", "grafanaCom", "jsonnet"} & set(spec), "one source"


def test_grafana_is_a_kustomization_of_its_own() -> None:
    kust = yaml.safe_load((GRAFANA / "kustomization.yaml").read_text(encoding="utf-8"))
    assert kust["resources"] == ["dashboard.yaml"]
    deploy = yaml.safe_load((K8S / "kustomization.yaml").read_text(encoding="utf-8"))
    assert not [r for r in deploy["resources"] if "grafana" in r]
