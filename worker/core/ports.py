"""The one IO seam of the core: which cited ids exist for a tenant, and what they say."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Protocol

from worker.core.evidence import CitationRef, EvidenceRecord


class EvidenceStore(Protocol):
    """Batched, tenant-scoped evidence look-up.

    One call is one batch for one tenant: an adapter issues at most one query per table (Postgres)
    or collection (MongoDB). Absent ids, ids of other tenants and ids above ``MAX_SOURCE_ID`` are
    simply missing from the result. An unreachable store raises a retriable fault, never returns
    an empty mapping.
    """

    async def fetch(
        self, tenant_id: str, refs: Collection[CitationRef]
    ) -> Mapping[CitationRef, EvidenceRecord]:
        """Return the records of ``tenant_id`` among ``refs``."""
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
        #: Every (tenant, refs) asked, in order: lets tests count queries.
        self.calls: list[tuple[str, frozenset[CitationRef]]] = []

    def add(self, tenant_id: str, record: EvidenceRecord) -> None:
        """Store ``record`` for ``tenant_id``."""
        self._by_tenant.setdefault(tenant_id, {})[record.ref] = record

    async def fetch(
        self, tenant_id: str, refs: Collection[CitationRef]
    ) -> Mapping[CitationRef, EvidenceRecord]:
        """Return the records of ``tenant_id`` among ``refs``."""
        asked = frozenset(refs)
        self.calls.append((tenant_id, asked))
        if self._on_fetch is not None:
            self._on_fetch(tenant_id, asked)
        tenant = self._by_tenant.get(tenant_id, {})
        return {ref: tenant[ref] for ref in asked if ref in tenant}
