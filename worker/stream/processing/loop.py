"""The agent body and the deadline tick, without Faust: what happens to each batch, in order.

``worker.stream.app`` wires these to Faust (the agent, the timer, the rebalance signal, the
pages); everything they decide is here, over small seams that unit tests fill with in-memory fakes:

- :class:`LoopState` is the one state shared by the agent, the timer, the watchdogs and the
  pages (typed: no dict of loose keys).
- :class:`DraftLoop` handles one batch: opens the adapters on the first one, drops the records of
  partitions lost in a rebalance, lets the offset guard (``worker.stream.intake.offsets``) hold back
  everything past a gap, and hands the rest to the pipeline. The body never raises: a batch
  that fails as a whole is dead-lettered through the pipeline's own dead-letter path (retried
  until the broker takes it), never acknowledged silently.
- :func:`send_due_controls` appends the control records due now for the partitions owned.

Owned partitions come from one place, :meth:`Partitions.owned` (the app's assignment).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import structlog

from worker.core import Incoming, OutRecord
from worker.runtime.metrics import Metrics
from worker.stream.intake.offsets import OffsetGuard
from worker.stream.processing.collector import BatchCollector
from worker.stream.seams import Publisher

log = structlog.get_logger("worker.app")

#: How often the deadline tick also looks for finished turns past their retention.
EXPIRY_CHECK_EVERY_S = 30.0

#: Pause between attempts to dead-letter a failed batch while the broker refuses it.
DEAD_LETTER_RETRY_S = 1.0


class Partitions(Protocol):
    """The consumer's view of ``agent.drafts``: what this process owns, and seeking back."""

    def owned(self) -> frozenset[int]:
        """The partitions of ``agent.drafts`` assigned to this process now."""
        ...

    def generation(self) -> int:
        """The consumer group generation; it changes with every rebalance."""
        ...

    async def seek(self, partition: int, offset: int) -> None:
        """Read ``partition`` again from ``offset``."""
        ...


class Intake(Protocol):
    """The batch source (``worker.stream.intake.take.OverlappedTake``)."""

    def leave(self, partitions: set[int]) -> None:
        """Do not acknowledge the batch in hand's records of ``partitions``."""
        ...

    def discard(self, partition: int) -> int:
        """Drop the buffered records of ``partition`` (they are read again)."""
        ...


class StartOffsets(Protocol):
    """Where the group resumes partitions (``worker.stream.watchdogs.stall.OffsetProbe``)."""

    async def starts(self, partitions: Collection[int]) -> Mapping[int, int]:
        """The committed offset of each partition, else its log start."""
        ...


class Processor(Protocol):
    """The batch pipeline (``worker.stream.processing.pipeline.BatchProcessor``)."""

    async def process(self, batch: Sequence[Incoming]) -> object:
        """Decide and publish every record; return once the broker acknowledged the outputs."""
        ...

    def look_ahead(self, records: Sequence[Incoming]) -> None:
        """Start the reads of ``records`` (the next batch) while the batch in hand is decided."""
        ...

    async def dead_letter_batch(self, batch: Sequence[Incoming], error: str) -> object:
        """Dead-letter every record of ``batch`` as ``internal_error``."""
        ...


class DueControls(Protocol):
    """The deadline scanner (``worker.stream.turns.deadlines.DeadlineScanner``)."""

    def due(
        self, now: datetime, owned: set[int], *, rebuild: bool = False, expire: bool = False
    ) -> Iterable[OutRecord]:
        """Control records to append now for turns of ``owned`` partitions."""
        ...


#: Opens the adapters on the first batch: the pipeline, and the offset probe if the broker answers.
#: It is handed the loop's collector, which the pipeline's look-ahead pauses too (one owner).
OpenAdapters = Callable[[BatchCollector], Awaitable[tuple[Processor, StartOffsets | None]]]


@dataclass
class LoopState:
    """What the agent, the deadline tick, the watchdogs and the pages share."""

    #: ``time.monotonic()`` at start (``/health`` uptime).
    started: float
    #: Batches taken so far (``/health``).
    batches: int = 0
    #: A batch is being processed (the stall watchdog leaves a busy worker alone).
    busy: bool = False
    #: ``time.monotonic()`` when the batch in hand was taken (the slow-batch watchdog).
    busy_since: float = 0.0
    #: The consumer generation of the last batch; ``None`` before the first.
    generation: int | None = None
    #: Tables recovered since the last tick: the deadline scanner re-reads them.
    recovered: bool = False
    #: The partitions the last tick scanned for (a change re-reads the tables).
    owned: frozenset[int] | None = None
    #: ``time.monotonic()`` of the last look for expired turns.
    last_expiry: float = 0.0


class DraftLoop:
    """The agent body: one call of :meth:`handle` per batch, never raising for a batch's sake."""

    def __init__(
        self,
        state: LoopState,
        partitions: Partitions,
        open_adapters: OpenAdapters,
        metrics: Metrics,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        dead_letter_retry_s: float = DEAD_LETTER_RETRY_S,
        collector: BatchCollector | None = None,
        look_ahead: bool = False,
    ) -> None:
        self._state = state
        self._partitions = partitions
        self._open = open_adapters
        self._metrics = metrics
        self._monotonic = monotonic
        self._retry_s = dead_letter_retry_s
        self._guard = OffsetGuard()
        self._processor: Processor | None = None
        self._probe: StartOffsets | None = None
        self._collector = collector or BatchCollector(enabled=False)
        #: Read the next batch ahead once it is complete (:meth:`next_batch_complete`).
        self._look_ahead = look_ahead

    async def handle(self, batch: list[Incoming], intake: Intake) -> None:
        """Decide what of ``batch`` may be decided now; dead-letter it if it fails as a whole."""
        state = self._state
        started = self._monotonic()
        state.busy, state.busy_since = True, started
        if self._processor is None:
            self._processor, self._probe = await self._open(self._collector)
            self._collector.settle()
        try:
            admitted = await self._in_order(batch, intake)
        except Exception as exc:  # noqa: BLE001 - never lose the batch in hand over it
            log.warning("offsets.guard_failed", error=type(exc).__name__)
            admitted = batch
        try:
            with self._collector.paused():
                await self._processor.process(admitted)
        except Exception as exc:  # noqa: BLE001 - the batch failed as a whole: never ack it silently
            log.error("batch.failed", error=type(exc).__name__, records=len(admitted))  # noqa: TRY400
            await self._dead_letter(self._processor, admitted, type(exc).__name__)
        state.busy = False
        self._metrics.batch_seconds.observe(self._monotonic() - started)
        state.batches += 1

    def next_batch_complete(self, records: Sequence[Incoming]) -> None:
        """The take's buffer is full: have ``records`` read ahead (never raises into the take)."""
        if not self._look_ahead or self._processor is None:
            return
        try:
            self._processor.look_ahead(records)
        except Exception as exc:  # noqa: BLE001 - a look-ahead is an optimisation, never a fault
            log.warning("lookahead.not_started", error=type(exc).__name__)

    async def _in_order(self, batch: list[Incoming], intake: Intake) -> list[Incoming]:
        """The records of a batch that may be decided now, in partition order (see ``offsets``)."""
        state, guard = self._state, self._guard
        generation = self._partitions.generation()
        if state.generation != generation:
            # A rebalance: Faust resumed every partition from its committed offset. Records
            # buffered before it, of partitions this process no longer owns, are left to their
            # new owner: neither decided nor acknowledged here. (Not on the first batch: nothing
            # was buffered under an earlier assignment.)
            guard.reset()
            rebalanced = state.generation is not None
            state.generation = generation
            if rebalanced:
                lost = {rec.partition for rec in batch} - self._partitions.owned()
                if lost:
                    log.info("batch.revoked_records_left", partitions=sorted(lost))
                    intake.leave(lost)
                    batch = [rec for rec in batch if rec.partition not in lost]
        unknown = guard.unknown(batch)
        if unknown and self._probe is not None:
            try:
                guard.start(await self._probe.starts(unknown))
            except Exception as exc:  # noqa: BLE001 - without it, the stall watchdog still re-reads
                log.warning("offsets.probe_failed", error=type(exc).__name__)
        admitted, seeks = guard.admit(batch)
        for partition, offset in seeks.items():
            log.warning("partition.gap", partition=partition, expected=offset)
            await self._partitions.seek(partition, offset)
            # Records of it already buffered were fetched before the seek: they come again.
            intake.discard(partition)
        return admitted

    async def _dead_letter(self, processor: Processor, batch: list[Incoming], error: str) -> None:
        """The pipeline's dead-letter path, until the broker takes the whole batch."""
        while True:
            try:
                await processor.dead_letter_batch(batch, error)
            except Exception as exc:  # noqa: BLE001 - hold the batch until it is dead-lettered
                log.warning("dlq.retry", error=type(exc).__name__)
                await asyncio.sleep(self._retry_s)
            else:
                return


async def send_due_controls(
    state: LoopState,
    *,
    owned: frozenset[int],
    scanner: DueControls,
    publisher: Publisher,
    now: datetime,
    monotonic: Callable[[], float] = time.monotonic,
) -> None:
    """Append the control records due now for the ``owned`` partitions (none owned: nothing).

    The tables are re-read (``rebuild``) after a recovery or when the owned partitions changed;
    finished turns are looked at every :data:`EXPIRY_CHECK_EVERY_S`. A record that fails to send
    is sent again by a later tick.
    """
    if not owned:
        return
    rebuild = state.recovered or owned != state.owned
    state.recovered = False
    state.owned = owned
    expire = monotonic() - state.last_expiry >= EXPIRY_CHECK_EVERY_S
    if expire:
        state.last_expiry = monotonic()
    for rec in scanner.due(now, set(owned), rebuild=rebuild, expire=expire):
        try:
            ack = await publisher.send(rec)
            await ack
        except Exception as exc:  # noqa: BLE001 - the next tick sends it again
            log.warning("deadline.send_failed", error=type(exc).__name__)
