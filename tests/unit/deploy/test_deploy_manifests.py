"""deploy/k8s: what the schemas cannot see (kubeconform checks the shapes in scripts/check-deploy).

Every GW_* variable is a real setting with a valid value, no DSN sits in a ConfigMap, the probes
and commands exist, KEDA's bounds match the partitions, and the pieces refer to each other.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
import yaml
from deploy_files import (
    K8S,
    ROOT,
    containers,
    env_file,
    kustomization,
    manifest,
    manifests,
    setting_env_names,
    settings_env,
)
from typer.testing import CliRunner

from worker.cli import app as cli_app
from worker.core import PolicyBook
from worker.settings import Settings, TopicNames

SETTING_NAMES = setting_env_names()
#: The kinds whose pod templates run the image.
WORKLOADS = ("StatefulSet", "Deployment", "Job")
SECRET_SETTINGS = {"GW_POSTGRES_DSN", "GW_MONGO_URL", "POSTGRES_DSN", "MONGO_URL"}
STORES_SECRET = "grounding-worker-stores"
#: Measured peak RSS of one worker process at the default batch (docs/benchmarks.md).
PEAK_RSS_MIB = 160
#: The worst of four runs deciding 100 preloaded drafts of 0.9 MiB (python -m dev.bench.memory).
LARGE_DRAFTS_PEAK_MIB = 1316
#: Parameters of KEDA's kafka scaler (v2.20 pkg/scalers/kafka_scaler.go, kafkaMetadata): those
#: read from trigger metadata, and the three it also resolves from the target's environment.
KEDA_KAFKA_PARAMS = {
    "bootstrapServers",
    "consumerGroup",
    "topic",
    "partitionLimitation",
    "lagThreshold",
    "activationLagThreshold",
    "offsetResetPolicy",
    "allowIdleConsumers",
    "excludePersistentLag",
    "scaleToZeroOnInvalidOffset",
    "limitToPartitionsWithLag",
    "ensureEvenDistributionOfPartitions",
    "version",
    "tls",
    "unsafeSsl",
    "sasl",
    "saslTokenProvider",
    "awsRegion",
}
KEDA_KAFKA_FROM_ENV = {"bootstrapServersFromEnv", "consumerGroupFromEnv", "topicFromEnv"}
#: The worker keeps its turn table on a volume of its own, so it is a StatefulSet.
WORKER = ("StatefulSet", "grounding-worker")
SINK = ("Deployment", "grounding-ledger-sink")


def unknown_settings(names: set[str]) -> set[str]:
    """The ``GW_*`` names (and plain connection names) that no field of Settings reads."""
    return {n for n in names if n.startswith("GW_") and n not in SETTING_NAMES}


def gw_names_in_deploy() -> dict[str, set[str]]:
    """Every GW_* name set anywhere under deploy/, by where it is set."""
    found: dict[str, set[str]] = {"deploy/k8s/settings.env": set(settings_env())}
    for name, doc in manifests():
        if doc["kind"] in WORKLOADS:
            for c in containers(doc):
                found.setdefault(f"deploy/k8s/{name}", set()).update(
                    e["name"] for e in c.get("env", ())
                )
        if doc["kind"] == "ConfigMap":
            found.setdefault(f"deploy/k8s/{name}", set()).update(doc.get("data", {}))
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    found["deploy/Dockerfile"] = set(re.findall(r"\b(GW_[A-Z0-9_]+)=", dockerfile))
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text(encoding="utf-8"))
    found["deploy/compose.yaml"] = {
        n for svc in compose["services"].values() for n in (svc.get("environment") or {})
    }
    return {where: {n for n in names if n.startswith("GW_")} for where, names in found.items()}


# --- settings -----------------------------------------------------------------------------------


def test_every_gw_variable_in_deploy_is_a_real_setting() -> None:
    names = gw_names_in_deploy()
    assert len(names["deploy/k8s/settings.env"]) >= 10
    bad = {where: sorted(unknown_settings(n)) for where, n in names.items() if unknown_settings(n)}
    assert not bad, f"not settings of worker/settings/: {bad}"


def test_the_setting_check_rejects_a_misspelt_name() -> None:
    assert unknown_settings({"GW_BATCH_SIZE", "GW_BATCHSIZE", "GW_TOPICS__DRAFT"}) == {
        "GW_BATCHSIZE",
        "GW_TOPICS__DRAFT",
    }
    assert "GW_TOPICS__DRAFTS" in SETTING_NAMES
    assert "GW_POSTGRES_DSN" in SETTING_NAMES


def test_the_settings_file_and_worker_env_load_as_valid_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if name.startswith("GW_") or name in SECRET_SETTINGS:
            monkeypatch.delenv(name)
    values = dict(settings_env())
    worker = containers(manifest(*WORKER))[0]
    values |= {e["name"]: e["value"] for e in worker.get("env", ()) if "value" in e}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.topic_partitions == int(values["GW_TOPIC_PARTITIONS"])
    assert settings.web_host == "0.0.0.0"  # the kubelet probes the pod IP
    assert settings.run_ledger_sink is False
    assert settings.topics.drafts == TopicNames().drafts
    # Production durability: one broker may be down without stopping writes or losing an
    # acknowledged record, and every turn-table partition has a warm standby on another worker.
    assert settings.topic_min_insync_replicas is not None
    assert 1 < settings.topic_min_insync_replicas < settings.topic_replication_factor
    assert settings.table_standby_replicas >= 1
    assert settings.turn_store == "rocksdb"  # on the data volume, so it survives a restart


# --- secrets ------------------------------------------------------------------------------------


def test_no_dsn_or_credential_in_a_configmap() -> None:
    values = settings_env()
    assert not set(values) & SECRET_SETTINGS
    for name, value in values.items():
        assert not re.search(r"(postgres(ql)?|mongodb(\+srv)?)://", value), name
        assert not re.search(r"password|secret|token", name, re.IGNORECASE), name
    assert not [d for _, d in manifests() if d["kind"] == "Secret"], "no Secret is committed"


@pytest.mark.parametrize(
    ("kind", "name", "wanted"),
    [
        (*WORKER, {"GW_POSTGRES_DSN", "GW_MONGO_URL"}),
        (*SINK, {"GW_POSTGRES_DSN"}),
        ("Job", "grounding-migrate", {"GW_POSTGRES_DSN", "GW_MONGO_URL"}),
    ],
)
def test_dsns_come_from_the_stores_secret(kind: str, name: str, wanted: set[str]) -> None:
    (container,) = containers(manifest(kind, name))
    refs = {
        e["name"]: e["valueFrom"]["secretKeyRef"]
        for e in container.get("env", ())
        if "secretKeyRef" in e.get("valueFrom", {})
    }
    assert set(refs) == wanted
    assert all(r["name"] == STORES_SECRET and r["key"] == n for n, r in refs.items())
    plain = {e["name"] for e in container.get("env", ()) if "value" in e}
    assert not plain & SECRET_SETTINGS


# --- the worker and its companions --------------------------------------------------------------


def startup_budget_s(probe: dict[str, Any]) -> int:
    """How long a startup probe lets a container take before the kubelet kills it."""
    return int(probe.get("initialDelaySeconds", 0)) + int(probe.get("periodSeconds", 10)) * int(
        probe.get("failureThreshold", 3)
    )


def test_worker_probes_health_and_readiness_on_the_web_port() -> None:
    workload = manifest(*WORKER)
    (worker,) = containers(workload)
    port = int(settings_env()["GW_WEB_PORT"])
    ports = {p["name"]: p["containerPort"] for p in worker["ports"]}
    assert ports == {"http": port}
    assert worker["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert worker["startupProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert worker["readinessProbe"]["httpGet"] == {"path": "/ready", "port": "http"}
    annotations = workload["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(port)
    assert annotations["prometheus.io/path"] == "/metrics"


def test_ledger_sink_serves_health_and_metrics_on_the_web_port() -> None:
    """worker/runtime/metrics_server.py: /metrics and /health, no /ready (so no readiness probe)."""
    workload = manifest(*SINK)
    (sink,) = containers(workload)
    port = int(settings_env()["GW_WEB_PORT"])
    assert {p["name"]: p["containerPort"] for p in sink["ports"]} == {"http": port}
    assert sink["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert sink["startupProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert "readinessProbe" not in sink
    annotations = workload["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(port),
        "prometheus.io/path": "/metrics",
    }


@pytest.mark.parametrize("workload", [WORKER, SINK])
def test_the_startup_probe_outlasts_the_wait_for_kafka(workload: tuple[str, str]) -> None:
    """At start `run` and `ledger-sink` wait up to GW_STARTUP_TIMEOUT_S for Kafka, then exit 3:
    that exit (and Kubernetes' back-off) must come before a startup-probe kill, whatever /health
    does meanwhile."""
    (container,) = containers(manifest(*workload))
    timeout = float(settings_env().get("GW_STARTUP_TIMEOUT_S", 0)) or float(
        Settings.model_fields["startup_timeout_s"].default
    )
    assert startup_budget_s(container["startupProbe"]) >= timeout + 30


def test_worker_rolls_one_pod_at_a_time_without_surge() -> None:
    """A StatefulSet replaces each pod after stopping it: no surge pod, which would find every
    partition taken at full scale and never turn ready."""
    spec = manifest(*WORKER)["spec"]
    assert spec["updateStrategy"]["type"] == "RollingUpdate"
    rolling = spec["updateStrategy"].get("rollingUpdate", {})
    assert rolling.get("partition", 0) == 0
    assert rolling.get("maxUnavailable", 1) == 1
    assert spec["podManagementPolicy"] == "Parallel"  # scaling only; updates still go one by one
    assert spec["minReadySeconds"] > 0
    assert "replicas" not in spec, "KEDA owns the worker's replica count"


def test_worker_keeps_its_turn_table_on_a_volume_per_pod() -> None:
    spec = manifest(*WORKER)["spec"]
    (claim,) = spec["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data"
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert mebibytes(claim["spec"]["resources"]["requests"]["storage"]) >= 10 * 1024
    assert "storageClassName" not in claim["spec"], "the cluster's default class"
    pod = spec["template"]["spec"]
    assert "data" not in {v["name"] for v in pod["volumes"]}, "a pod volume would shadow the claim"
    (worker,) = containers(manifest(*WORKER))
    mounts = {m["name"]: m["mountPath"] for m in worker["volumeMounts"]}
    assert mounts["data"] == settings_env()["GW_DATA_DIR"]
    assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsGroup"]
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenScaled": "Delete",
        "whenDeleted": "Retain",
    }


def test_the_worker_statefulset_names_a_headless_service_of_its_pods() -> None:
    spec = manifest(*WORKER)["spec"]
    service = manifest("Service", spec["serviceName"])["spec"]
    assert service["clusterIP"] == "None"
    labels = spec["template"]["metadata"]["labels"]
    assert service["selector"].items() <= labels.items()
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    sink_labels = manifest(*SINK)["spec"]["template"]["metadata"]["labels"]
    assert not service["selector"].items() <= sink_labels.items()
    (port,) = service["ports"]
    assert port["targetPort"] == "http"
    assert port["port"] == int(settings_env()["GW_WEB_PORT"])


def test_ledger_sink_runs_apart_and_the_worker_without_it() -> None:
    (worker,) = containers(manifest(*WORKER))
    assert {"name": "GW_RUN_LEDGER_SINK", "value": "false"} in worker["env"]
    (sink,) = containers(manifest(*SINK))
    assert sink["args"] == ["ledger-sink"]
    assert "GW_RUN_LEDGER_SINK" not in {e["name"] for e in sink.get("env", ())}


@pytest.mark.parametrize(
    ("kind", "name", "args"),
    [
        (*WORKER, ["run"]),
        (*SINK, ["ledger-sink"]),
        ("Job", "grounding-migrate", ["migrate"]),
        ("Job", "grounding-topics-create", ["topics", "create"]),
    ],
)
def test_every_container_runs_a_real_cli_command(kind: str, name: str, args: list[str]) -> None:
    (container,) = containers(manifest(kind, name))
    assert container["args"] == args
    assert container["image"] == "grounding-worker"
    result = CliRunner().invoke(cli_app, [*args, "--help"])
    assert result.exit_code == 0, result.output
    assert "No such command" not in result.output


def test_every_container_has_requests_and_limits() -> None:
    for name, doc in manifests():
        if doc["kind"] not in WORKLOADS:
            continue
        for c in containers(doc):
            res = c["resources"]
            assert set(res["requests"]) == {"cpu", "memory"}, name
            assert set(res["limits"]) == {"cpu", "memory"}, name


def mebibytes(quantity: str) -> float:
    units = {"Mi": 1, "Gi": 1024}
    return float(quantity[:-2]) * units[quantity[-2:]]


def test_worker_memory_is_sized_from_the_measured_peak() -> None:
    (worker,) = containers(manifest(*WORKER))
    request = mebibytes(worker["resources"]["requests"]["memory"])
    limit = mebibytes(worker["resources"]["limits"]["memory"])
    assert request >= PEAK_RSS_MIB * 1.5
    assert limit >= LARGE_DRAFTS_PEAK_MIB * 1.25
    assert worker["resources"]["limits"]["cpu"] == "1"  # one event loop


def pod_security(doc: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    spec = doc["spec"]["template"]["spec"]
    return spec["securityContext"], [c["securityContext"] for c in containers(doc)]


def test_every_pod_runs_as_the_image_user_read_only_without_privileges() -> None:
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    (user,) = re.findall(r"^USER (\d+):(\d+)$", dockerfile, re.MULTILINE)
    for name, doc in manifests():
        if doc["kind"] not in WORKLOADS:
            continue
        pod, ctrs = pod_security(doc)
        assert pod["runAsNonRoot"] is True, name
        assert (str(pod["runAsUser"]), str(pod["runAsGroup"])) == user, name
        assert doc["spec"]["template"]["spec"]["automountServiceAccountToken"] is False, name
        for c in ctrs:
            assert c == {
                "allowPrivilegeEscalation": False,
                "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"]},
            }, name


def test_worker_writes_only_to_its_volumes_and_reads_the_mounted_policy_book() -> None:
    workload = manifest(*WORKER)
    (worker,) = containers(workload)
    mounts = {m["mountPath"]: m for m in worker["volumeMounts"]}
    settings = settings_env()
    assert settings["GW_DATA_DIR"] in mounts
    assert not mounts[settings["GW_DATA_DIR"]].get("readOnly")
    policy_dir, _, policy_key = settings["GW_POLICY_FILE"].rpartition("/")
    assert mounts[policy_dir]["readOnly"] is True
    volumes = {v["name"]: v for v in workload["spec"]["template"]["spec"]["volumes"]}
    claims = {c["metadata"]["name"] for c in workload["spec"]["volumeClaimTemplates"]}
    assert {m["name"] for m in worker["volumeMounts"]} <= set(volumes) | claims
    assert volumes[mounts[policy_dir]["name"]]["configMap"]["name"] == "grounding-worker-policy"
    generators = {g["name"]: g for g in kustomization()["configMapGenerator"]}
    assert generators["grounding-worker-policy"]["files"] == [policy_key]


def test_the_policy_book_is_valid() -> None:
    book = PolicyBook.model_validate_json((K8S / "policy-book.json").read_bytes())
    assert book.default.version != "default-1", "give the deployed book a version of its own"


def test_every_workload_reads_the_settings_configmap() -> None:
    for name, doc in manifests():
        if doc["kind"] in WORKLOADS:
            for c in containers(doc):
                refs = [e["configMapRef"]["name"] for e in c["envFrom"]]
                assert refs == ["grounding-worker-settings"], name


# --- scaling and disruptions --------------------------------------------------------------------


def test_keda_scales_the_worker_up_to_the_partition_count_and_never_to_zero() -> None:
    scaled = manifest("ScaledObject", "grounding-worker")["spec"]
    partitions = int(settings_env()["GW_TOPIC_PARTITIONS"])
    assert scaled["maxReplicaCount"] == partitions
    assert 1 <= scaled["minReplicaCount"] <= scaled["maxReplicaCount"]
    assert scaled["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": WORKER[0],
        "name": WORKER[1],
    }


def test_keda_reads_lag_of_the_drafts_topic_for_the_worker_group() -> None:
    (trigger,) = manifest("ScaledObject", "grounding-worker")["spec"]["triggers"]
    assert trigger["type"] == "kafka"
    meta: dict[str, str] = trigger["metadata"]
    assert set(meta) <= KEDA_KAFKA_PARAMS | KEDA_KAFKA_FROM_ENV, set(meta) - KEDA_KAFKA_PARAMS
    assert all(isinstance(v, str) for v in meta.values())
    # The *FromEnv names are resolved in the worker container's environment.
    env = dict(settings_env())
    (worker,) = containers(manifest(*WORKER))
    env |= {e["name"]: e.get("value", "") for e in worker.get("env", ())}
    assert meta["consumerGroupFromEnv"] == "GW_APP_ID"
    assert meta["topicFromEnv"] == "GW_TOPICS__DRAFTS"
    assert meta["bootstrapServersFromEnv"] == "GW_KAFKA_BOOTSTRAP_SERVERS"
    for key in KEDA_KAFKA_FROM_ENV:
        assert env.get(meta[key]), f"{key}: {meta[key]} is not set in the worker's environment"
    assert env["GW_TOPICS__DRAFTS"] == TopicNames().drafts
    assert int(meta["lagThreshold"]) > 0
    assert meta["allowIdleConsumers"] == "false"
    assert meta["offsetResetPolicy"] == "earliest"  # what Faust does for a new group


def test_pdb_covers_exactly_the_worker_pods() -> None:
    pdb = manifest("PodDisruptionBudget", "grounding-worker")["spec"]
    worker_labels = manifest(*WORKER)["spec"]["template"]["metadata"]["labels"]
    sink_labels = manifest(*SINK)["spec"]["template"]["metadata"]["labels"]
    selector = pdb["selector"]["matchLabels"]
    assert selector.items() <= worker_labels.items()
    assert not selector.items() <= sink_labels.items()
    assert pdb["maxUnavailable"] == 1
    assert pdb["unhealthyPodEvictionPolicy"] == "AlwaysAllow"


def test_network_policy_admits_only_the_web_port_of_worker_pods() -> None:
    policy = manifest("NetworkPolicy", "grounding-worker")["spec"]
    assert policy["policyTypes"] == ["Ingress"]
    selector = policy["podSelector"]["matchLabels"]
    for workload in (WORKER, SINK):
        labels = manifest(*workload)["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= labels.items(), workload
    (rule,) = policy["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": int(settings_env()["GW_WEB_PORT"])}]
    assert [set(peer) for peer in rule["from"]] == [{"namespaceSelector"}]


# --- kustomization ------------------------------------------------------------------------------


def test_kustomization_lists_every_manifest_and_generates_the_configmaps() -> None:
    kust = kustomization()
    files = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kust["resources"]) == files
    generators = {g["name"]: g for g in kust["configMapGenerator"]}
    assert generators["grounding-worker-settings"]["envs"] == ["settings.env"]
    for g in generators.values():
        for f in [*g.get("envs", []), *g.get("files", [])]:
            assert (K8S / f).is_file(), f
    assert env_file(K8S / "settings.env") == settings_env()
    assert [i["name"] for i in kust["images"]] == ["grounding-worker"]
