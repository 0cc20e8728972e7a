"""The demo corpus covers every resolution path it promises, and relabels without losing shape."""

from __future__ import annotations

from datetime import UTC, datetime

from worker.stores.demo import load_corpus
from worker.stores.ledger_rows import LedgerRecord


def test_corpus_covers_every_case() -> None:
    corpus = load_corpus()
    acme = corpus.tenant("acme")
    assert {t.tenant_id for t in corpus.tenants} == {"acme", "globex"}
    assert {p.user_id for p in acme.principals} == {"u-ana", "u-bob", "u-cy"}
    now = datetime.now(UTC)
    for rows in (acme.observations, acme.events):
        assert any(r.acl is None for r in rows)
        assert any(r.revoked_at is not None and r.revoked_at <= now for r in rows)
        assert any(r.acl and any(e.startswith("user:") for e in r.acl) for r in rows)
        assert any(r.acl and any(e.startswith("group:") for e in r.acl) for r in rows)
    docs = acme.documents
    assert sum(not d.has_acl_field for d in docs) == 1
    assert any(d.has_acl_field and d.acl == () for d in docs)
    assert any(d.revoked_at is not None and d.revoked_at > now for d in docs)
    assert any(d.revoked_at is not None and d.revoked_at <= now for d in docs)
    assert any(o.acl == () for o in acme.observations)


def test_ids_are_unique_per_kind_across_tenants() -> None:
    corpus = load_corpus()
    for attribute in ("observations", "events", "documents"):
        ids = [r.id for t in corpus.tenants for r in getattr(t, attribute)]
        assert len(ids) == len(set(ids)), attribute


def test_relabelled_copy_keeps_the_missing_acl_field() -> None:
    copy = load_corpus().relabelled("t1-", 10**6)
    acme = copy.tenant("t1-acme")
    missing = next(d for d in acme.documents if not d.has_acl_field)
    assert missing.id == 10**6 + 9005
    assert "acl" not in missing.to_mongo(acme.tenant_id)
    assert next(d for d in acme.documents if d.id == 10**6 + 9001).to_mongo("x")["acl"] is None


def test_ledger_record_has_no_content_field() -> None:
    assert set(LedgerRecord.model_fields).isdisjoint({"text", "title", "quote", "snippet"})
