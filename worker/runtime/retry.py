"""Capped exponential backoff for infrastructure faults (contract §7)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from worker.faults import GaveUpFault, RetriableFault

T = TypeVar("T")


class RetryBudgetExhaustedError(GaveUpFault):
    """A retriable fault outlived the configured budget; the caller dead-letters the draft."""

    def __init__(self, attempts: int, last: RetriableFault) -> None:
        super().__init__(f"gave up after {attempts} attempts: {last}")
        self.attempts = attempts
        self.last = last


def backoff_delays(
    initial_s: float, max_s: float, *, jitter: Callable[[], float] | None = None
) -> Callable[[int], float]:
    """Delay before retry ``n`` (1-based): ``initial * 2**(n-1)``, capped at ``max_s``.

    ``jitter`` returns a factor to scale each delay by; :func:`half_jitter` spreads retries so
    that many fetches failing together (one per tenant of a batch) do not retry in lockstep.
    """

    def delay(n: int) -> float:
        base = float(min(max_s, initial_s * (2 ** min(n - 1, 30))))
        return base * jitter() if jitter is not None else base

    return delay


def half_jitter() -> float:
    """A factor in [0.5, 1): at least half the backoff, never more than all of it."""
    return 0.5 + random.random() / 2  # noqa: S311 - spreading retries, not security


async def with_retries(
    op: Callable[[], Awaitable[T]],
    *,
    budget: int | None,
    delay: Callable[[int], float],
    on_retry: Callable[[int, RetriableFault, float], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Run ``op`` until it succeeds, retrying only :class:`RetriableFault`.

    ``budget`` counts retries after the first attempt; ``None`` retries forever (the contract's
    default). Any other exception propagates at once: it is a poison fault or a bug.
    """
    retries = 0
    while True:
        try:
            return await op()
        except RetriableFault as fault:
            if budget is not None and retries >= budget:
                raise RetryBudgetExhaustedError(retries + 1, fault) from fault
            retries += 1
            wait = delay(retries)
            if on_retry is not None:
                on_retry(retries, fault, wait)
            await sleep(wait)
