"""Kafka side of the benchmark: fresh topics, a bulk and a paced producer, an output collector.

Latency is measured on record timestamps only: the drafts topic stamps each record with the
broker's append time (LogAppendTime), and each output carries its producer's send time
(CreateTime); both clocks are this machine's.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from dev.bench.drafts import DraftRecord, index_of
from worker.kafka.topics_admin import create_topics
from worker.settings import Settings, TopicNames

PRODUCER_REQUEST_MAX = 8 * 1024 * 1024


def scenario_settings(base: Settings, prefix: str, partitions: int, app_id: str) -> Settings:
    """Settings naming the scenario's own topics (``<prefix>.agent.drafts`` and so on) and app id
    (so its turn-table changelog, ``<app_id>-turns-changelog``, is created with the others)."""
    defaults = TopicNames()
    names = TopicNames(**{f: f"{prefix}.{getattr(defaults, f)}" for f in TopicNames.model_fields})
    return base.model_copy(
        update={"topics": names, "topic_partitions": partitions, "app_id": app_id}
    )


async def make_topics(settings: Settings) -> None:
    """Create the scenario's topics with the worker's own specs (LogAppendTime on drafts)."""
    await create_topics(settings)


async def delete_topics(bootstrap: str, prefixes: Iterable[str]) -> None:
    """Best-effort removal of every topic whose name starts with one of ``prefixes``."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        names = [t for t in await admin.list_topics() if t.startswith(tuple(prefixes))]
        if names:
            with contextlib.suppress(Exception):
                await admin.delete_topics(names, timeout_ms=30_000)
    finally:
        await admin.close()


async def topic_count(bootstrap: str) -> int:
    """How many topics the broker holds (its background work grows with their partitions)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return len(await admin.list_topics())
    finally:
        await admin.close()


def _producer(bootstrap: str, linger_ms: int = 5) -> AIOKafkaProducer:
    return AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        linger_ms=linger_ms,
        max_batch_size=1024 * 1024,
        max_request_size=PRODUCER_REQUEST_MAX,
    )


class Sent(NamedTuple):
    """When each draft was appended: broker append time (ms), by draft index."""

    append_ms: dict[int, int]
    first_send_s: float
    last_send_s: float
    #: Paced: how late the producer handed its latest draft over, against its schedule (ms).
    max_late_ms: float = 0.0


async def produce_all(bootstrap: str, topic: str, records: Sequence[DraftRecord]) -> Sent:
    """Append every record as fast as the producer goes; return their append timestamps."""
    producer = _producer(bootstrap)
    await producer.start()
    try:
        t0 = time.time()
        futures = [
            await producer.send(topic, r.value, key=r.key, headers=r.headers) for r in records
        ]
        t1 = time.time()
        metas = await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return Sent({r.index: m.timestamp for r, m in zip(records, metas, strict=True)}, t0, t1)


async def produce_paced(
    bootstrap: str, topic: str, records: Sequence[DraftRecord], rate: float
) -> Sent:
    """Open-loop: record i is sent at ``start + i / rate`` by the clock, whatever the consumer
    does (a late producer catches up at once, it never waits for an output)."""
    # A short linger keeps the producer's own CPU low on a 2-core machine; it does not show in
    # the latency, which starts at the broker's append time (LogAppendTime).
    producer = _producer(bootstrap, linger_ms=2)
    await producer.start()
    try:
        futures = []
        late = 0.0
        start = time.monotonic()
        t0 = time.time()
        for i, r in enumerate(records):
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            futures.append(await producer.send(topic, r.value, key=r.key, headers=r.headers))
            late = max(late, time.monotonic() - due)
        t1 = time.time()
        metas = await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return Sent(
        {r.index: m.timestamp for r, m in zip(records, metas, strict=True)},
        t0,
        t1,
        round(1000 * late, 1),
    )


class Seen(NamedTuple):
    """The first output of one draft."""

    topic: str
    timestamp_ms: int


class Collector:
    """Reads output topics from the beginning and keeps, per draft index, its first output."""

    def __init__(self, bootstrap: str, topics: Sequence[str], run_id: int) -> None:
        self._bootstrap = bootstrap
        self._topics = list(topics)
        self._run_id = run_id
        self.seen: dict[int, Seen] = {}
        self.records = 0
        self._consumer: AIOKafkaConsumer | None = None
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    async def start(self) -> None:
        """Assign every partition of the output topics and start reading."""
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=self._bootstrap,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=20,
            max_partition_fetch_bytes=8 * 1024 * 1024,
        )
        await self._consumer.start()
        parts = []
        for topic in self._topics:
            for _ in range(50):
                found = self._consumer.partitions_for_topic(topic)
                if found:
                    break
                await self._consumer._client.force_metadata_update()
                await asyncio.sleep(0.1)
            parts += [TopicPartition(topic, p) for p in sorted(found or ())]
        self._consumer.assign(parts)
        await self._consumer.seek_to_beginning(*parts)
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        assert self._consumer is not None
        while True:
            batches = await self._consumer.getmany(timeout_ms=100, max_records=5000)
            for tp, msgs in batches.items():
                for m in msgs:
                    self.records += 1
                    tp_value = next((v for k, v in m.headers if k == "traceparent"), None)
                    if tp_value is None:
                        continue
                    index = index_of(tp_value, self._run_id)
                    if index is not None and index not in self.seen:
                        self.seen[index] = Seen(tp.topic, m.timestamp)
            if batches:
                self._changed.set()

    async def wait_for(self, indices: Iterable[int], timeout_s: float) -> bool:
        """True once every index has an output; False at the deadline."""
        wanted = set(indices)
        deadline = time.monotonic() + timeout_s
        while True:
            if wanted.issubset(self.seen):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=min(left, 1.0))
            if self._task is not None and self._task.done():
                self._task.result()  # surface the reader's exception

    async def stop(self) -> None:
        """Stop reading and close the consumer."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._consumer is not None:
            await self._consumer.stop()


async def ledger_progress(bootstrap: str, topic: str, group: str) -> tuple[int, int]:
    """(records on ``topic``, of them committed by consumer group ``group``), all partitions.

    The scenario's topics are fresh, so the end offsets count every record published. The
    ledger sink commits a batch's offsets only after its rows are in Postgres.
    """
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await consumer.start()
    await admin.start()
    try:
        parts = [
            TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())
        ]
        if not parts:
            await consumer._client.force_metadata_update()
            parts = [
                TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())
            ]
        ends = await consumer.end_offsets(parts) if parts else {}
        committed = await admin.list_consumer_group_offsets(group, partitions=parts)
        done = sum(min(m.offset, ends[tp]) for tp, m in committed.items() if m.offset >= 0)
        return sum(ends.values()), done
    finally:
        await admin.close()
        await consumer.stop()
