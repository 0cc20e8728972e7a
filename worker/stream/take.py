"""Batches of ``agent.drafts`` that keep filling while the previous batch is processed.

Faust's ``stream.take_events(n, within)`` stops collecting while the agent body runs and then
waits ``within`` from the end of the body, full or not: at saturation the window is dead time,
and on a thin stream every draft waits the whole window. This take differs in two ways:

- **Overlap.** The buffer keeps filling (up to ``max_size``: a bounded hand-off, so at most one
  batch in hand and one in the buffer) while the body processes the batch it was given.
- **Adaptive window.** A batch closes when it is full, when no record arrived for ``quiet``
  seconds (the stream is thin or drained: nobody waits for company that is not coming), or
  ``max_wait`` seconds after its *first* record arrived. A saturated stream keeps records coming
  without pause, so its batches fill up; a thin one closes a batch ``quiet`` after its last
  record. Records that arrived while the body ran are handed out as soon as the intake pauses.

The offset guarantee is Faust's own: acknowledgements are off for the stream and each record is
acknowledged only after the body returns from the batch that holds it, so the committed offset
(Faust commits the highest *contiguous* acknowledged offset) never passes an undecided draft. A
record the body did not get to see is never acknowledged; :meth:`OverlappedTake.discard` drops
buffered records of a partition that is being read again (see ``worker.stream.offsets``), and
:meth:`OverlappedTake.leave` keeps the batch in hand's records of partitions lost in a rebalance
from being acknowledged (their new owner decides them).

Each event is converted once, on arrival (``convert``): the batches and the full buffer handed
out are the converted records; the events are kept only to be acknowledged.

Uses Faust's stream internals (``add_processor``, a passive stream, ``current_event``) exactly
as ``take_events`` does in faust-streaming 0.15; the private one is in
``worker.stream.faust_internals``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, Generic, TypeVar

from worker.stream.faust_internals import enable_passive

Record = TypeVar("Record")


def close_at(first_at: float, last_at: float, quiet: float, max_wait: float) -> float:
    """When a batch whose first and last records arrived at these times closes, if not full."""
    return min(first_at + max_wait, last_at + quiet)


class OverlappedTake(Generic[Record]):
    """Batches of events from a Faust stream; see the module docstring."""

    def __init__(
        self,
        stream: Any,
        max_size: int,
        quiet: float,
        max_wait: float,
        convert: Callable[[Any], Record],
    ) -> None:
        self._stream = stream
        self._convert = convert
        #: Called with the buffered records once the buffer is full: the next batch is complete
        #: while the one in hand is still processed (``worker.stream.lookahead`` reads it).
        self.on_full: Callable[[list[Record]], None] | None = None
        self._max = max_size
        self._quiet = min(quiet, max_wait)
        self._max_wait = max_wait
        #: Buffered events (acknowledged after their batch) and their records, in arrival order.
        self._events: list[Any] = []
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

    def discard(self, partition: int) -> int:
        """Drop the buffered (not yet handed out, never acknowledged) records of ``partition``."""
        keep = [i for i, e in enumerate(self._events) if e.message.partition != partition]
        dropped = len(self._events) - len(keep)
        if dropped:
            self._events[:] = [self._events[i] for i in keep]
            self._records[:] = [self._records[i] for i in keep]
        if len(keep) < self._max:
            self._room.set()
        return dropped

    def leave(self, partitions: set[int]) -> None:
        """Do not acknowledge the batch in hand's records of ``partitions`` (no longer ours)."""
        self._left |= partitions

    async def _add(self, value: Any) -> Any:
        """Stream processor: buffer the current event; wait for room when the buffer is full."""
        stream = self._stream
        while len(self._events) >= self._max:
            self._room.clear()
            await stream.wait(self._room)
            if stream.should_stop:
                return value
        event = stream.current_event
        if event is None:
            raise RuntimeError("take buffer found current_event is None")
        now = asyncio.get_running_loop().time()
        if not self._events:
            self._first_at = now
        self._last_at = now
        self._events.append(event)
        self._records.append(self._convert(event))
        self._arrived.set()
        if len(self._events) >= self._max and self.on_full is not None:
            self.on_full(self._records[:])
        return value

    async def batches(self) -> AsyncIterator[list[Record]]:
        """Yield batches; each batch's records are acknowledged when the body returns."""
        stream = self._stream
        loop = asyncio.get_running_loop()
        stream.enable_acks = False  # acknowledged here, after the body, like take_events
        stream.add_processor(self._add)
        enable_passive(stream)
        while not stream.should_stop:
            if not self._events:
                self._arrived.clear()
                await stream.wait_for_stopped(self._arrived, timeout=1.0)
                continue
            while self._events and len(self._events) < self._max and not stream.should_stop:
                deadline = close_at(self._first_at, self._last_at, self._quiet, self._max_wait)
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                self._arrived.clear()
                await stream.wait_for_stopped(self._arrived, timeout=remaining)
            if not self._events:  # discarded meanwhile
                continue
            batch = self._events[: self._max]
            records = self._records[: len(batch)]
            del self._events[: len(batch)]
            del self._records[: len(batch)]
            self._room.set()
            self.last_size = len(batch)
            self.last_wait = loop.time() - self._first_at
            yield records
            # Only after the body returned: a batch abandoned by an exception or a shutdown is
            # never acknowledged, so it is read again (take_events acknowledges it regardless).
            left, self._left = self._left, set()
            for event in batch:
                if event.message.partition not in left:
                    await stream.ack(event)
