"""Publishing through the Faust app's producer, with broker errors translated into faults.

Two hand-overs share one set of rules (acks=all, the broker's errors translated by
:func:`_translate`):

- :meth:`ProducerPublisher.send`: one record through Faust's ``Producer.send`` (aiokafka's
  ``send``: one accumulator append, one future and one partitioner call per record).
- :meth:`ProducerPublisher.send_many`: a whole batch's records, grouped by (topic, partition) in
  the order given, appended to aiokafka ``BatchBuilder``\\ s and handed over with ``send_batch``;
  one future per builder, shared by the records it holds (``GW_PRODUCE_BATCHED``).
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from aiokafka.errors import KafkaError
from aiokafka.partitioner import DefaultPartitioner

from worker.core import OutRecord
from worker.faults import BrokerUnavailable, PoisonFault

#: Keys whose partition is remembered (per partition count) before the memo starts afresh.
_PARTITION_MEMO_MAX = 1 << 16

_partitioner = DefaultPartitioner()

_MURMUR_SEED = 0x9747B28C
_MURMUR_M = 0x5BD1E995
_U32 = 0xFFFFFFFF
_WORDS = struct.Struct("<I")


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 of a key, exactly aiokafka's (and the Java client's) value.

    aiokafka's pure-Python version assembles every 4-byte word from single bytes and masks after
    each operation (~1.8 µs for a 13-byte key, ~4.7 for a UUID); this reads the words with one
    ``struct`` pass (~0.8 and ~1.5). It runs once per decided draft (the turn key's partition of
    each output topic, remembered after). A test checks both agree on every length and byte.
    """
    length = len(data)
    h = _MURMUR_SEED ^ length
    whole = length & ~3
    for (word,) in _WORDS.iter_unpack(data[:whole]):
        k = (word * _MURMUR_M) & _U32
        k ^= k >> 24
        h = ((h * _MURMUR_M) & _U32) ^ ((k * _MURMUR_M) & _U32)
    extra = length & 3
    if extra >= 3:
        h ^= data[whole + 2] << 16
    if extra >= 2:
        h ^= data[whole + 1] << 8
    if extra >= 1:
        h = ((h ^ data[whole]) * _MURMUR_M) & _U32
    h ^= h >> 13
    h = (h * _MURMUR_M) & _U32
    return h ^ (h >> 15)


def _translate(exc: Exception) -> Exception:
    if isinstance(exc, KafkaError) and not getattr(exc, "retriable", False):
        return PoisonFault(f"broker refused the record: {type(exc).__name__}")
    return BrokerUnavailable(f"broker unavailable: {type(exc).__name__}")


class ProducerPublisher:
    """:class:`worker.stream.seams.BulkPublisher` over a Faust (aiokafka) producer.

    ``client`` gives the aiokafka producer under Faust's, started (the bulk hand-over builds
    aiokafka batches); Faust has no public way to it, so the shell passes
    ``worker.stream.faust_internals.aiokafka_producer``.
    """

    def __init__(self, producer: Any, client: Callable[[], Any]) -> None:
        self._producer = producer
        self._client = client
        self._partition_memo: dict[tuple[bytes, int], int] = {}

    async def send(self, record: OutRecord) -> Awaitable[object]:
        """Enqueue ``record``; await the result for the broker's acknowledgement."""
        topic, key, value, headers, partition = record
        try:
            fut = await self._producer.send(topic, key, value, partition, None, list(headers))
        except (KafkaError, OSError, TimeoutError) as exc:
            raise _translate(exc) from exc
        return _translated(fut)

    async def send_many(self, records: Sequence[OutRecord]) -> list[asyncio.Future[object]]:
        """Hand ``records`` over in bulk; one future per record, in the order given.

        A partition's records keep their order: they fill that partition's builders in turn, and
        aiokafka takes a partition's next batch only once the one before was drained, with one
        request in flight per broker. A record without a partition goes where aiokafka's
        default partitioner would send it (murmur2 of its key). A future fails with
        :class:`BrokerUnavailable` (retriable) or :class:`PoisonFault` for exactly the records
        of the batch the broker refused; once a partition's hand-over fails, its later builders
        are not sent (a retry must not land behind them).
        """
        kafka = self._client()
        loop = asyncio.get_running_loop()
        out: list[asyncio.Future[object] | None] = [None] * len(records)
        groups = await self._grouped(kafka, records, out)
        plan = [
            (topic, partition, _filled(kafka, records, members))
            for (topic, partition), members in groups.items()
        ]
        # Every partition's first builder, then every second one: a partition's second hand-over
        # waits until its first was drained, and the others need not wait behind it.
        refused: dict[tuple[str, int], asyncio.Future[object]] = {}
        rounds = max((len(b) for _, _, b in plan), default=0)
        for n in range(rounds):
            for topic, partition, builders in plan:
                if n >= len(builders):
                    continue
                builder, held = builders[n]
                fut = refused.get((topic, partition))
                if fut is None:
                    builder.close()  # complete: sent at once, no linger
                    try:
                        sent = await kafka.send_batch(builder, topic, partition=partition)
                    except (KafkaError, OSError, TimeoutError) as exc:
                        fut = refused[(topic, partition)] = _failed(loop, _translate(exc))
                    else:
                        fut = _translated(sent)
                for i in held:
                    out[i] = fut
        done = [f for f in out if f is not None]
        assert len(done) == len(records), "every record has its future"
        return done

    async def _grouped(
        self, kafka: Any, records: Sequence[OutRecord], out: list[asyncio.Future[object] | None]
    ) -> dict[tuple[str, int], list[int]]:
        """Record indexes by (topic, partition), in order; a record whose topic has no metadata
        gets its failed future in ``out`` instead."""
        groups: dict[tuple[str, int], list[int]] = {}
        counts: dict[str, list[int] | Exception] = {}
        for i, (topic, key, _value, _headers, given) in enumerate(records):
            partition = given
            if partition is None:
                parts = counts.get(topic)
                if parts is None:
                    parts = counts[topic] = await _partitions(kafka, topic)
                if isinstance(parts, Exception):
                    out[i] = _failed(asyncio.get_running_loop(), parts)
                    continue
                partition = self._partition(kafka, topic, key, parts)
            group = groups.get((topic, partition))
            if group is None:
                groups[(topic, partition)] = [i]
            else:
                group.append(i)
        return groups

    def _partition(self, kafka: Any, topic: str, key: bytes | None, parts: list[int]) -> int:
        if key is None:
            available = list(kafka.client.cluster.available_partitions_for_topic(topic))
            return int(_partitioner(None, parts, available))
        memo = self._partition_memo
        slot = (key, len(parts))
        found = memo.get(slot)
        if found is None:
            if len(memo) >= _PARTITION_MEMO_MAX:
                memo.clear()
            # aiokafka's DefaultPartitioner for a key, with the faster murmur2 above.
            found = memo[slot] = parts[(murmur2(key) & 0x7FFFFFFF) % len(parts)]
        return found


def _filled(
    kafka: Any, records: Sequence[OutRecord], members: list[int]
) -> list[tuple[Any, list[int]]]:
    """One partition's records (indexes into ``records``) in builders, in order, each with the
    indexes it holds; a full builder is followed by a fresh one, which takes any one record."""
    builders: list[tuple[Any, list[int]]] = []
    builder = kafka.create_batch()
    held: list[int] = []
    for i in members:
        _, key, value, headers, _ = records[i]
        if builder.append(timestamp=None, key=key, value=value, headers=list(headers)) is None:
            builders.append((builder, held))
            builder = kafka.create_batch()
            builder.append(timestamp=None, key=key, value=value, headers=list(headers))
            held = []
        held.append(i)
    builders.append((builder, held))
    return builders


async def _partitions(kafka: Any, topic: str) -> list[int] | Exception:
    """The topic's partitions as aiokafka's partitioner is handed them, or the translated fault."""
    try:
        return list(await kafka.partitions_for(topic))
    except (KafkaError, OSError, TimeoutError) as exc:
        return _translate(exc)


def _failed(loop: asyncio.AbstractEventLoop, fault: Exception) -> asyncio.Future[object]:
    fut: asyncio.Future[object] = loop.create_future()
    fut.set_exception(fault)
    return fut


def _translated(fut: asyncio.Future[object]) -> asyncio.Future[object]:
    """A future with ``fut``'s result, or its broker error translated into a fault.

    A done-callback, not a coroutine: a batch hands hundreds of records over at once, and one
    task per record cost more than the send itself.
    """
    out: asyncio.Future[object] = fut.get_loop().create_future()

    def settle(done: asyncio.Future[object]) -> None:
        if out.done():
            return
        if done.cancelled():
            out.cancel()
            return
        exc = done.exception()
        if exc is None:
            out.set_result(done.result())
        elif isinstance(exc, KafkaError | OSError | TimeoutError):
            out.set_exception(_translate(exc))
        else:
            out.set_exception(exc)

    fut.add_done_callback(settle)
    return out
