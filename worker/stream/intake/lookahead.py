"""The next batch admitted, and its evidence fetched, while the current batch is decided.

A batch waits twice on other processes: the store round trip of its evidence, and the broker's
acknowledgement of its outputs. The records of the next batch are already in the take's buffer
(``worker.stream.intake.take``), so when a batch starts, :class:`Lookahead` admits those records and
fetches their evidence in a task of its own, which runs while the current batch waits. When the
next batch comes, what was done ahead for its records is used and only the rest is done then.

Only reads run ahead. Admission is pure and the evidence stores are never written by the worker,
so a record admitted, or an id looked up, a batch early gives the same answer (the evidence as
of a moment earlier, like any fetch). Turn states, decisions and outputs stay strictly batch by
batch, in order. Work done ahead is keyed by the record's (topic, partition, offset), so a record
is never matched with another's; records that are not handed out (their partition was sought
back, or lost in a rebalance) are simply not used. A look-ahead whose fetch failed, or found a
tenant unavailable, is dropped: the batch fetches again under the usual retry rules, so an outage
is never a verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Generic, NamedTuple, TypeVar

import structlog

from worker.core import CitationRef, EvidenceRecord, Incoming
from worker.stream.processing.resolve import Resolved

log = structlog.get_logger("worker.pipeline")

#: A record's place in the log: what identifies it across batches.
RecordKey = tuple[str, int, int]
#: Records admitted per step before the task yields to the batch being decided.
CHUNK = 16

Item = TypeVar("Item")


def record_key(rec: Incoming) -> RecordKey:
    """The record's topic, partition and offset."""
    return (rec.topic, rec.partition, rec.offset)


class Ahead(NamedTuple, Generic[Item]):
    """What was done ahead for some records: their items and their evidence."""

    items: dict[RecordKey, Item]
    resolved: Resolved
    #: Store calls the look-ahead made (counted in the batch that uses it).
    fetches: int


def merged(
    first: Mapping[str, Mapping[CitationRef, EvidenceRecord]],
    second: Mapping[str, Mapping[CitationRef, EvidenceRecord]],
) -> dict[str, Mapping[CitationRef, EvidenceRecord]]:
    """Evidence by tenant from two fetches (a tenant in both: the union of its records)."""
    out: dict[str, Mapping[CitationRef, EvidenceRecord]] = dict(first)
    for tenant, records in second.items():
        out[tenant] = {**out[tenant], **records} if tenant in out else records
    return out


class Lookahead(Generic[Item]):
    """At most one look-ahead in flight: started for the buffered records, claimed by the next one.

    ``classify`` admits one record (pure); ``resolve`` fetches the evidence of some items and
    returns it with the number of store calls it made; ``paused`` is what each step of
    admission runs inside (the batch's collector pause: a look-ahead may admit while no batch
    is in flight, and admission would then run with automatic collection on).
    """

    def __init__(
        self,
        classify: Callable[[Incoming], Item],
        resolve: Callable[[Sequence[Item]], Awaitable[tuple[Resolved, int]]],
        paused: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        self._classify = classify
        self._resolve = resolve
        self._paused = paused
        self._task: asyncio.Task[Ahead[Item]] | None = None
        #: The records the look-ahead in flight is for.
        self._keys: frozenset[RecordKey] = frozenset()

    def start(self, records: Sequence[Incoming]) -> None:
        """Admit ``records`` and fetch their evidence in the background (drops one in flight)."""
        self.cancel()
        if records:
            self._keys = frozenset(map(record_key, records))
            self._task = asyncio.ensure_future(self._ahead(list(records)))

    async def _ahead(self, records: list[Incoming]) -> Ahead[Item]:
        items: dict[RecordKey, Item] = {}
        for start in range(0, len(records), CHUNK):
            await asyncio.sleep(0)  # the batch being decided goes first whenever it can
            with self._paused():
                for rec in records[start : start + CHUNK]:
                    items[record_key(rec)] = self._classify(rec)
        resolved, fetches = await self._resolve(list(items.values()))
        return Ahead(items, resolved, fetches)

    async def claim(self, batch: Sequence[Incoming]) -> Ahead[Item] | None:
        """The look-ahead for ``batch`` (waited for), or ``None``: none, or it failed (dropped).

        A look-ahead for none of the batch's records is left in flight, for the batch after.
        """
        task = self._task
        if task is None or not any(record_key(rec) in self._keys for rec in batch):
            return None
        self._task = None
        try:
            ahead = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the batch itself is being cancelled
            return None  # the look-ahead was dropped
        except Exception as exc:  # noqa: BLE001 - the batch does the work again, under its rules
            log.warning("lookahead.dropped", error=type(exc).__name__)
            return None
        if ahead.resolved.unavailable:
            return None  # fetched again by the batch, retried as usual
        return ahead

    def cancel(self) -> None:
        """Drop the look-ahead in flight, if any."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
        elif task is not None:
            with contextlib.suppress(BaseException):
                task.exception()  # retrieved: no "never retrieved" warning
