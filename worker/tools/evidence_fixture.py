"""Evidence for ``check --evidence FILE``: the demo corpus format, held in memory.

Decision: the fixture format *is* the demo corpus format (``worker/demo/corpus.json``, the
``DemoCorpus`` model), so one file both seeds the live stores (``seed-demo``) and checks drafts
with no server at all, and the two cannot disagree. Rows and documents go through the adapters'
own row parsers (``parse_sql_row``, ``parse_document``), so a document written without an ``acl``
field fails closed exactly as it does in MongoDB.
"""

from __future__ import annotations

from pathlib import Path

from worker.core.citations.evidence import EvidenceKind, EvidenceRecord
from worker.core.ports import InMemoryEvidenceStore
from worker.stores.demo import DemoCorpus
from worker.stores.rows import parse_document, parse_sql_row


def corpus_records(corpus: DemoCorpus) -> dict[str, list[EvidenceRecord]]:
    """Every tenant's records, as the live adapters would return them."""
    records: dict[str, list[EvidenceRecord]] = {}
    for tenant in corpus.tenants:
        rows = records.setdefault(tenant.tenant_id, [])
        for kind, table, entries in (
            (EvidenceKind.OBS, "observations", tenant.observations),
            (EvidenceKind.EVT, "events", tenant.events),
        ):
            rows.extend(
                parse_sql_row(
                    table,
                    kind,
                    {
                        "id": e.id,
                        "acl": None if e.acl is None else list(e.acl),
                        "revoked_at": e.revoked_at,
                        "summary": e.summary,
                    },
                )
                for e in entries
            )
        rows.extend(
            parse_document("documents", d.to_mongo(tenant.tenant_id)) for d in tenant.documents
        )
    return records


def load_fixture(path: Path) -> InMemoryEvidenceStore:
    """The evidence of a corpus file (``ValueError`` when it is not one)."""
    corpus = DemoCorpus.model_validate_json(path.read_bytes())
    return InMemoryEvidenceStore(corpus_records(corpus))
