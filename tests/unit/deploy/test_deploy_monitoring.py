"""deploy/k8s/monitoring: the Prometheus operator's PodMonitor and PrometheusRule.

kubeconform checks their shapes against the operator's CRDs in scripts/check-deploy. Here: the
PrometheusRule is the generated copy of deploy/prometheus/alerts.yaml, and the PodMonitor scrapes
the pods the raw scrape configuration scrapes, with the job names the alerts read.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from deploy_files import K8S, ROOT, containers, kustomization, manifest

from dev.generators import prometheusrule as gen

MONITORING = K8S / "monitoring"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yaml"
PROMETHEUS_YML = ROOT / "deploy" / "prometheus" / "prometheus.yml"
#: The scraped workloads and the job each one's series must carry.
SCRAPED = {
    ("StatefulSet", "grounding-worker"): "grounding-worker",
    ("Deployment", "grounding-ledger-sink"): "grounding-ledger-sink",
}


def monitoring_doc(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((MONITORING / name).read_text(encoding="utf-8"))
    return doc


def pod_labels(workload: tuple[str, str]) -> dict[str, str]:
    labels: dict[str, str] = manifest(*workload)["spec"]["template"]["metadata"]["labels"]
    return labels


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A Kubernetes label selector (matchLabels and matchExpressions) applied to ``labels``."""
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expr in selector.get("matchExpressions", []):
        key, op, values = expr["key"], expr["operator"], expr.get("values", [])
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True


def meta_label(name: str) -> str:
    """Prometheus' kubernetes_sd meta label of a pod label."""
    return "__meta_kubernetes_pod_label_" + re.sub(r"[^a-zA-Z0-9_]", "_", name)


def relabel(rules: list[dict[str, Any]], labels: dict[str, str]) -> dict[str, str]:
    """Apply ``replace`` relabelings (camelCase, as the operator's CRD spells them)."""
    out = dict(labels)
    for rule in rules:
        assert rule.get("action", "replace") == "replace", rule
        value = ";".join(out.get(s, "") for s in rule["sourceLabels"])
        match = re.fullmatch(rule.get("regex", "(.*)"), value)
        if match:
            out[rule["targetLabel"]] = match.expand(
                re.sub(r"\$(\d+)", r"\\\1", rule.get("replacement", "$1"))
            )
    return out


# --- PrometheusRule -----------------------------------------------------------------------------


def test_prometheusrule_is_fresh() -> None:
    assert (MONITORING / "prometheusrule.yaml").read_text(encoding="utf-8") == gen.build(), (
        "stale: run .venv/bin/python scripts/gen_prometheusrule.py"
    )


def test_prometheusrule_carries_exactly_the_alert_rules() -> None:
    rule = monitoring_doc("prometheusrule.yaml")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["kind"] == "PrometheusRule"
    assert set(rule["spec"]) == {"groups"}
    assert rule["spec"]["groups"] == yaml.safe_load(ALERTS.read_text(encoding="utf-8"))["groups"]


def test_the_generator_refuses_a_rule_file_it_cannot_copy_faithfully() -> None:
    with pytest.raises(SystemExit, match="besides"):
        gen.build("groups:\n  - name: g\n    rules: []\nother: 1\n")
    with pytest.raises(SystemExit, match="one top-level"):
        gen.build("# nothing\n")
    copied = gen.build("# a comment\ngroups:\n  - name: g\n    rules: []\n")
    assert copied.endswith("spec:\n  groups:\n    - name: g\n      rules: []\n")


# --- PodMonitor ---------------------------------------------------------------------------------


def test_podmonitor_selects_the_worker_and_ledger_sink_pods_and_nothing_else() -> None:
    spec = monitoring_doc("podmonitor.yaml")["spec"]
    for workload in SCRAPED:
        assert selects(spec["selector"], pod_labels(workload)), workload
    for job in ("grounding-migrate", "grounding-topics-create"):
        assert not selects(spec["selector"], pod_labels(("Job", job))), job
    assert "namespaceSelector" not in spec, "the pods live in the PodMonitor's own namespace"


def test_podmonitor_scrapes_the_http_port_at_metrics() -> None:
    (endpoint,) = monitoring_doc("podmonitor.yaml")["spec"]["podMetricsEndpoints"]
    assert endpoint["port"] == "http"
    assert endpoint["path"] == "/metrics"
    for workload in SCRAPED:
        (container,) = containers(manifest(*workload))
        assert "http" in {p["name"] for p in container["ports"]}, workload


def test_podmonitor_gives_each_pod_the_job_of_the_raw_scrape_configuration() -> None:
    """The alerts read up{job="grounding-worker"} for the workers alone."""
    (endpoint,) = monitoring_doc("podmonitor.yaml")["spec"]["podMetricsEndpoints"]
    for workload, job in SCRAPED.items():
        meta = {meta_label(k): v for k, v in pod_labels(workload).items()}
        assert relabel(endpoint["relabelings"], meta)["job"] == job, workload
    raw_jobs = {c["job_name"] for c in yaml.safe_load(PROMETHEUS_YML.read_text())["scrape_configs"]}
    assert raw_jobs == set(SCRAPED.values())
    assert 'up{job="grounding-worker"}' in ALERTS.read_text(encoding="utf-8")


def test_the_raw_scrape_jobs_keep_one_component_each() -> None:
    config = yaml.safe_load(PROMETHEUS_YML.read_text(encoding="utf-8"))
    jobs = {c["job_name"]: c for c in config["scrape_configs"]}
    for workload, job in SCRAPED.items():
        (keep, *_) = [r for r in jobs[job]["relabel_configs"] if r.get("action") == "keep"]
        labels = pod_labels(workload)
        value = ";".join(
            [labels["app.kubernetes.io/name"], labels["app.kubernetes.io/component"], "http"]
        )
        for other_job, other in jobs.items():
            (other_keep, *_) = [r for r in other["relabel_configs"] if r.get("action") == "keep"]
            assert bool(re.fullmatch(other_keep["regex"], value)) == (other_job == job)
        assert keep["source_labels"][-1] == "__meta_kubernetes_pod_container_port_name"


# --- kustomization ------------------------------------------------------------------------------


def test_monitoring_is_a_kustomization_of_its_own() -> None:
    """Clusters without the operator have no PodMonitor kind: deploy/k8s must not need it."""
    kust = yaml.safe_load((MONITORING / "kustomization.yaml").read_text(encoding="utf-8"))
    files = {p.name for p in MONITORING.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kust["resources"]) == files == {"podmonitor.yaml", "prometheusrule.yaml"}
    assert kust["namespace"] == kustomization()["namespace"]
    assert not [r for r in kustomization()["resources"] if "monitoring" in r]
