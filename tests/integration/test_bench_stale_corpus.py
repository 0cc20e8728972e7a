"""The benchmark removes the evidence a killed run left behind, and nothing else.

A run removes its corpus when it ends; a run killed midway cannot, and FerretDB scans its whole
collection for every ``find``, so its leftovers would slow every store call of the runs after it.
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from pymongo.asynchronous.database import AsyncDatabase

from dev.bench import corpus as bench_corpus
from worker.settings import Settings
from worker.stores.demo import DemoCorpus


async def test_stale_benchmark_evidence_is_removed_and_other_tenants_kept(
    migrated: Settings, pg_pool: Any, mongo_db: AsyncDatabase[Any], corpus: DemoCorpus
) -> None:
    _, rows = bench_corpus.build("stale-test", 2, 6 * 10**15, docs_per_tenant=5)
    await bench_corpus.seed(migrated, rows)
    seeded = len(rows["observations"]) + len(rows["events"]) + len(rows["documents"])

    assert await bench_corpus.remove_stale(migrated) >= seeded

    left = await pg_pool.fetchval(
        f"SELECT count(*) FROM {migrated.observations_table} WHERE tenant_id LIKE 'bench-%'"
    )
    docs = migrated.documents_collection
    assert left == 0
    assert await mongo_db[docs].count_documents({"tenant_id": {"$regex": "^bench-"}}) == 0
    # The test's own demo corpus (other tenants) is untouched, row for row.
    for tenant in corpus.tenants:
        kept = await pg_pool.fetchval(
            f"SELECT count(*) FROM {migrated.observations_table} WHERE tenant_id = $1",
            tenant.tenant_id,
        )
        assert kept == len(tenant.observations)
        kept_docs = await mongo_db[docs].count_documents({"tenant_id": tenant.tenant_id})
        assert kept_docs == len(tenant.documents)


async def test_a_fresh_database_without_tables_is_migrated_not_an_error(
    pg_pool: Any, postgres_dsn: str, mongo_url: str, settings_for: Any
) -> None:
    name = f"bench_fresh_{secrets.token_hex(4)}"
    await pg_pool.execute(f"CREATE DATABASE {name}")
    try:
        dsn = urlunsplit(urlsplit(postgres_dsn)._replace(path="/" + name))
        fresh: Settings = settings_for(dsn, mongo_url)
        assert await bench_corpus.remove_stale(fresh) >= 0
        conn = await asyncpg.connect(dsn)
        try:
            assert await conn.fetchval(f"SELECT count(*) FROM {fresh.observations_table}") == 0
        finally:
            await conn.close()
    finally:
        await pg_pool.execute(f"DROP DATABASE {name} WITH (FORCE)")
