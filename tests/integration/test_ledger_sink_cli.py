"""`grounding-worker ledger-sink` runs the sink alone: ledger batches in, rows in Postgres, once.

Runs the real command against the real broker and Postgres; the same batch published twice
leaves one row per (tenant, turn, draft, kind, source id), and SIGTERM stops it cleanly.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from worker.kafka.topics_admin import create_topics
from worker.settings import Settings

pytestmark = pytest.mark.integration


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


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
        "GW_WEB_PORT": str(port := free_port()),
        "GW_WEB_HOST": "127.0.0.1",
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
        # Run alone, the sink serves its own /metrics (and /health); nothing else answers.
        status, text = await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/metrics")
        assert status == 200
        assert re.search(r"^grounding_ledger_rows_written_total [1-9]", text, re.M), text
        assert re.search(r"^process_cpu_seconds_total \d", text, re.M)
        assert re.search(r"^grounding_build_info\{.*\} 1\.0$", text, re.M)
        assert "_created" not in text
        assert (await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/health"))[0] == 200
        assert (await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/table/"))[0] == 404
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.to_thread(proc.wait, 30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert code == 0, log_path.read_text(errors="replace")
