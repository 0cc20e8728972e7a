"""The Postgres adapter against a real server: OBS and EVT resolution from real rows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from one_tenant import fetch_one

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
from worker.stores.postgres import PostgresEvidence

pytestmark = pytest.mark.integration

OBS, EVT = EvidenceKind.OBS, EvidenceKind.EVT
R = Resolution
ANA = Principal(user_id="u-ana", groups=("analysts",))
BOB = Principal(user_id="u-bob", groups=("sales",))
CY = Principal(user_id="u-cy")

#: (kind, demo id) -> expected resolution for (ana, bob, cy) of tenant acme, retrieval unbound.
EXPECTED = {
    (OBS, 1001): (R.RESOLVED, R.RESOLVED, R.RESOLVED),  # acl null: whole tenant
    (OBS, 1002): (R.RESOLVED, R.ACL_REDACTED, R.ACL_REDACTED),  # group:analysts
    (OBS, 1003): (R.ACL_REDACTED, R.RESOLVED, R.ACL_REDACTED),  # user:u-bob
    (OBS, 1004): (R.ACL_REDACTED, R.ACL_REDACTED, R.ACL_REDACTED),  # acl []: nobody
    (OBS, 1005): (R.REVOKED, R.REVOKED, R.REVOKED),  # revoked in the past
    (OBS, 1006): (R.RESOLVED, R.RESOLVED, R.RESOLVED),  # revoked_at in the future
    (OBS, 1007): (R.RESOLVED, R.ACL_REDACTED, R.RESOLVED),  # group:analysts, user:u-cy
    (OBS, 2001): (R.DANGLING, R.DANGLING, R.DANGLING),  # exists in globex only
    (OBS, 3999): (R.DANGLING, R.DANGLING, R.DANGLING),  # exists nowhere
    (EVT, 501): (R.RESOLVED, R.RESOLVED, R.RESOLVED),
    (EVT, 502): (R.ACL_REDACTED, R.RESOLVED, R.ACL_REDACTED),  # group:sales
    (EVT, 503): (R.REVOKED, R.REVOKED, R.REVOKED),
    (EVT, 504): (R.RESOLVED, R.ACL_REDACTED, R.ACL_REDACTED),  # user:u-ana
    (EVT, 601): (R.DANGLING, R.DANGLING, R.DANGLING),  # globex only
}


def _ref(kind: EvidenceKind, demo_id: int, offset: int) -> CitationRef:
    return CitationRef(kind, demo_id + offset)


async def test_resolution_of_real_rows_for_each_principal(
    pg: PostgresEvidence, corpus: DemoCorpus, namespace: Any
) -> None:
    refs = {key: _ref(*key, namespace.id_offset) for key in EXPECTED}
    records = await fetch_one(pg, namespace.tenant("acme"), set(refs.values()))
    now = datetime.now(UTC)
    for principal_index, principal in enumerate((ANA, BOB, CY)):
        resolutions = resolve_all(refs.values(), records, principal, None, now)
        got = {key: resolutions[ref] for key, ref in refs.items()}
        want = {key: outcomes[principal_index] for key, outcomes in EXPECTED.items()}
        assert got == want, principal.user_id


async def test_other_tenants_id_is_exactly_like_an_absent_one(
    pg: PostgresEvidence, corpus: DemoCorpus, namespace: Any
) -> None:
    acme = namespace.tenant("acme")
    globex_only = {_ref(OBS, 2001, namespace.id_offset), _ref(EVT, 601, namespace.id_offset)}
    absent = {_ref(OBS, 3999, namespace.id_offset), _ref(EVT, 3999, namespace.id_offset)}
    assert await fetch_one(pg, acme, globex_only) == {}
    assert await fetch_one(pg, acme, absent) == {}
    # ...while globex itself sees them.
    assert set(await fetch_one(pg, namespace.tenant("globex"), globex_only)) == globex_only


async def test_record_fields_come_from_the_row(
    pg: PostgresEvidence, corpus: DemoCorpus, namespace: Any
) -> None:
    acme = namespace.tenant("acme")
    public, grouped, revoked, nobody = (
        _ref(OBS, i, namespace.id_offset) for i in (1001, 1002, 1005, 1004)
    )
    records = await fetch_one(pg, acme, {public, grouped, revoked, nobody})
    assert records[public].acl is None
    assert records[grouped].acl == ("group:analysts",)
    assert records[nobody].acl == ()
    assert records[revoked].revoked_at == datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    assert records[public].text is not None
    assert records[public].text.startswith("Checkout p95 latency rose")
    assert records[public].title is None


async def test_ids_above_bigint_are_never_queried(
    migrated: Settings, namespace: Any, query_log: Any
) -> None:
    """They are dangling without a query: asking only for them sends nothing to the server."""
    async with PostgresEvidence.connect(migrated, init=query_log.attach) as pg:
        huge = {CitationRef(OBS, MAX_SOURCE_ID + 1), CitationRef(EVT, 10**30)}
        assert await fetch_one(pg, namespace.tenant("acme"), huge) == {}
        assert pg.pool.get_size() == 0  # not even a connection was opened
    assert query_log.queries == []


async def test_only_other_kinds_means_no_query(pg: PostgresEvidence, namespace: Any) -> None:
    assert await fetch_one(pg, namespace.tenant("acme"), {CitationRef(EvidenceKind.DOC, 1)}) == {}
    assert pg.pool.get_size() == 0


async def test_acl_with_a_null_entry_is_malformed_evidence(
    pg: PostgresEvidence, pg_pool: Any, corpus: DemoCorpus, namespace: Any, migrated: Settings
) -> None:
    ref = _ref(OBS, 1001, namespace.id_offset)
    await pg_pool.execute(
        f'UPDATE "{migrated.observations_table}" SET acl = ARRAY[NULL::text] WHERE id = $1', ref.id
    )
    with pytest.raises(MalformedEvidence) as caught:
        await fetch_one(pg, namespace.tenant("acme"), {ref})
    message = str(caught.value)
    assert f"{migrated.observations_table} id={ref.id}" in message
    assert "acl" in message
    assert "Checkout" not in message  # never the row's text


async def test_a_table_of_the_wrong_shape_is_malformed_evidence(
    settings: Settings, pg_pool: Any, namespace: Any
) -> None:
    """Another writer's table with ``acl text`` instead of ``text[]``: refused, not guessed."""
    table = f"obs_wrong_{namespace.prefix[1:-1]}"
    await pg_pool.execute(
        f'CREATE TABLE "{table}" (id bigint primary key, tenant_id text not null,'
        " acl text, revoked_at timestamptz, summary text)"
    )
    try:
        await pg_pool.execute(
            f"INSERT INTO \"{table}\" VALUES (7, 'acme', 'group:analysts', null, 'secret words')"
        )
        wrong = settings.model_copy(update={"observations_table": table})
        async with PostgresEvidence.connect(wrong) as pg:
            with pytest.raises(MalformedEvidence, match=rf"{table} id=7: acl must be") as caught:
                await fetch_one(pg, "acme", {CitationRef(OBS, 7)})
        assert "secret" not in str(caught.value)
    finally:
        await pg_pool.execute(f'DROP TABLE "{table}"')
