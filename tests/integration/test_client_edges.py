"""The producer client at its edges, against the real broker: every call ends within its timeout
or raises a typed error naming the cause, and a draft the worker would dead-letter for its
envelope is refused before anything is published.

Topics are private to each test (no worker reads them), so "no verdict" is certain. The stalled
broker (a throwaway one, stopped with SIGSTOP) is in ``tests/integration/test_broker_outage.py``.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from dev.harness import free_port, topic_names, unique_id
from worker.client import (
    ClientNotStartedError,
    ClientStartError,
    DraftRejectedError,
    GroundingClient,
    PublishFailedError,
    VerdictTimeoutError,
    draft_envelope,
)
from worker.kafka.topics_admin import create_topics
from worker.settings import Settings, TopicNames

pytestmark = pytest.mark.integration


def _draft(**fields: Any) -> dict[str, Any]:
    envelope = draft_envelope(
        tenant_id="acme",
        user_id="u-ana",
        kind="answer",
        output={"answer_markdown": "p95 rose [OBS-1001].", "citations": []},
    )
    envelope.update(fields)
    return envelope


@pytest.fixture
async def topics(kafka_bootstrap: str) -> TopicNames:
    names = topic_names(unique_id("client-edges"))
    await create_topics(
        Settings(GW_KAFKA_BOOTSTRAP_SERVERS=kafka_bootstrap, topics=names, topic_partitions=1)  # type: ignore[call-arg]
    )
    return names


@pytest.fixture
async def client(kafka_bootstrap: str, topics: TopicNames) -> AsyncIterator[GroundingClient]:
    async with GroundingClient(kafka_bootstrap, topics=topics, max_draft_bytes=4096) as c:
        yield c


async def _drafts_end_offset(bootstrap: str, topic: str) -> int:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        return int((await consumer.end_offsets([tp]))[tp])
    finally:
        await consumer.stop()


async def test_ask_on_a_client_never_started_raises_not_started_at_once(
    kafka_bootstrap: str,
) -> None:
    client = GroundingClient(kafka_bootstrap)
    started = time.monotonic()
    with pytest.raises(ClientNotStartedError, match="not started"):
        await client.ask(_draft(), timeout_s=5)
    with pytest.raises(ClientNotStartedError):
        await client.submit(_draft())
    assert time.monotonic() - started < 0.5


async def test_ask_after_stop_raises_not_started(client: GroundingClient) -> None:
    await client.stop()
    with pytest.raises(ClientNotStartedError):
        await client.ask(_draft(), timeout_s=5)


REFUSED = [
    ({"schema_version": 2}, "schema_version", "unsupported_schema_version", "got 2"),
    ({"schema_version": "1"}, "schema_version", "unsupported_schema_version", 'got "1"'),
    ({"turn_id": None}, "turn_id", "malformed_envelope", "turn_id missing"),
    ({"principal": {"groups": []}}, "principal.user_id", "malformed_envelope", "user_id"),
    ({"kind": "essay"}, "kind", "malformed_envelope", "kind is not one of"),
    ({"attempt": -1}, "attempt", "malformed_envelope", "attempt"),
    ({"retrieval": [{"kind": "DOC", "id": -3}]}, "retrieval[0].id", "malformed_envelope", ""),
    ({"output": {"answer_markdown": "x" * 5000}}, "envelope", "oversized", "4096 bytes"),
]


@pytest.mark.parametrize(
    ("change", "field", "error_class", "says"), REFUSED, ids=[r[1] for r in REFUSED]
)
async def test_a_draft_the_worker_would_dead_letter_is_refused_before_publishing(
    client: GroundingClient,
    topics: TopicNames,
    kafka_bootstrap: str,
    change: dict[str, Any],
    field: str,
    error_class: str,
    says: str,
) -> None:
    envelope = _draft()
    envelope.update(change)
    if change.get("turn_id", "") is None:
        del envelope["turn_id"]
    before = await _drafts_end_offset(kafka_bootstrap, topics.drafts)

    with pytest.raises(DraftRejectedError) as caught:
        await client.ask(envelope, timeout_s=5)

    assert caught.value.field == field
    assert caught.value.error_class == error_class
    assert says in str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert await _drafts_end_offset(kafka_bootstrap, topics.drafts) == before


async def test_asking_with_a_string_is_a_typed_error_naming_the_envelope(
    client: GroundingClient,
) -> None:
    with pytest.raises(DraftRejectedError, match=r"envelope: .*mapping \(dict\), not str") as c:
        await client.ask("what is p95?", timeout_s=5)  # type: ignore[arg-type]
    assert c.value.field == "envelope"


async def test_a_published_draft_without_a_verdict_times_out_within_its_timeout(
    client: GroundingClient,
) -> None:
    """No worker reads these topics: the draft is acknowledged, and no verdict can come."""
    started = time.monotonic()
    with pytest.raises(VerdictTimeoutError, match=r"no verdict for turn .* within 1\.5 s"):
        await client.ask(_draft(), timeout_s=1.5)
    assert 1.4 < time.monotonic() - started < 3.0


async def test_a_publish_that_cannot_be_acknowledged_in_time_is_a_publish_error(
    client: GroundingClient,
) -> None:
    with pytest.raises(PublishFailedError, match=r"did not acknowledge the draft within 0\.001 s"):
        await client.ask(_draft(), timeout_s=0.001)


async def test_a_draft_kafka_refuses_is_a_publish_error_naming_the_cause(
    kafka_bootstrap: str, topics: TopicNames
) -> None:
    """The client allows what the worker allows (here 4 MiB), the producer's request limit is
    aiokafka's default 1 MiB: Kafka's client refuses the record, and ``ask`` says so at once."""
    big = _draft(output={"answer_markdown": "x" * (2 << 20)})
    async with GroundingClient(kafka_bootstrap, topics=topics, max_draft_bytes=4 << 20) as client:
        started = time.monotonic()
        with pytest.raises(PublishFailedError, match="MessageSizeTooLargeError") as caught:
            await client.ask(big, timeout_s=10)
        assert time.monotonic() - started < 2
    assert not isinstance(caught.value, TimeoutError)
    assert not caught.value.retriable  # a record too large stays too large


@pytest.fixture
def black_hole() -> Iterator[int]:
    """A port that accepts connections and never answers (a broker that hangs)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not done.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        done.set()
        thread.join()
        server.close()
        for sock in held:
            sock.close()


def _unclosed_warnings() -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    return [str(w.message) for w in caught if "Unclosed" in str(w.message)]


async def test_a_start_against_nothing_fails_typed_and_leaves_nothing_open() -> None:
    port = free_port()
    client = GroundingClient(f"127.0.0.1:{port}")
    with pytest.raises(ClientStartError, match=rf"Kafka at 127\.0\.0\.1:{port} could not be"):
        await client.start(timeout_s=5)
    del client
    assert _unclosed_warnings() == []


async def test_a_start_against_a_hanging_broker_ends_within_its_timeout(black_hole: int) -> None:
    client = GroundingClient(f"127.0.0.1:{black_hole}")
    started = time.monotonic()
    with pytest.raises(ClientStartError, match=r"did not answer within 1\.0 s"):
        await client.start(timeout_s=1.0)
    assert time.monotonic() - started < 3.0
    assert not client.started
    del client
    await asyncio.sleep(0)
    assert _unclosed_warnings() == []
