"""Read a topic as a batch: from a start offset to the end offsets captured when reading began.

``replay`` is a batch job, not a daemon: it reads what is there when it starts and stops. No
consumer group is used (``group_id=None``), so reading commits nothing and never disturbs another
reader; where to resume is the replay log's business (``worker.tools.replay_log``).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition

from worker.faults import BrokerUnavailable
from worker.kafka.access import client_security
from worker.kafka.topic_specs import FRAMING_BYTES
from worker.settings import Settings


def record_bytes_limit(settings: Settings) -> int:
    """The largest record the DLQ accepts (twice the draft maximum, plus framing)."""
    return 2 * settings.max_draft_bytes + FRAMING_BYTES


def batch_consumer(settings: Settings) -> Any:
    """A group-less consumer that can fetch the largest dead letter."""
    return AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap_servers,
        **client_security(settings),
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=record_bytes_limit(settings),
        fetch_max_bytes=max(52428800, record_bytes_limit(settings)),
        request_timeout_ms=int(settings.replay_read_timeout_s * 1000) + 5000,
    )


def acked_producer(settings: Settings) -> Any:
    """A producer whose sends are acknowledged by every in-sync replica, without duplicates."""
    return AIOKafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap_servers,
        **client_security(settings),
        acks="all",
        enable_idempotence=True,
        max_request_size=record_bytes_limit(settings),
        request_timeout_ms=int(settings.replay_read_timeout_s * 1000),
    )


async def partitions_of(consumer: Any, topic: str) -> list[int] | None:
    """The topic's partitions, or ``None`` when it does not exist."""
    # The consumer has no public metadata refresh; the client call is stable across 0.1x.
    found = await consumer._client.fetch_all_metadata()
    parts = found.partitions_for_topic(topic)
    return None if parts is None else sorted(parts)


async def read_to_end(
    consumer: Any,
    topic: str,
    partitions: list[int],
    *,
    start: Mapping[int, int] | None = None,
    stop: Mapping[int, int] | None = None,
    stall_timeout_s: float,
    on_total: Callable[[int], None] | None = None,
) -> AsyncIterator[Any]:
    """Yield the records of ``partitions`` in offset order per partition, from ``start`` (else
    the beginning) up to the end offsets captured now (or ``stop``, exclusive, if lower).

    ``on_total``, once those offsets are known and before the first record, gets how many
    offsets lie between them: the records to come (fewer only where the log has gaps).

    Raises ``BrokerUnavailable`` when no record arrives for ``stall_timeout_s`` while some
    partition is still short of its end.
    """
    tps = [TopicPartition(topic, p) for p in partitions]
    if not tps:
        if on_total is not None:
            on_total(0)
        return
    consumer.assign(tps)
    ends = await consumer.end_offsets(tps)
    firsts = await consumer.beginning_offsets(tps)
    bound: dict[TopicPartition, int] = {}
    total = 0
    for tp in tps:
        end = ends[tp]
        if stop is not None and tp.partition in stop:
            end = min(end, stop[tp.partition])
        begin = max(firsts[tp], (start or {}).get(tp.partition, 0))
        if begin < end:
            consumer.seek(tp, begin)
            bound[tp] = end
            total += end - begin
    if on_total is not None:
        on_total(total)
    last_progress = time.monotonic()
    while bound:
        batches = await consumer.getmany(*bound, timeout_ms=500)
        for tp, records in batches.items():
            for record in records:
                if record.offset < bound.get(tp, -1):
                    yield record
        for tp in list(bound):
            if await consumer.position(tp) >= bound[tp]:
                del bound[tp]
        if any(batches.values()):
            last_progress = time.monotonic()
        elif time.monotonic() - last_progress > stall_timeout_s:
            raise BrokerUnavailable(
                f"no progress reading {topic} for {stall_timeout_s:g} s; is the broker up?"
            )
