"""The bulk hand-over (``ProducerPublisher.send_many``, ``GW_PRODUCE_BATCHED``) against the broker.

Through the worker's own Faust producer (acks=all, zstd, 512 KiB batches), on private topics:
every record lands on the partition aiokafka's per-record path picks for its key (or the one
given), in the order handed over, with key, value and headers intact, across several builders
per partition; a record the topic refuses (larger than its ``max.message.bytes``) fails alone,
as a :class:`PoisonFault`, and the records around it are delivered.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.partitioner import murmur2

from worker.core import OutRecord
from worker.faults import PoisonFault
from worker.kafka.publisher import ProducerPublisher
from worker.settings import Settings
from worker.stream.faust_app import new_app
from worker.stream.faust_internals import aiokafka_producer

pytestmark = pytest.mark.integration

PARTITIONS = 3
TOPIC_MAX_BYTES = 1024 * 1024


class Bed:
    def __init__(self, bootstrap: str, out: str, changelog: str, publisher: Any) -> None:
        self.bootstrap = bootstrap
        self.out = out
        self.changelog = changelog
        self.publisher: ProducerPublisher = publisher


@pytest.fixture
async def bed(kafka_bootstrap: str, tmp_path: Path) -> AsyncIterator[Bed]:
    run = uuid.uuid4().hex[:8]
    out, changelog = f"it-bulk-out-{run}", f"it-bulk-cl-{run}"
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    settings = Settings(  # type: ignore[call-arg]
        KAFKA_BOOTSTRAP_SERVERS=kafka_bootstrap, app_id=f"it-bulk-{run}", data_dir=tmp_path
    )
    app = new_app(settings)
    try:
        await admin.create_topics(
            [
                NewTopic(
                    out, PARTITIONS, 1, topic_configs={"max.message.bytes": str(TOPIC_MAX_BYTES)}
                ),
                NewTopic(changelog, PARTITIONS, 1),
            ]
        )
        await app.producer.start()
        try:
            yield Bed(
                kafka_bootstrap,
                out,
                changelog,
                ProducerPublisher(app.producer, lambda: aiokafka_producer(app.producer)),
            )
        finally:
            await app.producer.stop()
    finally:
        await admin.delete_topics([out, changelog])
        await admin.close()


async def consumed(bootstrap: str, topic: str, count: int) -> dict[int, list[Any]]:
    """Every record of ``topic`` by partition, in log order (waits for ``count`` records)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        got: dict[int, list[Any]] = {p: [] for p in range(PARTITIONS)}
        async with asyncio.timeout(30):
            while sum(map(len, got.values())) < count:
                batch = await consumer.getmany(timeout_ms=1000)
                for tp, messages in batch.items():
                    got[tp.partition].extend(messages)
        return got
    finally:
        await consumer.stop()


async def test_every_record_reaches_its_partition_in_order_with_key_and_headers(bed: Bed) -> None:
    records: list[OutRecord] = []
    for d in range(300):
        turn = f"turn-{d}-{secrets.token_hex(3)}".encode()
        trace = (("traceparent", f"00-{secrets.token_hex(16)}-{d:016x}-01".encode()),)
        # 6 KB of incompressible text: 300 outputs over 3 partitions fill two 512 KiB builders
        # on each, so the order across builders is exercised too.
        records.append(OutRecord(bed.out, turn, secrets.token_hex(3000).encode(), trace, None))
        records.append(OutRecord(bed.changelog, turn, f"state-{d}".encode(), (), d % PARTITIONS))
    acks = await bed.publisher.send_many(records)
    await asyncio.wait(acks)
    assert [a.exception() for a in acks] == [None] * len(records)

    # The per-record path (aiokafka's own partitioner) for one key, as a cross-check.
    probe = await (await bed.publisher.send(OutRecord(bed.out, records[0][1], b"probe")))
    out = await consumed(bed.bootstrap, bed.out, 301)
    changelog = await consumed(bed.bootstrap, bed.changelog, 300)

    def expected(r: OutRecord) -> int:
        key, given = r[1], r[4]
        assert key is not None
        return given if given is not None else (murmur2(key) & 0x7FFFFFFF) % PARTITIONS

    for topic, got in ((bed.out, out), (bed.changelog, changelog)):
        for partition, messages in got.items():
            sent = [
                (r[1], r[2], list(r[3]))
                for r in records
                if r[0] == topic and expected(r) == partition
            ]
            seen = [(m.key, m.value, list(m.headers)) for m in messages if m.value != b"probe"]
            assert seen == sent, (topic, partition)
            assert len(sent) > 50  # every partition took its share
    assert [p for p, ms in out.items() if any(m.value == b"probe" for m in ms)] == [
        expected(records[0])
    ]
    assert probe.partition == expected(records[0])  # type: ignore[attr-defined]


async def test_a_record_the_topic_refuses_fails_alone(bed: Bed) -> None:
    turn = b"turn-big"
    big = os.urandom(TOPIC_MAX_BYTES + 512 * 1024)  # incompressible: over the topic's limit
    records: list[OutRecord] = [
        OutRecord(bed.out, turn, b"before", (("n", b"1"),), None),
        OutRecord(bed.out, turn, big, (("n", b"2"),), None),
        OutRecord(bed.out, turn, b"after", (("n", b"3"),), None),
    ]
    acks = await bed.publisher.send_many(records)
    await asyncio.wait(acks)
    faults = [a.exception() for a in acks]
    assert faults[0] is None
    assert faults[2] is None
    assert isinstance(faults[1], PoisonFault)
    assert str(faults[1]) == "broker refused the record: MessageSizeTooLargeError"
    got = await consumed(bed.bootstrap, bed.out, 2)
    [(partition, messages)] = [(p, ms) for p, ms in got.items() if ms]
    assert [(m.key, m.value, list(m.headers)) for m in messages] == [
        (turn, b"before", [("n", b"1")]),
        (turn, b"after", [("n", b"3")]),
    ]
    assert partition == acks[0].result().partition  # type: ignore[attr-defined]


async def test_keyless_records_are_delivered(bed: Bed) -> None:
    """A dead letter of a keyless draft stays keyless: it goes to a partition the topic has."""
    records: list[OutRecord] = [
        OutRecord(bed.out, None, f"keyless-{i}".encode(), (), None) for i in range(5)
    ]
    acks = await bed.publisher.send_many(records)
    await asyncio.wait(acks)
    assert [a.exception() for a in acks] == [None] * 5
    got = await consumed(bed.bootstrap, bed.out, 5)
    seen = sorted((m.key, m.value) for ms in got.values() for m in ms)
    assert seen == [(None, f"keyless-{i}".encode()) for i in range(5)]
