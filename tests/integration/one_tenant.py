"""The evidence port asked for one tenant, as ``check`` asks it: a batch of one tenant."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from worker.core.citations.evidence import CitationRef, EvidenceRecord
from worker.core.evidence_store import EvidenceStore


async def fetch_one(
    store: EvidenceStore, tenant_id: str, refs: Collection[CitationRef]
) -> Mapping[CitationRef, EvidenceRecord]:
    """The records of ``tenant_id`` among ``refs``: ``fetch_batch`` with that tenant alone."""
    return (await store.fetch_batch({tenant_id: refs}))[tenant_id]
