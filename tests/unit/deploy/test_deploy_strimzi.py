"""deploy/k8s/strimzi: the topics of worker/kafka/topic_specs.py as Strimzi KafkaTopics.

kubeconform checks their shape against Strimzi's KafkaTopic CRD in scripts/check-deploy. Here: the
file is the generator's output at deploy/k8s/settings.env, and it says what topic_specs says.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from deploy_files import K8S, kustomization, settings_env

from dev.generators import kafkatopics as gen
from dev.generators import kafkauser as gen_user
from worker.kafka.topic_specs import topic_specs

STRIMZI = K8S / "strimzi"


def topics() -> list[dict[str, Any]]:
    text = (STRIMZI / "kafkatopics.yaml").read_text(encoding="utf-8")
    return [d for d in yaml.safe_load_all(text) if d]


def test_kafkatopics_are_fresh() -> None:
    assert (STRIMZI / "kafkatopics.yaml").read_text(encoding="utf-8") == gen.build(), (
        "stale: run .venv/bin/python scripts/gen_kafkatopics.py"
    )


def test_the_generator_reads_settings_env_not_the_callers_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GW_TOPIC_PARTITIONS", "99")
    monkeypatch.setenv("GW_TOPICS__DRAFTS", "someone.elses.drafts")
    settings = gen.deploy_settings()
    assert settings.topic_partitions == int(settings_env()["GW_TOPIC_PARTITIONS"])
    assert settings.topics.drafts == settings_env()["GW_TOPICS__DRAFTS"]


def test_one_kafkatopic_per_topic_spec_with_its_size_and_config() -> None:
    specs = {s.name: s for s in topic_specs(gen.deploy_settings())}
    found = {d["spec"].get("topicName", d["metadata"]["name"]): d for d in topics()}
    assert set(found) == set(specs)
    for name, doc in found.items():
        spec = specs[name]
        assert doc["apiVersion"] == "kafka.strimzi.io/v1"
        assert doc["kind"] == "KafkaTopic"
        assert doc["spec"]["partitions"] == spec.partitions
        assert doc["spec"]["replicas"] == spec.replication_factor
        assert doc["spec"]["config"] == spec.config
        assert doc["metadata"]["labels"]["strimzi.io/cluster"] == "my-cluster"


def test_the_topics_have_the_production_sizes_of_settings_env() -> None:
    env = settings_env()
    drafts = next(d for d in topics() if d["metadata"]["name"] == env["GW_TOPICS__DRAFTS"])
    assert drafts["spec"]["partitions"] == int(env["GW_TOPIC_PARTITIONS"])
    assert drafts["spec"]["replicas"] == int(env["GW_TOPIC_REPLICATION_FACTOR"])
    for doc in topics():
        config = doc["spec"]["config"]
        assert config["min.insync.replicas"] == env["GW_TOPIC_MIN_INSYNC_REPLICAS"]
        assert all(isinstance(v, str) for v in config.values()), "broker configs are strings"


def test_a_topic_name_kubernetes_refuses_gets_a_resource_name_and_topicName() -> None:
    assert gen.resource_name("agent.drafts") == "agent.drafts"
    assert gen.resource_name("answers.could_not_ground") == "answers.could-not-ground"
    assert gen.resource_name("Upper_Case") == "upper-case"
    names = [d["metadata"]["name"] for d in topics()]
    assert len(names) == len(set(names))
    for doc in topics():
        if "topicName" in doc["spec"]:
            assert doc["metadata"]["name"] == gen.resource_name(doc["spec"]["topicName"])
            assert doc["metadata"]["name"] != doc["spec"]["topicName"]


def test_strimzi_is_a_kustomization_of_its_own_naming_the_cluster() -> None:
    kust = yaml.safe_load((STRIMZI / "kustomization.yaml").read_text(encoding="utf-8"))
    assert kust["resources"] == ["kafkatopics.yaml", "kafkauser.yaml"]
    assert kust["namespace"] != kustomization()["namespace"], "where the Topic Operator watches"
    (pairs,) = [entry["pairs"] for entry in kust["labels"]]
    assert pairs["strimzi.io/cluster"] == gen.CLUSTER
    assert not [r for r in kustomization()["resources"] if "strimzi" in r]


# --- KafkaUser ------------------------------------------------------------------------------------


def kafka_user() -> dict[str, Any]:
    (doc,) = [
        d for d in yaml.safe_load_all((STRIMZI / "kafkauser.yaml").read_text(encoding="utf-8")) if d
    ]
    return dict(doc)


def allowed(acls: list[dict[str, Any]], kind: str, name: str) -> set[str]:
    """The operations the ACLs grant on the resource ``kind`` ``name``."""
    ops: set[str] = set()
    for acl in acls:
        res = acl["resource"]
        if res["type"] != kind:
            continue
        literal = res["patternType"] == "literal" and res["name"] == name
        prefix = res["patternType"] == "prefix" and name.startswith(res["name"])
        if literal or prefix:
            ops |= set(acl["operations"])
    return ops


def test_kafkauser_is_fresh() -> None:
    assert (STRIMZI / "kafkauser.yaml").read_text(encoding="utf-8") == gen_user.build(), (
        "stale: run .venv/bin/python scripts/gen_kafkauser.py"
    )


def test_kafkauser_grants_every_topic_faust_topic_and_group_the_processes_use() -> None:
    settings = gen.deploy_settings()
    user = kafka_user()
    assert user["apiVersion"] == "kafka.strimzi.io/v1"
    assert user["metadata"]["name"] == settings.app_id
    assert user["metadata"]["labels"]["strimzi.io/cluster"] == "my-cluster"
    assert user["spec"]["authentication"] == {"type": "scram-sha-512"}
    acls = user["spec"]["authorization"]["acls"]
    every = {"Create", "Describe", "DescribeConfigs", "Read", "Write"}
    for spec in topic_specs(settings):
        assert allowed(acls, "topic", spec.name) == every, spec.name
    app = settings.app_id
    for internal in (
        f"{app}-__assignor-__leader",
        f"{app}-turns-changelog",
        f"{app}-x-repartition",
    ):
        assert allowed(acls, "topic", internal) == every, internal
    for group in (app, f"{app}-ledger-sink"):
        assert allowed(acls, "group", group) == {"Describe", "Read"}, group
    assert allowed(acls, "topic", "someone.elses.topic") == set()
    assert allowed(acls, "group", "another-app") == set()


def test_settings_point_at_strimzis_bootstrap_service() -> None:
    assert settings_env()["GW_KAFKA_BOOTSTRAP_SERVERS"] == (
        "my-cluster-kafka-bootstrap.kafka.svc:9092"
    )
