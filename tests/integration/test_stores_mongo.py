"""The MongoDB adapter against a real MongoDB-protocol server: DOC resolution from documents."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from one_tenant import fetch_one
from pymongo.asynchronous.database import AsyncDatabase

from worker.core.citations.evidence import (
    MAX_SOURCE_ID,
    CitationRef,
    EvidenceKind,
    Principal,
    Resolution,
    resolve_all,
)
from worker.faults import MalformedEvidence
from worker.settings import Settings
from worker.stores.demo import DemoCorpus
from worker.stores.mongo import MongoEvidence

pytestmark = pytest.mark.integration

DOC = EvidenceKind.DOC
R = Resolution
ANA = Principal(user_id="u-ana", groups=("analysts",))
BOB = Principal(user_id="u-bob", groups=("sales",))
CY = Principal(user_id="u-cy")

#: demo DOC id -> expected resolution for (ana, bob, cy) of tenant acme, retrieval unbound.
EXPECTED = {
    9001: (R.RESOLVED, R.RESOLVED, R.RESOLVED),  # acl null
    9002: (R.RESOLVED, R.ACL_REDACTED, R.ACL_REDACTED),  # group:analysts
    9003: (R.ACL_REDACTED, R.RESOLVED, R.ACL_REDACTED),  # user:u-bob
    9004: (R.ACL_REDACTED, R.ACL_REDACTED, R.ACL_REDACTED),  # acl []
    9005: (R.ACL_REDACTED, R.ACL_REDACTED, R.ACL_REDACTED),  # no acl field: fails closed
    9006: (R.REVOKED, R.REVOKED, R.REVOKED),  # revoked in the past
    9007: (R.RESOLVED, R.RESOLVED, R.RESOLVED),  # revoked_at in the future
    9101: (R.DANGLING, R.DANGLING, R.DANGLING),  # globex only
    9999: (R.DANGLING, R.DANGLING, R.DANGLING),  # nowhere
}


async def test_resolution_of_real_documents_for_each_principal(
    mongo: MongoEvidence, corpus: DemoCorpus, namespace: Any
) -> None:
    refs = {demo_id: CitationRef(DOC, namespace.id(demo_id)) for demo_id in EXPECTED}
    records = await fetch_one(mongo, namespace.tenant("acme"), set(refs.values()))
    now = datetime.now(UTC)
    for index, principal in enumerate((ANA, BOB, CY)):
        resolutions = resolve_all(refs.values(), records, principal, None, now)
        got = {i: resolutions[ref] for i, ref in refs.items()}
        assert got == {i: outcomes[index] for i, outcomes in EXPECTED.items()}, principal.user_id


async def test_missing_acl_field_and_null_acl_differ(
    mongo: MongoEvidence, corpus: DemoCorpus, namespace: Any
) -> None:
    public, no_field, empty = (CitationRef(DOC, namespace.id(i)) for i in (9001, 9005, 9004))
    records = await fetch_one(mongo, namespace.tenant("acme"), {public, no_field, empty})
    assert records[public].acl is None
    assert records[no_field].acl == ()
    assert records[empty].acl == ()


async def test_record_fields_and_aware_revoked_at(
    mongo: MongoEvidence, corpus: DemoCorpus, namespace: Any
) -> None:
    revoked = CitationRef(DOC, namespace.id(9006))
    record = (await fetch_one(mongo, namespace.tenant("acme"), {revoked}))[revoked]
    assert record.revoked_at == datetime(2025, 2, 14, 8, 0, tzinfo=UTC)
    assert record.revoked_at is not None
    assert record.revoked_at.utcoffset() is not None
    assert record.title == "Pricing sheet 2024"
    assert record.text is not None
    assert record.text.startswith("List prices for the 2024 catalogue.")


async def test_other_tenants_document_is_exactly_like_an_absent_one(
    mongo: MongoEvidence, corpus: DemoCorpus, namespace: Any
) -> None:
    acme = namespace.tenant("acme")
    assert await fetch_one(mongo, acme, {CitationRef(DOC, namespace.id(9101))}) == {}
    assert await fetch_one(mongo, acme, {CitationRef(DOC, namespace.id(9999))}) == {}
    globex = await fetch_one(
        mongo, namespace.tenant("globex"), {CitationRef(DOC, namespace.id(9101))}
    )
    assert set(globex) == {CitationRef(DOC, namespace.id(9101))}


async def test_naive_revoked_at_written_by_another_client_is_read_as_utc(
    migrated: Settings, mongo_db: AsyncDatabase[Any], mongo: MongoEvidence, namespace: Any
) -> None:
    collection = mongo_db[migrated.documents_collection]
    doc_id = namespace.id(1)
    await collection.insert_one(
        {
            "_id": doc_id,
            "tenant_id": namespace.tenant("acme"),
            "acl": None,
            "revoked_at": datetime(2030, 5, 6, 7, 8),
            "title": "t",
            "text": "x",
        }
    )
    try:
        ref = CitationRef(DOC, doc_id)
        record = (await fetch_one(mongo, namespace.tenant("acme"), {ref}))[ref]
        assert record.revoked_at == datetime(2030, 5, 6, 7, 8, tzinfo=UTC)
    finally:
        await collection.delete_one({"_id": doc_id})


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("acl", "group:analysts", "acl must be null or a list of strings, got str"),
        ("acl", ["group:analysts", 7], "acl must be null or a list of strings, got list"),
        ("revoked_at", "2025-01-01T00:00:00Z", "revoked_at must be a timestamp, got str"),
        ("text", 42, "text must be null or a string, got int"),
        ("title", ["a"], "title must be null or a string, got list"),
    ],
)
async def test_a_document_of_the_wrong_shape_is_malformed_evidence(
    migrated: Settings,
    mongo_db: AsyncDatabase[Any],
    mongo: MongoEvidence,
    namespace: Any,
    field: str,
    value: object,
    problem: str,
) -> None:
    collection = mongo_db[migrated.documents_collection]
    doc_id = namespace.id(2)
    body = {"_id": doc_id, "tenant_id": namespace.tenant("acme"), "acl": None,
            "revoked_at": None, "title": "Secret title", "text": "secret text"}  # fmt: skip
    await collection.insert_one(body | {field: value})
    try:
        with pytest.raises(MalformedEvidence) as caught:
            await fetch_one(mongo, namespace.tenant("acme"), {CitationRef(DOC, doc_id)})
        message = str(caught.value)
        assert message == (
            f"malformed evidence in {migrated.documents_collection} id={doc_id}: {problem}"
        )
        assert "ecret" not in message
    finally:
        await collection.delete_one({"_id": doc_id})


async def test_ids_above_bigint_are_never_queried(
    migrated: Settings, namespace: Any, command_log: Any
) -> None:
    async with MongoEvidence.connect(migrated, event_listeners=[command_log]) as mongo:
        huge = {CitationRef(DOC, MAX_SOURCE_ID + 1), CitationRef(DOC, 10**40)}
        assert await fetch_one(mongo, namespace.tenant("acme"), huge) == {}
    assert command_log.commands == []
