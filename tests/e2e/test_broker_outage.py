"""Broker loss under a running worker and a running client, on a throwaway broker of the test's
own (``dev.testbed.kafka.PrivateBroker``: own directory and ports; the shared bed's broker is never
touched, so no other test can notice).

- The worker: with the broker stopped for 30 s, ``/ready`` turns 503 within
  ``GW_READY_KAFKA_UNREACHABLE_S`` plus one probe, one ``kafka.unreachable`` and one
  ``kafka.recovered`` line are logged, ``grounding_kafka_reachable`` follows, the log stays
  small (aiokafka's repeating lines are rate-limited), and ``/ready`` is 200 again after.
- The client: with the broker frozen (SIGSTOP: connections stay open, nothing answers), ``ask``
  and ``stop`` end within their timeouts.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dev.harness import WorkerProcess, free_port, topic_names, unique_id
from dev.testbed.kafka import PrivateBroker
from worker.client import GroundingClient, PublishTimeoutError, draft_envelope
from worker.kafka.topics_admin import create_topics
from worker.settings import Settings

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.outage]

OUTAGE_S = 30.0
#: ``GW_READY_KAFKA_UNREACHABLE_S`` of the worker under test.
UNREACHABLE_AFTER_S = 5.0
#: The whole outage's log, every logger: before rate limiting aiokafka alone wrote ~4,900 lines
#: (1.1 MB) in 30 s.
MAX_OUTAGE_LINES = 150
MAX_OUTAGE_BYTES = 64 * 1024


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateBroker]:
    own = PrivateBroker(tmp_path_factory.mktemp("private-kafka"), free_port(), free_port())
    own.start()
    try:
        yield own
    finally:
        own.stop()


def _ready(worker: WorkerProcess) -> tuple[int, dict[str, Any]]:
    url = f"http://127.0.0.1:{worker.web_port}/ready"
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status), orjson.loads(response.read())
    except urllib.error.HTTPError as exc:
        return int(exc.code), orjson.loads(exc.read())


async def _await_ready(worker: WorkerProcess, status: int, within_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + within_s
    last: Any = None
    while time.monotonic() < deadline:
        with_status = await asyncio.to_thread(_ready, worker)
        if with_status[0] == status:
            return with_status[1]
        last = with_status
        await asyncio.sleep(0.25)
    raise AssertionError(f"/ready not {status} within {within_s} s; last {last}")


def _gauge(metrics: str, name: str) -> float:
    line = next(ln for ln in metrics.splitlines() if ln.startswith(name + " "))
    return float(line.split()[1])


def _events(text: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


async def test_ask_and_stop_end_within_their_timeouts_when_the_broker_freezes(
    broker: PrivateBroker,
) -> None:
    names = topic_names(unique_id("stall"))
    await create_topics(
        Settings(GW_KAFKA_BOOTSTRAP_SERVERS=broker.bootstrap, topics=names, topic_partitions=1)  # type: ignore[call-arg]
    )
    draft = draft_envelope(
        tenant_id="acme", user_id="u-ana", kind="answer", output={"answer_markdown": "x"}
    )
    async with GroundingClient(broker.bootstrap, topics=names) as client:
        assert broker.pid is not None
        os.killpg(broker.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(PublishTimeoutError, match=r"within 3\.0 s"):
                await client.ask(draft, timeout_s=3.0)
            assert time.monotonic() - started < 4.0
            started = time.monotonic()
            await client.stop(timeout_s=2.0)
            assert time.monotonic() - started < 4.0
        finally:
            os.killpg(broker.pid, signal.SIGCONT)


async def test_a_30_s_broker_outage_is_one_log_pair_a_503_and_a_bounded_log(
    broker: PrivateBroker, servers: Any, tmp_path: Path
) -> None:
    worker = WorkerProcess(
        kafka_bootstrap=broker.bootstrap,
        postgres_dsn=servers.postgres,
        mongo_url=servers.mongo,
        workdir=tmp_path / "worker",
        partitions=1,
        env={"GW_READY_KAFKA_UNREACHABLE_S": str(UNREACHABLE_AFTER_S)},
    )
    async with worker:
        await _await_ready(worker, 200, 60)
        assert _gauge(await worker.metrics(), "grounding_kafka_reachable") == 1.0
        mark = worker.stderr_path.stat().st_size

        stopped = time.monotonic()
        await asyncio.to_thread(broker.stop)
        body = await _await_ready(worker, 503, UNREACHABLE_AFTER_S + 15)
        noticed_s = time.monotonic() - stopped
        assert any(r.startswith("kafka unreachable for ") for r in body["reasons"]), body
        assert _gauge(await worker.metrics(), "grounding_kafka_reachable") == 0.0
        await asyncio.sleep(max(0.0, OUTAGE_S - (time.monotonic() - stopped)))
        outage_log = worker.stderr_path.read_bytes()[mark:]

        await asyncio.to_thread(broker.start)
        await _await_ready(worker, 200, 90)
        assert _gauge(await worker.metrics(), "grounding_kafka_reachable") == 1.0
        events = _events(worker.stderr_path.read_bytes()[mark:])

    assert noticed_s < UNREACHABLE_AFTER_S + 10
    assert [e["event"] for e in events if e["event"].startswith("kafka.")] == [
        "kafka.unreachable",
        "kafka.recovered",
    ]
    unreachable = next(e for e in events if e["event"] == "kafka.unreachable")
    assert unreachable["level"] == "error"
    assert unreachable["bootstrap"] == broker.bootstrap
    lines = outage_log.count(b"\n")
    assert lines <= MAX_OUTAGE_LINES, outage_log[-3000:].decode(errors="replace")
    assert len(outage_log) <= MAX_OUTAGE_BYTES
