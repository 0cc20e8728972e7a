"""The evidence of one batch: one store call across its tenants, retried while stores are down.

When that call fails for good and the batch has several tenants, each tenant is asked again
alone: a fault that belongs to one tenant (a malformed row, a tenant the store cannot serve) must
not take the drafts of the other tenants down with it. A tenant whose evidence cannot be had is
reported with the dead-letter class and message the core names for its drafts
(``worker.core.batch``: ``store_gave_up`` past a finite retry budget, ``internal_error`` for a
non-retriable fault). An outage is never a verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping
from typing import NamedTuple

import structlog

from worker.core import (
    CitationRef,
    EvidenceRecord,
    EvidenceStore,
    Found,
    Unavailable,
    internal_error,
    store_gave_up,
)
from worker.faults import RetriableFault
from worker.runtime.metrics import Metrics
from worker.runtime.retry import (
    RetryBudgetExhaustedError,
    backoff_delays,
    half_jitter,
    with_retries,
)
from worker.settings import Settings

log = structlog.get_logger("worker.pipeline")

#: Why a tenant's drafts are dead-lettered: the class and the operator's message.
Failed = Unavailable


class Resolved(NamedTuple):
    """Evidence by tenant, and the tenants whose evidence could not be had."""

    evidence: dict[str, Mapping[CitationRef, EvidenceRecord]]
    unavailable: dict[str, Failed]


class BatchResolver:
    """Fetches a batch's evidence through the core's one IO seam, with the retry rules above."""

    def __init__(self, *, evidence: EvidenceStore, settings: Settings, metrics: Metrics) -> None:
        self._evidence = evidence
        self._budget = settings.retry_budget
        self._concurrency = settings.postgres_pool_size
        self._metrics = metrics
        self._delay = backoff_delays(
            settings.retry_initial_backoff_s, settings.retry_max_backoff_s, jitter=half_jitter
        )

    async def resolve(
        self, wanted: Mapping[str, Collection[CitationRef]], counted: Callable[[], None]
    ) -> Resolved:
        """Evidence for ``wanted`` (ids by tenant); ``counted`` is called once per store call."""
        if not wanted:
            return Resolved({}, {})
        try:
            return Resolved(dict(await self._fetch(wanted, counted, self._budget)), {})
        except RetryBudgetExhaustedError as exhausted:
            failure: Failed = store_gave_up(exhausted.attempts)
            # The budget is spent: each tenant alone gets one more attempt, no more waiting.
            budget: int | None = 0
        except Exception as exc:  # a poison fault of the batch's fetch: find whose it is
            log.error("store.fetch_failed", error=type(exc).__name__, tenants=len(wanted))  # noqa: TRY400
            log.debug("store.fetch_failed.trace", exc_info=True)
            failure = internal_error(type(exc).__name__)
            budget = self._budget
        if len(wanted) == 1:
            return Resolved({}, dict.fromkeys(wanted, failure))
        return await self._resolve_each(wanted, counted, budget, failure)

    async def _resolve_each(
        self,
        wanted: Mapping[str, Collection[CitationRef]],
        counted: Callable[[], None],
        budget: int | None,
        failure: Failed,
    ) -> Resolved:
        """One store call per tenant (at most the pool's size at once), after a batch call failed.

        ``failure`` is the batch call's: a tenant still unavailable alone is reported with it.
        """
        evidence: dict[str, Mapping[CitationRef, EvidenceRecord]] = {}
        unavailable: dict[str, Failed] = {}
        # Queued on the pool, many calls would all time out together and retry in lockstep.
        limit = asyncio.Semaphore(self._concurrency)

        async def fetch_one(tenant: str, refs: Collection[CitationRef]) -> None:
            try:
                async with limit:
                    found = await self._fetch({tenant: refs}, counted, budget)
                evidence[tenant] = found.get(tenant, {})
            except RetryBudgetExhaustedError as exhausted:
                unavailable[tenant] = store_gave_up(exhausted.attempts, batch=failure)
            except Exception as exc:  # a poison fault of this tenant's fetch: its drafts only
                log.error("store.fetch_failed", error=type(exc).__name__, tenant_id=tenant)  # noqa: TRY400
                log.debug("store.fetch_failed.trace", exc_info=True)
                unavailable[tenant] = internal_error(type(exc).__name__)

        await asyncio.gather(*(fetch_one(t, refs) for t, refs in wanted.items()))
        return Resolved(evidence, unavailable)

    async def _fetch(
        self,
        wanted: Mapping[str, Collection[CitationRef]],
        counted: Callable[[], None],
        budget: int | None,
    ) -> Found:
        """One store call for ``wanted``, retried per ``budget`` while the store is unavailable."""

        def on_retry(n: int, fault: RetriableFault, wait: float) -> None:
            self._metrics.store_retries.labels(store=getattr(fault, "store", "unknown")).inc()
            log.warning("store.retry", attempt=n, fault=type(fault).__name__, wait_s=round(wait, 3))

        async def op() -> Found:  # timed per store by the adapters (worker/stores/observed.py)
            counted()
            return await self._evidence.fetch_batch(wanted)

        return await with_retries(op, budget=budget, delay=self._delay, on_retry=on_retry)
