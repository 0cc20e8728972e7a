"""The one IO seam of the core: which cited ids exist for each tenant, and what they say."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Protocol

from worker.core.citations.evidence import CitationRef, EvidenceRecord

#: What a batch asks: per tenant, the refs its drafts cite.
Wanted = Mapping[str, Collection[CitationRef]]
#: What a batch gets back: per tenant asked (always present, maybe empty), its records.
Found = dict[str, Mapping[CitationRef, EvidenceRecord]]


class EvidenceStore(Protocol):
    """Batched, tenant-bound evidence look-up.

    ``fetch_batch`` is one batch of drafts across tenants: an adapter issues at most one query per
    table (Postgres) or collection (MongoDB) for the whole batch, every id matched on the pair
    (``tenant_id``, ``id``) (contract §8), so no row of one tenant can ever answer for another.
    One tenant is a batch of one tenant (``check``). Absent ids, ids of other tenants and ids above
    ``MAX_SOURCE_ID`` are simply missing from the result. An unreachable store raises a retriable
    fault, never returns an empty mapping.
    """

    async def fetch_batch(self, wanted: Wanted) -> Found:
        """Return, for every tenant of ``wanted``, its records among its refs."""
        ...


class InMemoryEvidenceStore:
    """A dict-backed store for unit tests and the offline ``check`` command."""

    def __init__(
        self,
        records: Mapping[str, Collection[EvidenceRecord]] | None = None,
        *,
        on_fetch: Callable[[str, frozenset[CitationRef]], None] | None = None,
    ) -> None:
        self._by_tenant: dict[str, dict[CitationRef, EvidenceRecord]] = {
            tenant: {r.ref: r for r in recs} for tenant, recs in (records or {}).items()
        }
        self._on_fetch = on_fetch
        #: Every (tenant, refs) asked, in order: lets tests count per-tenant look-ups.
        self.calls: list[tuple[str, frozenset[CitationRef]]] = []
        #: Every batch asked (tenants in order): lets tests count store round trips.
        self.batches: list[tuple[str, ...]] = []

    def add(self, tenant_id: str, record: EvidenceRecord) -> None:
        """Store ``record`` for ``tenant_id``."""
        self._by_tenant.setdefault(tenant_id, {})[record.ref] = record

    async def fetch_batch(self, wanted: Wanted) -> Found:
        """Records per tenant; recorded as one batch and one look-up per tenant, in order."""
        self.batches.append(tuple(wanted))
        found: Found = {}
        for tenant_id, refs in wanted.items():
            asked = frozenset(refs)
            self.calls.append((tenant_id, asked))
            if self._on_fetch is not None:
                self._on_fetch(tenant_id, asked)
            tenant = self._by_tenant.get(tenant_id, {})
            found[tenant_id] = {ref: tenant[ref] for ref in asked if ref in tenant}
        return found
