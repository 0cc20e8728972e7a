"""Both stores behind the port: routing, tenant isolation between principals, and batching."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from one_tenant import fetch_one

from worker.core.citations.evidence import (
    MAX_SOURCE_ID,
    CitationRef,
    EvidenceKind,
    EvidenceRecord,
    Principal,
    Resolution,
    resolve_all,
)
from worker.faults import StoreUnavailable
from worker.settings import Settings
from worker.stores.demo import DemoCorpus, DemoTenant, seed_corpus
from worker.stores.evidence import CompositeEvidence, open_evidence
from worker.stores.mongo import MongoEvidence
from worker.stores.postgres import PostgresEvidence

pytestmark = pytest.mark.integration

OBS, EVT, DOC = EvidenceKind.OBS, EvidenceKind.EVT, EvidenceKind.DOC


@pytest.fixture
async def evidence(migrated: Settings) -> AsyncIterator[CompositeEvidence]:
    async with open_evidence(migrated) as composite:
        yield composite


def all_refs(tenant: DemoTenant) -> set[CitationRef]:
    return (
        {CitationRef(OBS, r.id) for r in tenant.observations}
        | {CitationRef(EVT, r.id) for r in tenant.events}
        | {CitationRef(DOC, d.id) for d in tenant.documents}
    )


def visible_by_definition(tenant: DemoTenant, principal: Principal) -> set[CitationRef]:
    """Ground truth from the corpus file alone (not from any adapter): unrevoked and admitted."""
    now = datetime.now(UTC)
    entries = principal.acl_entries()
    rows = [(OBS, r) for r in tenant.observations] + [(EVT, r) for r in tenant.events]
    out = {
        CitationRef(kind, r.id)
        for kind, r in rows
        if (r.revoked_at is None or r.revoked_at > now) and (r.acl is None or entries & set(r.acl))
    }
    out |= {
        CitationRef(DOC, d.id)
        for d in tenant.documents
        if (d.revoked_at is None or d.revoked_at > now)
        and d.has_acl_field
        and (d.acl is None or entries & set(d.acl))
    }
    return out


async def test_routes_each_kind_to_its_store(
    evidence: CompositeEvidence, corpus: DemoCorpus, namespace: Any
) -> None:
    obs, evt, doc = (
        CitationRef(OBS, namespace.id(1001)),
        CitationRef(EVT, namespace.id(501)),
        CitationRef(DOC, namespace.id(9001)),
    )
    records = await fetch_one(evidence, namespace.tenant("acme"), [obs, evt, doc, doc])
    assert set(records) == {obs, evt, doc}
    assert records[doc].title == "Payments incident runbook"
    assert records[obs].title is None


async def test_two_principals_never_receive_what_only_the_other_may_see(
    evidence: CompositeEvidence, corpus: DemoCorpus, namespace: Any
) -> None:
    acme, globex = (
        corpus.tenant(namespace.tenant("acme")),
        corpus.tenant(namespace.tenant("globex")),
    )
    cited = all_refs(acme) | all_refs(globex)  # everything anyone could cite, both tenants
    records = await fetch_one(evidence, acme.tenant_id, cited)
    now = datetime.now(UTC)

    def receivable(principal: Principal) -> set[CitationRef]:
        resolutions = resolve_all(cited, records, principal, None, now)
        return {ref for ref, resolution in resolutions.items() if resolution is Resolution.RESOLVED}

    ana, bob, cy = (acme.principal(u) for u in ("u-ana", "u-bob", "u-cy"))
    for one, other in [(ana, bob), (bob, ana), (cy, ana), (cy, bob), (bob, cy)]:
        only_other = visible_by_definition(acme, other) - visible_by_definition(acme, one)
        assert only_other, "the corpus must give each pair something exclusive"
        assert receivable(one).isdisjoint(only_other), (one.user_id, other.user_id)
        assert receivable(one) == visible_by_definition(acme, one)
    assert receivable(ana).isdisjoint(all_refs(globex))


def _drafts(acme: DemoTenant, globex: DemoTenant, seed: int) -> list[set[CitationRef]]:
    """100 drafts' citations: real ids, other-tenant ids, absent ids and ids above a bigint."""
    rng = random.Random(seed)
    pool = sorted(all_refs(acme) | all_refs(globex))
    drafts = []
    for i in range(100):
        refs = set(rng.sample(pool, 4))
        refs.add(CitationRef(rng.choice([OBS, EVT, DOC]), pool[0].id + 50_000 + i))  # absent
        if i % 10 == 0:
            refs.add(CitationRef(DOC, MAX_SOURCE_ID + i))
        drafts.append(refs)
    return drafts


async def test_a_batch_of_100_drafts_costs_one_query_per_table(
    migrated: Settings,
    corpus: DemoCorpus,
    namespace: Any,
    query_log: Any,
    command_log: Any,
) -> None:
    """Counted at the drivers: asyncpg's query logger and pymongo's command monitoring."""
    acme = corpus.tenant(namespace.tenant("acme"))
    drafts = _drafts(acme, corpus.tenant(namespace.tenant("globex")), seed=4)
    union = set().union(*drafts)
    async with (
        PostgresEvidence.connect(migrated, init=query_log.attach) as pg,
        MongoEvidence.connect(migrated, event_listeners=[command_log]) as mongo,
    ):
        composite = CompositeEvidence(pg, mongo)
        # Warm up: a new connection's first statements include asyncpg's one-off type
        # introspection; what a batch costs is measured on the pool's steady state.
        await fetch_one(composite, acme.tenant_id, {CitationRef(OBS, 1), CitationRef(EVT, 1)})
        await asyncio.sleep(0)
        query_log.queries.clear()
        query_log.args.clear()
        command_log.commands.clear()

        batched = await fetch_one(composite, acme.tenant_id, union)
        await asyncio.sleep(0)  # asyncpg calls query loggers with call_soon
        obs_queries = query_log.on(migrated.observations_table)
        evt_queries = query_log.on(migrated.events_table)
        finds = [c for c in command_log.commands if c[0] == "find"]
        # Everything else asyncpg sent is its reset-on-release statement, nothing per-ref.
        others = [
            q for q in query_log.queries if "pg_advisory_unlock_all" not in q and 'FROM "' not in q
        ]
        assert len(obs_queries) == 1
        assert len(evt_queries) == 1
        assert others == []
        assert [name for name, _ in command_log.commands] == ["find"]  # no getMore either
        assert finds == [("find", migrated.documents_collection)]
        # Each query is bound to the one tenant, with the distinct queryable ids of its kind.
        assert obs_queries[0][0] == acme.tenant_id
        assert sorted(obs_queries[0][1]) == sorted({r.id for r in union if r.kind is OBS})
        assert all(i <= MAX_SOURCE_ID for i in evt_queries[0][1])

        # Batching changes nothing: each draft sees what a fetch of its own would return.
        for refs in drafts[:20]:
            alone = await fetch_one(composite, acme.tenant_id, refs)
            assert {r: rec for r, rec in batched.items() if r in refs} == alone
    print(
        f"\n100 drafts, {len(union)} distinct refs: postgres {len(obs_queries)}+{len(evt_queries)}"
        f" queries, mongodb {len(finds)} find"
    )


async def test_two_tenants_in_one_batch_cost_one_query_per_tenant_and_table(
    migrated: Settings, corpus: DemoCorpus, namespace: Any, query_log: Any, command_log: Any
) -> None:
    acme, globex = (
        corpus.tenant(namespace.tenant("acme")),
        corpus.tenant(namespace.tenant("globex")),
    )
    async with (
        PostgresEvidence.connect(migrated, init=query_log.attach) as pg,
        MongoEvidence.connect(migrated, event_listeners=[command_log]) as mongo,
    ):
        composite = CompositeEvidence(pg, mongo)
        mine, theirs = await asyncio.gather(
            fetch_one(composite, acme.tenant_id, all_refs(acme) | all_refs(globex)),
            fetch_one(composite, globex.tenant_id, all_refs(acme) | all_refs(globex)),
        )
        await asyncio.sleep(0)
    assert set(mine) <= all_refs(acme)
    assert set(theirs) == all_refs(globex)
    for table in (migrated.observations_table, migrated.events_table):
        assert sorted(args[0] for args in query_log.on(table)) == sorted(
            [acme.tenant_id, globex.tenant_id]
        )
    assert len([c for c in command_log.commands if c[0] == "find"]) == 2


async def test_an_unreachable_store_fails_the_whole_fetch(
    migrated: Settings, corpus: DemoCorpus, namespace: Any, unused_port: int
) -> None:
    """Postgres answers but MongoDB is unreachable: a fault, never a partial 'mostly absent'."""
    broken = migrated.model_copy(
        update={
            "mongo_url": migrated.mongo_url.__class__(f"mongodb://127.0.0.1:{unused_port}/"),
            "store_timeout_s": 1.0,
        }
    )
    refs = {CitationRef(OBS, namespace.id(1001)), CitationRef(DOC, namespace.id(9001))}
    async with open_evidence(broken) as composite:
        with pytest.raises(StoreUnavailable, match="mongodb"):
            await fetch_one(composite, namespace.tenant("acme"), refs)
        # Only Postgres kinds asked: MongoDB is not contacted, so the call succeeds.
        only_obs = await fetch_one(
            composite, namespace.tenant("acme"), {CitationRef(OBS, namespace.id(1001))}
        )
        assert isinstance(next(iter(only_obs.values())), EvidenceRecord)


async def test_seeding_the_corpus_again_changes_nothing(
    migrated: Settings, corpus: DemoCorpus, namespace: Any, pg_pool: Any, mongo_db: Any
) -> None:
    """``seed-demo`` is an upsert: re-running it leaves the same rows and documents."""
    tenants = [t.tenant_id for t in corpus.tenants]

    async def snapshot() -> tuple[list[Any], list[Any]]:
        rows = await pg_pool.fetch(
            f'SELECT * FROM "{migrated.observations_table}" WHERE tenant_id = ANY($1) ORDER BY id',
            tenants,
        )
        docs = mongo_db[migrated.documents_collection].find({"tenant_id": {"$in": tenants}})
        return [dict(r) for r in rows], sorted(await docs.to_list(None), key=lambda d: d["_id"])

    before = await snapshot()
    report = await seed_corpus(pg_pool, mongo_db, migrated, corpus)
    assert report == (9, 5, 10)
    assert await snapshot() == before
    assert len(before[0]) == 9
    assert len(before[1]) == 10
    assert sum("acl" not in d for d in before[1]) == 1  # the fail-closed document kept its shape


async def test_one_batch_of_two_tenants_citing_each_others_ids_costs_one_query_per_table(
    migrated: Settings, corpus: DemoCorpus, namespace: Any, query_log: Any, command_log: Any
) -> None:
    """Batching: both tenants cite the same ids (each other's included) in one batch.

    One query per table and one ``find`` for the batch, counted at the drivers; each tenant gets
    exactly its own records, never the other's, and the same records a fetch of its own returns.
    """
    acme, globex = (
        corpus.tenant(namespace.tenant("acme")),
        corpus.tenant(namespace.tenant("globex")),
    )
    ghost = namespace.tenant("nobody")  # a tenant with no evidence at all, citing both
    everything = all_refs(acme) | all_refs(globex)
    async with (
        PostgresEvidence.connect(migrated, init=query_log.attach) as pg,
        MongoEvidence.connect(migrated, event_listeners=[command_log]) as mongo,
    ):
        composite = CompositeEvidence(pg, mongo)
        await fetch_one(composite, acme.tenant_id, {CitationRef(OBS, 1), CitationRef(EVT, 1)})
        await asyncio.sleep(0)
        query_log.queries.clear()
        query_log.args.clear()
        command_log.commands.clear()

        found = await composite.fetch_batch(
            {acme.tenant_id: everything, globex.tenant_id: everything, ghost: everything}
        )
        await asyncio.sleep(0)
        obs_queries = query_log.on(migrated.observations_table)
        evt_queries = query_log.on(migrated.events_table)
        assert len(obs_queries) == 1
        assert len(evt_queries) == 1
        assert [name for name, _ in command_log.commands] == ["find"]
        # Every id travels with its tenant: the pairs are (tenant, id) for each tenant asked.
        tenants, ids = obs_queries[0]
        obs_ids = sorted(r.id for r in everything if r.kind is OBS)
        for tenant in (acme.tenant_id, globex.tenant_id, ghost):
            assert sorted(i for t, i in zip(tenants, ids, strict=True) if t == tenant) == obs_ids
        ((_, collection),) = [(name, cmd) for name, cmd in command_log.commands if name == "find"]
        assert collection == migrated.documents_collection
        (clauses,) = [f["$or"] for f in command_log.filters]
        assert sorted(c["tenant_id"] for c in clauses) == sorted(
            [acme.tenant_id, globex.tenant_id, ghost]
        )
        doc_ids = sorted(r.id for r in everything if r.kind is DOC)
        assert all(sorted(c["_id"]["$in"]) == doc_ids for c in clauses)

        assert set(found) == {acme.tenant_id, globex.tenant_id, ghost}
        assert set(found[acme.tenant_id]) == all_refs(acme)
        assert set(found[globex.tenant_id]) == all_refs(globex)
        assert found[ghost] == {}
        for tenant in (acme.tenant_id, globex.tenant_id):
            assert found[tenant] == await fetch_one(composite, tenant, everything)


async def test_an_id_of_tenant_b_cited_by_tenant_a_in_a_shared_batch_is_absent_for_a(
    migrated: Settings, corpus: DemoCorpus, namespace: Any, command_log: Any
) -> None:
    """The same id in both tenants' lists: only its owner gets it, from Postgres and FerretDB."""
    acme, globex = (
        corpus.tenant(namespace.tenant("acme")),
        corpus.tenant(namespace.tenant("globex")),
    )
    theirs = {
        CitationRef(OBS, globex.observations[0].id),
        CitationRef(EVT, globex.events[0].id),
        CitationRef(DOC, globex.documents[0].id),
    }
    async with (
        PostgresEvidence.connect(migrated) as pg,
        MongoEvidence.connect(migrated, event_listeners=[command_log]) as mongo,
    ):
        found = await CompositeEvidence(pg, mongo).fetch_batch(
            {acme.tenant_id: theirs, globex.tenant_id: theirs}
        )
    assert found[acme.tenant_id] == {}
    assert set(found[globex.tenant_id]) == theirs
    # The one find is an $or of per-tenant clauses, each binding its tenant to its ids.
    (find,) = [c for c in command_log.commands if c[0] == "find"]
    assert find[1] == migrated.documents_collection
    doc_id = globex.documents[0].id
    assert command_log.filters == [
        {
            # Only narrows: a document must still match its own tenant's clause below.
            "_id": {"$in": [doc_id]},
            "$or": sorted(
                [
                    {"tenant_id": acme.tenant_id, "_id": {"$in": [doc_id]}},
                    {"tenant_id": globex.tenant_id, "_id": {"$in": [doc_id]}},
                ],
                key=lambda c: c["tenant_id"],
            ),
        }
    ]


async def test_a_batch_whose_every_document_exists_is_one_round_trip(
    migrated: Settings, corpus: DemoCorpus, namespace: Any, command_log: Any
) -> None:
    """A reply holding exactly the documents asked for must not leave a cursor for a getMore."""
    acme = corpus.tenant(namespace.tenant("acme"))
    docs = {CitationRef(DOC, d.id) for d in acme.documents}
    async with MongoEvidence.connect(migrated, event_listeners=[command_log]) as mongo:
        await fetch_one(mongo, acme.tenant_id, docs)  # warm up the connection
        command_log.commands.clear()
        found = await fetch_one(mongo, acme.tenant_id, docs)
    assert set(found) == docs
    assert [name for name, _ in command_log.commands] == ["find"]
