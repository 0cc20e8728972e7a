"""One evidence store as the worker watches it: latency by store, and whether it answers.

Each adapter of the composite is wrapped on its own, so the metrics carry a ``store`` label
(``postgres``, ``mongo``) and the readiness probe knows which store has been failing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Collection
from typing import TypeVar

from worker.core import CitationRef, EvidenceKind, EvidenceStore, Found, Wanted
from worker.faults import StoreUnavailable
from worker.runtime.metrics import Metrics
from worker.runtime.readiness import StoreHealth

_T = TypeVar("_T")


class ObservedStore:
    """Implements ``EvidenceStore`` over ``inner``, recording latency and reachability."""

    def __init__(
        self,
        name: str,
        inner: EvidenceStore,
        kinds: Collection[EvidenceKind],
        *,
        metrics: Metrics,
        health: StoreHealth,
    ) -> None:
        self.name = name
        self._inner = inner
        self._kinds = frozenset(kinds)
        self._latency = metrics.store_latency.labels(store=name)
        self._health = health

    async def fetch_batch(self, wanted: Wanted) -> Found:
        """The inner store's answer for a batch across tenants, observed as one call; a call with
        none of its kinds is not timed (no query)."""
        if not any(self._queries(refs) for refs in wanted.values()):
            return await self._inner.fetch_batch(wanted)
        return await self._observe(self._inner.fetch_batch(wanted))

    def _queries(self, refs: Collection[CitationRef]) -> bool:
        return any(ref.kind in self._kinds for ref in refs)

    async def _observe(self, call: Awaitable[_T]) -> _T:
        started = time.perf_counter()
        try:
            found = await call
        except StoreUnavailable as fault:
            self._health.failed(self.name)
            fault.store = self.name
            raise
        finally:
            self._latency.observe(time.perf_counter() - started)
        self._health.succeeded(self.name)
        return found
