"""Postgres ``citation_ledger`` (§6): idempotent writes, exact numeric ids, metadata only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest

from worker.core import LedgerSupport
from worker.core.citations.evidence import MAX_SOURCE_ID, EvidenceKind, QuoteCheck, Resolution
from worker.faults import PoisonFault
from worker.settings import Settings
from worker.stores.ledger import PostgresLedger
from worker.stores.ledger_rows import LedgerRecord

pytestmark = pytest.mark.integration

COLUMNS = {
    "tenant_id", "turn_id", "draft_id", "attempt", "outcome", "kind", "source_id", "resolution",
    "quote_check", "paths", "policy_version", "recorded_at", "event_id", "support",
}  # fmt: skip


def _batch(tenant: str, draft_id: str = "d-1") -> list[LedgerRecord]:
    common = {
        "tenant_id": tenant, "turn_id": "t-1", "draft_id": draft_id, "attempt": 0,
        "outcome": "regenerate", "policy_version": "default-1", "event_id": f"ev-{draft_id}",
    }  # fmt: skip
    return [
        LedgerRecord(**common, kind=EvidenceKind.OBS, source_id=1001,
                     resolution=Resolution.RESOLVED, quote_check=QuoteCheck.EXACT,
                     paths=("answer_markdown", "claims[0].citations[0]"),
                     support=LedgerSupport.UNSUPPORTED),
        LedgerRecord(**common, kind=EvidenceKind.DOC, source_id=9002,
                     resolution=Resolution.ACL_REDACTED, paths=("claims[1].text",)),
        LedgerRecord(**common, kind=EvidenceKind.DOC, source_id=MAX_SOURCE_ID + 1,
                     resolution=Resolution.DANGLING, paths=("answer_markdown",)),
        LedgerRecord(**common, kind=EvidenceKind.EVT, source_id=10**30 + 7,
                     resolution=Resolution.DANGLING, paths=()),
    ]  # fmt: skip


@pytest.fixture
async def ledger(migrated: Settings) -> AsyncIterator[PostgresLedger]:
    async with PostgresLedger.connect(migrated) as writer:
        yield writer


@pytest.fixture(autouse=True)
async def _cleanup(pg_pool: Any, migrated: Settings, namespace: Any) -> Any:
    yield
    await pg_pool.execute(
        f'DELETE FROM "{migrated.ledger_table}" WHERE tenant_id LIKE $1', namespace.prefix + "%"
    )


async def _rows(pg_pool: Any, settings: Settings, tenant: str) -> list[dict[str, Any]]:
    rows = await pg_pool.fetch(
        f'SELECT *, source_id::text AS source_id_text FROM "{settings.ledger_table}"'
        " WHERE tenant_id = $1 ORDER BY kind, source_id",
        tenant,
    )
    return [dict(r) for r in rows]


async def test_a_batch_written_twice_leaves_one_copy(
    ledger: PostgresLedger, pg_pool: Any, migrated: Settings, namespace: Any
) -> None:
    tenant = namespace.tenant("acme")
    await ledger.write_ledger(_batch(tenant))
    first = await _rows(pg_pool, migrated, tenant)
    await ledger.write_ledger(_batch(tenant))
    await ledger.write_ledger(_batch(tenant)[1:2] * 3)  # duplicates inside one batch too
    second = await _rows(pg_pool, migrated, tenant)
    assert len(first) == 4
    assert second == first  # same rows, same recorded_at: nothing re-inserted
    by_kind = {(r["kind"], r["source_id_text"]): r for r in second}
    obs = by_kind[("OBS", "1001")]
    assert obs["resolution"] == "resolved"
    assert obs["quote_check"] == "exact"
    assert obs["paths"] == ["answer_markdown", "claims[0].citations[0]"]
    assert obs["outcome"] == "regenerate"
    assert obs["event_id"] == "ev-d-1"
    assert obs["recorded_at"] is not None
    assert obs["support"] == "unsupported"  # rule 6b, contract §6
    assert by_kind[("DOC", "9002")]["quote_check"] == "none"
    assert by_kind[("DOC", "9002")]["support"] == "none"
    assert by_kind[("EVT", str(10**30 + 7))]["paths"] == []


async def test_another_draft_of_the_turn_gets_its_own_rows(
    ledger: PostgresLedger, pg_pool: Any, migrated: Settings, namespace: Any
) -> None:
    tenant = namespace.tenant("acme")
    await ledger.write_ledger(_batch(tenant, "d-1"))
    await ledger.write_ledger(_batch(tenant, "d-2"))
    assert len(await _rows(pg_pool, migrated, tenant)) == 8


async def test_source_ids_above_bigint_are_stored_exactly(
    ledger: PostgresLedger, pg_pool: Any, migrated: Settings, namespace: Any
) -> None:
    tenant = namespace.tenant("acme")
    await ledger.write_ledger(_batch(tenant))
    stored = {r["source_id_text"] for r in await _rows(pg_pool, migrated, tenant)}
    assert stored == {"1001", "9002", str(2**63), str(10**30 + 7)}
    values = {r["source_id"] for r in await _rows(pg_pool, migrated, tenant)}
    assert Decimal(2**63) in values


async def test_empty_batch_is_a_no_op(ledger: PostgresLedger) -> None:
    await ledger.write_ledger([])
    assert ledger.pool.get_size() == 0


async def test_the_table_holds_metadata_only(pg_pool: Any, migrated: Settings) -> None:
    """No text, title, quote or snippet column exists, so none can ever be written (§6)."""
    columns = await pg_pool.fetch(
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = $1",
        migrated.ledger_table,
    )
    names = {c["column_name"] for c in columns}
    assert names == COLUMNS
    assert {c["column_name"]: c["data_type"] for c in columns}["source_id"] == "numeric"
    assert names.isdisjoint({"text", "title", "quote", "snippet", "summary", "excerpt"})
    assert set(LedgerRecord.model_fields) == COLUMNS - {"recorded_at"}


async def test_unique_key_is_the_contracts(pg_pool: Any, migrated: Settings) -> None:
    key = await pg_pool.fetchval(
        "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c"
        " WHERE c.conrelid = $1::regclass AND c.contype = 'u'",
        f'"{migrated.ledger_table}"',
    )
    assert key == "UNIQUE (tenant_id, turn_id, draft_id, kind, source_id)"


@pytest.mark.parametrize(
    ("field", "value"),
    [("attempt", 2**63), ("attempt", 2**31), ("paths", ("answer_markdown", "claims[0].a\x00b"))],
)
async def test_rows_postgres_cannot_store_are_poison_not_an_outage(
    ledger: PostgresLedger, pg_pool: Any, migrated: Settings, namespace: Any, field: str, value: Any
) -> None:
    """An envelope may carry any integer ``attempt`` and an agent's own key names end up in
    paths; a row the column types reject fails the same way on every retry (scripts/chaos)."""
    tenant = namespace.prefix + "rejected"
    (row,) = _batch(tenant)[:1]
    with pytest.raises(PoisonFault, match="rejected rows"):
        await ledger.write_ledger([row.model_copy(update={field: value})])
    assert await _rows(pg_pool, migrated, tenant) == []
