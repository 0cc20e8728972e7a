"""The cyclic garbage collector kept off a batch's hot path (``GW_GC_PAUSED_IN_BATCH``).

CPython's collector runs every 700 net container allocations and walks every young object; a
batch holds ~2,500 objects per draft in flight (parsed outputs, occurrences, units, messages),
so with the default thresholds it walked each batch many times over and promoted it to the
oldest generation, whose full collections then took 100-200 ms each: measured in the worker, a
third of its CPU and its worst stalls (docs/benchmarks.md). A batch's objects die by reference
counting when the batch ends; cycles are rare. So:

- once the worker is up (modules imported, stores connected), :meth:`BatchCollector.settle`
  collects once and freezes what is alive (``gc.freeze``): start-up objects are never walked
  again;
- :meth:`BatchCollector.paused` turns automatic collection off while one batch is processed
  and back on after it (also when it raises). Any cyclic garbage of the batch is collected by
  the next automatic collection, outside the batch.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


class BatchCollector:
    """Freeze once after start-up; no automatic collection inside a batch (when enabled)."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._settled = False

    def settle(self) -> None:
        """Collect, then freeze every object alive now (once; the start-up heap)."""
        if self.enabled and not self._settled:
            gc.collect()
            gc.freeze()
        self._settled = True

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No automatic collection inside; restored as it was on the way out."""
        if not self.enabled or not gc.isenabled():
            yield
            return
        gc.disable()
        try:
            yield
        finally:
            gc.enable()
