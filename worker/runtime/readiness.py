"""Readiness: may this process be sent work now? (``/ready``; ``/health`` is liveness only.)

A worker is ready when its turn table is recovered, it owns at least one partition of the drafts
topic, the broker answered within ``GW_READY_KAFKA_UNREACHABLE_S``
(``worker/runtime/broker_watch.py``) and no evidence store has been unreachable for longer than
the threshold. The decision is a pure function of those observations; :class:`StoreHealth` keeps
the one observation that needs bookkeeping (since when each store has been failing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import NamedTuple


class StoreHealth:
    """Since when each store has failed without a success in between (monotonic seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._down_since: dict[str, float] = {}

    def succeeded(self, store: str) -> None:
        """A call to ``store`` succeeded: it is reachable again."""
        self._down_since.pop(store, None)

    def failed(self, store: str) -> None:
        """A call to ``store`` failed for want of the store (the first failure starts the clock)."""
        self._down_since.setdefault(store, self._clock())

    def down_for(self) -> dict[str, float]:
        """Seconds each failing store has been failing, by store."""
        now = self._clock()
        return {store: now - since for store, since in self._down_since.items()}


class Readiness(NamedTuple):
    """The answer of ``/ready``: ``ready``, or the reasons why not."""

    ready: bool
    reasons: tuple[str, ...]


def readiness(
    *,
    recovering: bool,
    assigned: Collection[int],
    stores_down_for: Mapping[str, float],
    store_unreachable_after_s: float,
    kafka_down_for: float | None = None,
    kafka_unreachable_after_s: float = float("inf"),
) -> Readiness:
    """Whether the worker is ready, and every reason it is not."""
    reasons: list[str] = []
    if kafka_down_for is not None and kafka_down_for >= kafka_unreachable_after_s:
        reasons.append(f"kafka unreachable for {kafka_down_for:.0f} s")
    if recovering:
        reasons.append("turn table recovering")
    if not assigned:
        reasons.append("no partition assigned")
    reasons.extend(
        f"store {store} unreachable for {seconds:.0f} s"
        for store, seconds in sorted(stores_down_for.items())
        if seconds >= store_unreachable_after_s
    )
    return Readiness(ready=not reasons, reasons=tuple(reasons))
