"""`grounding-worker ledger-sink` runs the sink alone: ledger batches in, rows in Postgres, once.

Runs the real command against the real broker and Postgres; the same batch published twice
leaves one row per (tenant, turn, draft, kind, source id), and SIGTERM stops it cleanly.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from worker.settings import Settings
from worker.stream.topics_admin import create_topics

pytestmark = pytest.mark.integration


def _batch(tenant: str, turn: str) -> bytes:
    return orjson.dumps(
        {
            "schema_version": 1,
            "event_id": f"ev-{turn}",
            "turn_id": turn,
            "draft_id": f"{turn}-d0",
            "attempt": 0,
            "tenant_id": tenant,
            "outcome": "grounded",
            "policy_version": "default-1",
            "rows": [
                {
                    "kind": "OBS",
                    "source_id": "1001",
                    "resolution": "resolved",
                    "quote_check": "exact",
                    "paths": ["answer_markdown"],
                },
                {
                    "kind": "DOC",
                    "source_id": str(2**63 + 5),
                    "resolution": "dangling",
                    "quote_check": "none",
                    "paths": ["citations[0]", "answer_markdown"],
                },
            ],
        }
    )


async def test_the_sink_alone_writes_each_row_once_and_stops_on_sigterm(
    migrated: Settings, kafka_bootstrap: str, pg_pool: Any, tmp_path: Path
) -> None:
    suffix = secrets.token_hex(4)
    tenant, turn = f"sink-{suffix}", f"t-{suffix}"
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "POSTGRES_DSN": migrated.postgres_dsn.get_secret_value(),
        "GW_APP_ID": f"sink-test-{suffix}",
        "GW_TOPICS__LEDGER": f"sink-test-{suffix}.ledger",
        "GW_TOPIC_PARTITIONS": "1",
    }
    settings = Settings.model_validate(
        {
            "kafka_bootstrap_servers": kafka_bootstrap,
            "topics": {"ledger": env["GW_TOPICS__LEDGER"]},
            "topic_partitions": 1,
        }
    )
    await create_topics(settings)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap)
    await producer.start()
    try:
        for _ in range(2):  # published twice: at least once is the contract
            await producer.send_and_wait(
                env["GW_TOPICS__LEDGER"], _batch(tenant, turn), key=turn.encode()
            )
    finally:
        await producer.stop()

    log_path = tmp_path / "ledger-sink.log"
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(  # noqa: ASYNC220 - returns at once
            [sys.executable, "-m", "worker.cli", "ledger-sink"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log_file,
        )
    try:
        deadline = time.monotonic() + 60
        rows: list[Any] = []
        while time.monotonic() < deadline:
            rows = await pg_pool.fetch(
                "SELECT kind, source_id::text AS source_id, resolution, quote_check, paths,"
                " outcome, attempt FROM citation_ledger WHERE tenant_id = $1 ORDER BY kind",
                tenant,
            )
            if len(rows) >= 2:
                break
            await asyncio.sleep(0.3)
        await asyncio.sleep(1.5)  # the second copy of the batch has been read by now
        rows = await pg_pool.fetch(
            "SELECT kind, source_id::text AS source_id, resolution, quote_check, paths,"
            " outcome, attempt FROM citation_ledger WHERE tenant_id = $1 ORDER BY kind",
            tenant,
        )
        assert [tuple(r) for r in rows] == [
            (
                "DOC",
                str(2**63 + 5),
                "dangling",
                "none",
                ["citations[0]", "answer_markdown"],
                "grounded",
                0,
            ),
            ("OBS", "1001", "resolved", "exact", ["answer_markdown"], "grounded", 0),
        ]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.to_thread(proc.wait, 30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert code == 0, log_path.read_text(errors="replace")
