"""`grounding-worker topics check` against the real broker: drift is reported, exit 1; a check
changes nothing (not even on a broker that auto-creates topics). `--json` gives the same verdicts
and exit codes, machine-readable."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from worker.kafka.topic_specs import topic_specs
from worker.settings import load_settings

pytestmark = pytest.mark.integration

ROLES = ("drafts", "regenerate", "validated", "could_not_ground", "ledger", "dlq")


def topic_env(kafka_bootstrap: str, app_id: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GW_")}
    env |= {
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "GW_APP_ID": app_id,
        "GW_TOPIC_PARTITIONS": "2",
        "GW_REPLAY_LOG_TOPIC": f"{app_id}.replayed",
    }
    env |= {f"GW_TOPICS__{role.upper()}": f"{app_id}.{role}" for role in ROLES}
    return env


async def topics(env: dict[str, str], *args: str) -> tuple[int, list[str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "worker.cli",
        "topics",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None, err
    return proc.returncode, out.decode().splitlines()


async def test_check_reports_missing_then_ok_then_drift(kafka_bootstrap: str) -> None:
    app_id = f"check-{secrets.token_hex(4)}"
    env = topic_env(kafka_bootstrap, app_id)
    names = [f"{app_id}.{r}" for r in ROLES] + [f"{app_id}.replayed", f"{app_id}-turns-changelog"]

    code, lines = await topics(env, "check")
    assert code == 1
    assert sorted(lines) == sorted(f"drift   {name}: missing" for name in names)

    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        # The check created nothing, although the test bed's broker auto-creates topics.
        assert not set(names) & set(await admin.list_topics())

        code, lines = await topics(env, "create")
        assert code == 0
        code, lines = await topics(env, "check")
        assert (code, sorted(lines)) == (0, sorted(f"ok      {name}" for name in names))

        await admin.create_partitions({f"{app_id}.drafts": NewPartitions(total_count=3)})
        # AlterConfigs replaces a topic's whole config: name every declared one.
        await admin.alter_configs(
            [
                ConfigResource(
                    ConfigResourceType.TOPIC,
                    f"{app_id}.validated",
                    {
                        "retention.ms": "1000",
                        "max.message.bytes": "4259840",
                        "cleanup.policy": "delete",
                    },
                ),
                ConfigResource(
                    ConfigResourceType.TOPIC,
                    f"{app_id}-turns-changelog",
                    {"cleanup.policy": "delete", "max.message.bytes": "4259840"},
                ),
            ]
        )
    finally:
        await admin.close()

    code, lines = await topics(env, "check")
    assert code == 1
    drifted = [line for line in lines if line.startswith("drift")]
    assert sorted(drifted) == sorted(
        [
            f"drift   {app_id}.drafts: partitions 3, declared 2",
            f"drift   {app_id}.validated: retention.ms=1000, declared 604800000",
            f"drift   {app_id}-turns-changelog: cleanup.policy=delete, declared compact",
        ]
    )
    assert f"ok      {app_id}.regenerate" in lines


async def test_list_and_check_as_json(
    kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app_id = f"json-{secrets.token_hex(4)}"
    env = topic_env(kafka_bootstrap, app_id)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    specs = topic_specs(load_settings())
    names = [s.name for s in specs]
    assert len(names) == 8

    code, lines = await topics(env, "list", "--json")
    assert code == 0
    assert json.loads("\n".join(lines)) == [
        {
            "name": s.name,
            "role": s.role.value,
            "exists": False,
            "partitions": None,
            "replication_factor": None,
            "config": None,
        }
        for s in specs
    ]
    code, lines = await topics(env, "check", "--json")
    assert code == 1
    assert json.loads("\n".join(lines)) == {
        "ok": False,
        "topics": [{"name": s.name, "role": s.role.value, "ok": False} for s in specs],
        "findings": [
            {
                "topic": s.name,
                "field": "exists",
                "key": None,
                "observed": False,
                "declared": True,
                "message": "missing",
            }
            for s in specs
        ],
    }

    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        assert not set(names) & set(await admin.list_topics())  # neither created anything
        code, lines = await topics(env, "create", "--json")
        assert (code, json.loads("\n".join(lines))) == (0, {"created": names})

        code, lines = await topics(env, "list", "--json")
        assert code == 0
        # Only the configs set on the topic (the declared ones), none of the broker's defaults.
        assert json.loads("\n".join(lines)) == [
            {
                "name": s.name,
                "role": s.role.value,
                "exists": True,
                "partitions": s.partitions,  # 2 (GW_TOPIC_PARTITIONS), the replay log 1
                "replication_factor": 1,
                "config": dict(sorted(s.config.items())),
            }
            for s in specs
        ]
        code, lines = await topics(env, "check", "--json")
        assert (code, json.loads("\n".join(lines))) == (
            0,
            {
                "ok": True,
                "topics": [{"name": s.name, "role": s.role.value, "ok": True} for s in specs],
                "findings": [],
            },
        )

        await admin.create_partitions({f"{app_id}.drafts": NewPartitions(total_count=3)})
        await admin.alter_configs(
            [
                ConfigResource(
                    ConfigResourceType.TOPIC,
                    f"{app_id}.validated",
                    {
                        "retention.ms": "1000",
                        "max.message.bytes": "4259840",
                        "cleanup.policy": "delete",
                    },
                )
            ]
        )

        code, lines = await topics(env, "check", "--json")
        assert code == 1
        body = json.loads("\n".join(lines))
        assert body["ok"] is False
        assert [t["name"] for t in body["topics"] if not t["ok"]] == [
            f"{app_id}.drafts",
            f"{app_id}.validated",
        ]
        assert body["findings"] == [
            {
                "topic": f"{app_id}.drafts",
                "field": "partitions",
                "key": None,
                "observed": 3,
                "declared": 2,
                "message": "partitions 3, declared 2",
            },
            {
                "topic": f"{app_id}.validated",
                "field": "config",
                "key": "retention.ms",
                "observed": "1000",
                "declared": "604800000",
                "message": "retention.ms=1000, declared 604800000",
            },
        ]
        code, lines = await topics(env, "list", "--json")
        assert code == 0
        listed = {t["name"]: t for t in json.loads("\n".join(lines))}
        assert listed[f"{app_id}.drafts"]["partitions"] == 3
        assert listed[f"{app_id}.validated"]["config"] == {
            "cleanup.policy": "delete",
            "max.message.bytes": "4259840",
            "retention.ms": "1000",
        }
    finally:
        await admin.delete_topics(names)
        await admin.close()
