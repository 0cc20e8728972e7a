"""Batches of ``agent.drafts`` that keep filling while the previous batch is processed.

Faust's ``stream.take_events(n, within)`` stops collecting while the agent body runs and then
waits ``within`` from the end of the body, full or not: at saturation the window is dead time,
and on a thin stream every draft waits the whole window. This take differs in two ways:

- **Overlap.** The buffer keeps filling (up to ``max_size``: a bounded hand-off, so at most one
  batch in hand and one in the buffer) while the body processes the batch it was given. A feed
  that finds the buffer full waits for room (:meth:`OverlappedTake.room`): delivery stops, and
  so does Faust's fetching behind it.
- **Adaptive window.** A batch closes when it is full, when no record arrived for ``quiet``
  seconds (the stream is thin or drained: nobody waits for company that is not coming), or
  ``max_wait`` seconds after its *first* record arrived. A saturated stream keeps records coming
  without pause, so its batches fill up; a thin one closes a batch ``quiet`` after its last
  record. Records that arrived while the body ran are handed out as soon as the intake pauses.

The offset guarantee is Faust's own: each record is acknowledged (``acknowledge``, with the
handles of the batch) only after the body returns from the batch that holds it, so the committed
offset (Faust commits the highest *contiguous* acknowledged offset) never passes an undecided
draft. A record the body did not get to see is never acknowledged; :meth:`OverlappedTake.discard`
drops buffered records of a partition that is being read again (see
``worker.stream.intake.offsets``),
and :meth:`OverlappedTake.leave` keeps the batch in hand's records of partitions lost in a
rebalance from being acknowledged (their new owner decides them).

The feeds (``worker.stream.intake.delivery``) convert each record once, on arrival: the batches and
the full buffer handed out are the converted records; each record's *handle* (a Faust event, or a
Faust message) is kept only to be acknowledged.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

Record = TypeVar("Record")


class Lifetime(Protocol):
    """What the take waits under: a mode service (the Faust stream, or the app) that may stop."""

    @property
    def should_stop(self) -> bool:
        """The service is stopping: stop waiting, hand nothing more out."""
        ...

    async def wait(self, *coros: Any, timeout: Any = None) -> Any:  # noqa: ASYNC109 - mode's
        """Wait for ``coros`` (an ``asyncio.Event``) or the service to stop."""
        ...

    async def wait_for_stopped(self, *coros: Any, timeout: Any = None) -> bool:  # noqa: ASYNC109
        """Wait for ``coros``, the timeout or the service to stop; true if it stopped."""
        ...


#: Acknowledges the handles of a batch the body returned from (minus the records left).
Acknowledge = Callable[[list[Any]], Awaitable[None]]


def close_at(first_at: float, last_at: float, quiet: float, max_wait: float) -> float:
    """When a batch whose first and last records arrived at these times closes, if not full."""
    return min(first_at + max_wait, last_at + quiet)


class OverlappedTake(Generic[Record]):
    """Batches of records put in by a feed (``worker.stream.intake.delivery``); see the module
    docstring."""

    def __init__(
        self,
        lifetime: Lifetime,
        max_size: int,
        quiet: float,
        max_wait: float,
        acknowledge: Acknowledge,
    ) -> None:
        self._lifetime = lifetime
        self._acknowledge = acknowledge
        #: Called with the buffered records once the buffer is full: the next batch is complete
        #: while the one in hand is still processed (``worker.stream.intake.lookahead`` reads it).
        self.on_full: Callable[[list[Record]], None] | None = None
        self._max = max_size
        self._quiet = min(quiet, max_wait)
        self._max_wait = max_wait
        #: Buffered handles (acknowledged after their batch), their partitions and records, in
        #: arrival order.
        self._handles: list[Any] = []
        self._partitions: list[int] = []
        self._records: list[Record] = []
        self._first_at = 0.0
        self._last_at = 0.0
        self._arrived = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        #: Partitions whose records of the batch in hand must not be acknowledged (see ``leave``).
        self._left: set[int] = set()
        self.last_size = 0
        #: How long the last batch waited after its first record (seconds).
        self.last_wait = 0.0

    def full(self) -> bool:
        """The buffer holds a whole batch: a feed must wait for :meth:`room` before adding."""
        return len(self._handles) >= self._max

    async def room(self) -> bool:
        """Wait until the buffer has room; false if the lifetime stopped first (add nothing)."""
        while len(self._handles) >= self._max:
            self._room.clear()
            await self._lifetime.wait(self._room)
            if self._lifetime.should_stop:
                return False
        return True

    def add(self, handle: Any, partition: int, record: Record) -> None:
        """Buffer one record (the feed saw room: :meth:`full` false, or :meth:`room` true)."""
        now = asyncio.get_running_loop().time()
        if not self._handles:
            self._first_at = now
        self._last_at = now
        self._handles.append(handle)
        self._partitions.append(partition)
        self._records.append(record)
        self._arrived.set()
        if len(self._handles) >= self._max and self.on_full is not None:
            self.on_full(self._records[:])

    def discard(self, partition: int) -> int:
        """Drop the buffered (not yet handed out, never acknowledged) records of ``partition``."""
        keep = [i for i, p in enumerate(self._partitions) if p != partition]
        dropped = len(self._handles) - len(keep)
        if dropped:
            self._handles[:] = [self._handles[i] for i in keep]
            self._partitions[:] = [self._partitions[i] for i in keep]
            self._records[:] = [self._records[i] for i in keep]
        if len(keep) < self._max:
            self._room.set()
        return dropped

    def leave(self, partitions: set[int]) -> None:
        """Do not acknowledge the batch in hand's records of ``partitions`` (no longer ours)."""
        self._left |= partitions

    async def batches(self) -> AsyncIterator[list[Record]]:
        """Yield batches; each batch's records are acknowledged when the body returns."""
        lifetime = self._lifetime
        loop = asyncio.get_running_loop()
        while not lifetime.should_stop:
            if not self._handles:
                self._arrived.clear()
                await lifetime.wait_for_stopped(self._arrived, timeout=1.0)
                continue
            while self._handles and len(self._handles) < self._max and not lifetime.should_stop:
                deadline = close_at(self._first_at, self._last_at, self._quiet, self._max_wait)
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                self._arrived.clear()
                await lifetime.wait_for_stopped(self._arrived, timeout=remaining)
            if not self._handles:  # discarded meanwhile
                continue
            n = min(len(self._handles), self._max)
            handles = self._handles[:n]
            partitions = self._partitions[:n]
            records = self._records[:n]
            del self._handles[:n]
            del self._partitions[:n]
            del self._records[:n]
            self._room.set()
            self.last_size = n
            self.last_wait = loop.time() - self._first_at
            yield records
            # Only after the body returned: a batch abandoned by an exception or a shutdown is
            # never acknowledged, so it is read again (take_events acknowledges it regardless).
            left, self._left = self._left, set()
            if left:
                handles = [h for h, p in zip(handles, partitions, strict=True) if p not in left]
            await self._acknowledge(handles)
