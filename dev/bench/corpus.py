"""A synthetic evidence corpus for the benchmark: many tenants, hundreds of ids each.

The packaged demo corpus has a handful of ids per tenant; a batch of 200 realistic drafts cites
hundreds of distinct ids, so the store queries here are sized like production ones. Ids start at a
per-run base and are deleted again when the run ends (``remove``).

The test bed's FerretDB (SQLite) scans the whole collection for a ``find`` with ``_id: {$in}``
(about 0.05 ms per stored document here), where MongoDB uses the ``(tenant_id, _id)`` index; so
each scenario seeds only its own tenants, and the many-tenant one fewer documents per tenant, to
keep the stand-in's scan from being what is measured. ``probe_mongo`` reports what a find cost.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any, NamedTuple

from worker.core import EvidenceKind, EvidenceRecord
from worker.settings import Settings
from worker.stores.identifiers import quote_identifier
from worker.stores.migrate import apply_migrations, ensure_mongo_indexes
from worker.stores.mongo import MongoEvidence
from worker.stores.postgres import PostgresEvidence
from worker.stores.rows import parse_document, parse_sql_row

#: Every benchmark tenant's id starts with this (``remove_stale``).
TENANT_PREFIX = "bench-"
#: Per tenant: ids are ``base + tenant * TENANT_STRIDE + offset``.
TENANT_STRIDE = 10_000
OBS_PER_TENANT = 300
EVT_PER_TENANT = 100
DOC_PER_TENANT = 120
#: Offsets at and above this are never stored: citing them is a dangling citation.
DANGLING_OFFSET = 9_000

_TEXT = (
    "checkout latency rose sharply after the deploy of payments api while refunds for eu cards "
    "stayed flat and the on call engineer paged the database team about connection pool "
    "saturation on the primary replica during the evening peak of traffic from mobile clients"
)
WORDS = tuple(_TEXT.split())


class TenantEvidence(NamedTuple):
    """What the draft generator needs to know about one tenant's evidence."""

    tenant_id: str
    user_id: str
    groups: tuple[str, ...]
    #: (kind, id, source text) the principal may see and that is not revoked.
    visible: tuple[tuple[str, int, str], ...]
    #: DOC ids in the tenant that the principal may not see.
    hidden_docs: tuple[int, ...]
    #: First id that is never stored for this tenant.
    dangling_base: int


class Corpus(NamedTuple):
    """The seeded tenants and the id range they occupy."""

    base: int
    tenants: tuple[TenantEvidence, ...]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def build(
    run_tag: str, n_tenants: int, base: int, *, docs_per_tenant: int = DOC_PER_TENANT, seed: int = 7
) -> tuple[Corpus, dict[str, Any]]:
    """The corpus (what drafts may cite) and the rows to store, per table/collection."""
    rng = random.Random(seed)
    past = datetime(2025, 1, 1, tzinfo=UTC)
    rows: dict[str, list[Any]] = {"observations": [], "events": [], "documents": []}
    tenants = []
    for t in range(n_tenants):
        tenant_id = f"{TENANT_PREFIX}{run_tag}-t{t:02d}"
        first = base + t * TENANT_STRIDE
        visible: list[tuple[str, int, str]] = []
        hidden: list[int] = []
        for kind, table, count, start in (
            ("OBS", "observations", OBS_PER_TENANT, 0),
            ("EVT", "events", EVT_PER_TENANT, 3_000),
            ("DOC", "documents", docs_per_tenant, 6_000),
        ):
            for k in range(count):
                ident = first + start + k
                text = " ".join(_sentence(rng, 12) for _ in range(3))
                roll = k % 50
                acl: list[str] | None = None
                revoked = None
                if roll < 5:
                    acl = ["group:analysts", "user:u-other"]
                elif roll < 9:
                    acl = ["group:legal"]  # hidden from the bench principal
                elif roll == 9:
                    revoked = past
                if table == "documents":
                    rows[table].append(
                        {
                            "_id": ident,
                            "tenant_id": tenant_id,
                            "acl": acl,
                            "revoked_at": revoked,
                            "title": f"Document {k} of {tenant_id}",
                            "text": text,
                        }
                    )
                else:
                    rows[table].append((ident, tenant_id, acl, revoked, text))
                if revoked is not None:
                    continue
                if acl == ["group:legal"]:
                    if kind == "DOC":
                        hidden.append(ident)
                    continue
                visible.append((kind, ident, text))
        tenants.append(
            TenantEvidence(
                tenant_id=tenant_id,
                user_id="u-bench",
                groups=("analysts",),
                visible=tuple(visible),
                hidden_docs=tuple(hidden),
                dangling_base=first + DANGLING_OFFSET,
            )
        )
    return Corpus(base=base, tenants=tuple(tenants)), rows


def records(rows: dict[str, Any]) -> dict[str, list[EvidenceRecord]]:
    """The rows as the stores' adapters parse them, by tenant (observations, events, documents,
    each in row order): the corpus for an in-memory evidence store."""
    found: dict[str, list[EvidenceRecord]] = {}
    for table, kind in (("observations", EvidenceKind.OBS), ("events", EvidenceKind.EVT)):
        for ident, tenant, acl, revoked, text in rows[table]:
            row = {"id": ident, "acl": acl, "revoked_at": revoked, "summary": text}
            found.setdefault(tenant, []).append(parse_sql_row(table, kind, row))
    for doc in rows["documents"]:
        found.setdefault(doc["tenant_id"], []).append(parse_document("documents", doc))
    return found


async def seed(settings: Settings, rows: dict[str, Any]) -> None:
    """Migrate (idempotent) and upsert the rows."""
    async with (
        PostgresEvidence.connect(settings) as pg,
        MongoEvidence.connect(settings) as mongo,
    ):
        await apply_migrations(pg.pool, settings)
        await ensure_mongo_indexes(mongo.database, settings)
        for table in (settings.observations_table, settings.events_table):
            name = "observations" if table == settings.observations_table else "events"
            await pg.pool.executemany(
                f"INSERT INTO {quote_identifier(table)} (id, tenant_id, acl, revoked_at, summary)"
                " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET"
                " tenant_id = EXCLUDED.tenant_id, acl = EXCLUDED.acl,"
                " revoked_at = EXCLUDED.revoked_at, summary = EXCLUDED.summary",
                rows[name],
            )
        docs = mongo.database[settings.documents_collection]
        ids = [d["_id"] for d in rows["documents"]]
        await docs.delete_many({"_id": {"$in": ids}})
        for start in range(0, len(rows["documents"]), 1000):
            await docs.insert_many(rows["documents"][start : start + 1000], ordered=False)


def probe_mongo(settings: Settings, corpus: Corpus, rows: dict[str, Any]) -> float:
    """Median ms of one find of every document of a tenant, as the worker asks (context only)."""
    import statistics  # noqa: PLC0415
    import time  # noqa: PLC0415

    import pymongo  # noqa: PLC0415

    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
        settings.mongo_url.get_secret_value(), serverSelectionTimeoutMS=5000
    )
    try:
        docs = client[settings.mongo_database][settings.documents_collection]
        times = []
        for tenant in corpus.tenants[:5]:
            ids = [d["_id"] for d in rows["documents"] if d["tenant_id"] == tenant.tenant_id]
            t0 = time.perf_counter()
            list(docs.find({"tenant_id": tenant.tenant_id, "_id": {"$in": ids}}))
            times.append((time.perf_counter() - t0) * 1000)
        return round(statistics.median(times), 1)
    finally:
        client.close()


async def remove(settings: Settings, corpus: Corpus) -> None:
    """Delete every id of the run's range from both stores."""
    low = corpus.base
    high = corpus.base + len(corpus.tenants) * TENANT_STRIDE
    async with (
        PostgresEvidence.connect(settings) as pg,
        MongoEvidence.connect(settings) as mongo,
    ):
        for table in (settings.observations_table, settings.events_table):
            await pg.pool.execute(
                f"DELETE FROM {quote_identifier(table)} WHERE id >= $1 AND id < $2",
                low,
                high,
            )
        await mongo.database[settings.documents_collection].delete_many(
            {"_id": {"$gte": low, "$lt": high}}
        )


async def remove_stale(settings: Settings) -> int:
    """Delete the evidence of earlier runs that never removed theirs (a run killed midway).

    FerretDB scans its whole collection for each ``find``, so a killed run's documents would slow
    every store call of the runs after it. Migrates first (idempotent), as ``seed`` does. Returns
    how many rows and documents went.
    """
    like = TENANT_PREFIX + "%"  # no LIKE wildcard in the prefix
    removed = 0
    async with (
        PostgresEvidence.connect(settings) as pg,
        MongoEvidence.connect(settings) as mongo,
    ):
        await apply_migrations(pg.pool, settings)  # a fresh database has no tables yet
        for table in (settings.observations_table, settings.events_table):
            status = await pg.pool.execute(
                f"DELETE FROM {quote_identifier(table)} WHERE tenant_id LIKE $1", like
            )
            removed += int(status.split()[-1])
        gone = await mongo.database[settings.documents_collection].delete_many(
            {"tenant_id": {"$regex": "^" + TENANT_PREFIX}}
        )
        removed += gone.deleted_count
    return removed
