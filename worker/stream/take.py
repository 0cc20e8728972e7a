"""Batches of ``agent.drafts`` that keep filling while the previous batch is processed.

Faust's ``stream.take_events(n, within)`` stops collecting while the agent body runs and then
waits ``within`` from the end of the body, full or not: at saturation the window is dead time,
and on a thin stream every draft waits the whole window. This take (issue 10) differs in two ways:

- **Overlap.** The buffer keeps filling (up to ``max_size``: a bounded hand-off, so at most one
  batch in hand and one in the buffer) while the body processes the batch it was given.
- **Adaptive window.** A batch closes when it is full, or ``window`` seconds after its *first*
  record arrived, where the window follows the load: ``min_wait + (max_wait - min_wait) * f``,
  ``f`` the fill of the previous batch (0 for one record, 1 for a full batch). A thin stream waits
  about ``min_wait``; a saturated one gathers full batches. Records that arrived while the body ran
  have already waited, so their batch usually closes at once.

The offset guarantee is Faust's own: acknowledgements are off for the stream and each record is
acknowledged only after the body returns from the batch that holds it, so the committed offset
(Faust commits the highest *contiguous* acknowledged offset) never passes an undecided draft. A
record the body did not get to see is never acknowledged; :meth:`OverlappedTake.discard` drops
buffered records of a partition that is being read again (see ``worker.stream.offsets``).

Uses Faust's stream internals (``add_processor``, ``_enable_passive``, ``current_event``) exactly
as ``take_events`` does in faust-streaming 0.15; the pin (<0.16) keeps them stable.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any


def adaptive_window(min_wait: float, max_wait: float, last_size: int, max_size: int) -> float:
    """How long a batch may wait for records after its first one, given the last batch's size."""
    fill = min(1.0, max(0.0, (last_size - 1) / max(1, max_size - 1)))
    return min_wait + (max_wait - min_wait) * fill


class OverlappedTake:
    """Batches of events from a Faust stream; see the module docstring."""

    def __init__(self, stream: Any, max_size: int, min_wait: float, max_wait: float) -> None:
        self._stream = stream
        self._max = max_size
        self._min_wait = min(min_wait, max_wait)
        self._max_wait = max_wait
        self._events: list[Any] = []
        self._first_at = 0.0
        self._arrived = asyncio.Event()
        self._full = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self.last_size = 0
        self.last_window = self._min_wait

    def discard(self, partition: int) -> int:
        """Drop the buffered (not yet handed out, never acknowledged) records of ``partition``."""
        keep = [e for e in self._events if e.message.partition != partition]
        dropped = len(self._events) - len(keep)
        self._events[:] = keep
        if len(keep) < self._max:
            self._full.clear()
            self._room.set()
        return dropped

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
        if not self._events:
            self._first_at = asyncio.get_running_loop().time()
        self._events.append(event)
        self._arrived.set()
        if len(self._events) >= self._max:
            self._full.set()
        return value

    async def batches(self) -> AsyncIterator[list[Any]]:
        """Yield batches; each batch's records are acknowledged when the body returns."""
        stream = self._stream
        loop = asyncio.get_running_loop()
        stream.enable_acks = False  # acknowledged here, after the body, like take_events
        stream.add_processor(self._add)
        stream._enable_passive(aiter(stream.channel))
        while not stream.should_stop:
            if not self._events:
                self._arrived.clear()
                await stream.wait_for_stopped(self._arrived, timeout=1.0)
                continue
            window = adaptive_window(self._min_wait, self._max_wait, self.last_size, self._max)
            remaining = self._first_at + window - loop.time()
            if remaining > 0 and len(self._events) < self._max:
                await stream.wait_for_stopped(self._full, timeout=remaining)
            if not self._events:  # discarded meanwhile
                continue
            batch = self._events[: self._max]
            del self._events[: len(batch)]
            if self._events:
                self._first_at = loop.time()
            self._full.clear()
            self._room.set()
            self.last_size = len(batch)
            self.last_window = window
            yield batch
            # Only after the body returned: a batch abandoned by an exception or a shutdown is
            # never acknowledged, so it is read again (take_events acknowledges it regardless).
            for event in batch:
                await stream.ack(event)
