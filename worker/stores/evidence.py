"""The evidence port over both stores: OBS and EVT from Postgres, DOC from MongoDB, at once.

A ``fetch_batch`` is one batch of drafts across tenants; Postgres' per-table queries and MongoDB's
``find`` run concurrently, so a batch costs the slowest single query, not their sum.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from worker.core import EvidenceKind, EvidenceStore, Found, Wanted
from worker.faults import StoreUnavailable
from worker.runtime.metrics import Metrics
from worker.runtime.readiness import StoreHealth
from worker.settings import Settings
from worker.stores.concurrency import gather_all
from worker.stores.mongo import MongoEvidence
from worker.stores.observed import ObservedStore
from worker.stores.postgres import PostgresEvidence


class CompositeEvidence:
    """Routes each kind to its store; implements ``worker.core.evidence_store.EvidenceStore``."""

    def __init__(self, postgres: EvidenceStore, mongo: EvidenceStore) -> None:
        self._postgres = postgres
        self._mongo = mongo

    async def fetch_batch(self, wanted: Wanted) -> Found:
        """Records of each tenant among its refs: one query per table and collection in all;
        each adapter skips kinds it does not hold.

        Either store failing fails the whole call (never a partial, "mostly absent" answer that
        would turn an outage into dangling verdicts).
        """
        asked = {tenant: frozenset(refs) for tenant, refs in wanted.items()}
        from_postgres, from_mongo = await gather_all(
            self._postgres.fetch_batch(asked), self._mongo.fetch_batch(asked)
        )
        return {t: {**from_postgres.get(t, {}), **from_mongo.get(t, {})} for t in asked}


@asynccontextmanager
async def open_evidence(
    settings: Settings, *, metrics: Metrics | None = None, health: StoreHealth | None = None
) -> AsyncIterator[CompositeEvidence]:
    """Both adapters, opened together and closed in reverse order.

    With ``metrics`` and ``health``, each adapter is observed on its own (latency by ``store``
    label; reachability for the readiness probe), and a failure to open counts as unreachable.
    """
    async with AsyncExitStack() as stack:
        if metrics is None or health is None:
            postgres: EvidenceStore = await stack.enter_async_context(
                PostgresEvidence.connect(settings)
            )
            mongo: EvidenceStore = await stack.enter_async_context(MongoEvidence.connect(settings))
            yield CompositeEvidence(postgres, mongo)
            return
        try:
            pg = await stack.enter_async_context(PostgresEvidence.connect(settings))
        except StoreUnavailable:
            health.failed("postgres")
            raise
        try:
            mg = await stack.enter_async_context(MongoEvidence.connect(settings))
        except StoreUnavailable:
            health.failed("mongo")
            raise
        yield CompositeEvidence(
            ObservedStore(
                "postgres", pg, (EvidenceKind.OBS, EvidenceKind.EVT), metrics=metrics, health=health
            ),
            ObservedStore("mongo", mg, (EvidenceKind.DOC,), metrics=metrics, health=health),
        )
