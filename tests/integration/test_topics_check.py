"""`grounding-worker topics check` against the real broker: drift is reported, exit 1; a check
changes nothing (not even on a broker that auto-creates topics)."""

from __future__ import annotations

import asyncio
import os
import secrets
import sys

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

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
