"""``grounding-worker seed-demo``: load the demo corpus (``worker/demo/corpus.json``) idempotently.

The corpus covers every resolution path for two tenants: evidence open to the tenant, ACL'd to a
group or to one user, ``acl: []``, a document with no ``acl`` field, revoked in the past and
"revoked" in the future, and ids that exist only in the other tenant. Tests load it too, with
``DemoCorpus.relabelled`` giving each test private tenants and ids.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from importlib import resources
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict
from pymongo.asynchronous.database import AsyncDatabase

from worker.core import Principal
from worker.settings import Settings
from worker.stores.identifiers import quote_identifier
from worker.stores.migrate import apply_migrations, ensure_mongo_indexes
from worker.stores.mongo import MongoEvidence
from worker.stores.postgres import PostgresEvidence


class DemoRow(BaseModel):
    """An ``observations`` / ``events`` row; ``acl`` must be spelled out (null = whole tenant)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int
    acl: tuple[str, ...] | None
    revoked_at: datetime | None = None
    summary: str | None = None


class DemoDocument(BaseModel):
    """A ``documents`` entry. Leaving ``acl`` out of the JSON stores a document with no field."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int
    acl: tuple[str, ...] | None = None
    revoked_at: datetime | None = None
    title: str
    text: str

    @property
    def has_acl_field(self) -> bool:
        """False for the fail-closed case: the stored document carries no ``acl`` at all."""
        return "acl" in self.model_fields_set

    def to_mongo(self, tenant_id: str) -> dict[str, Any]:
        """The stored shape (contract §8)."""
        body: dict[str, Any] = {"_id": self.id, "tenant_id": tenant_id}
        if self.has_acl_field:
            body["acl"] = list(self.acl) if self.acl is not None else None
        body |= {"revoked_at": self.revoked_at, "title": self.title, "text": self.text}
        return body


class DemoTenant(BaseModel):
    """One tenant's principals and evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: str
    principals: tuple[Principal, ...]
    observations: tuple[DemoRow, ...]
    events: tuple[DemoRow, ...]
    documents: tuple[DemoDocument, ...]

    def principal(self, user_id: str) -> Principal:
        """The principal named ``user_id``."""
        return next(p for p in self.principals if p.user_id == user_id)


class DemoCorpus(BaseModel):
    """The whole demo corpus."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int
    description: str = ""
    tenants: tuple[DemoTenant, ...]

    def tenant(self, tenant_id: str) -> DemoTenant:
        """The tenant named ``tenant_id``."""
        return next(t for t in self.tenants if t.tenant_id == tenant_id)

    def relabelled(self, tenant_prefix: str, id_offset: int) -> DemoCorpus:
        """A private copy: tenants renamed ``<prefix><tenant>``, every id shifted by the offset.

        Ids are global keys in both stores, so tests sharing a database need both to stay apart.
        """

        def shift(rows: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(r.model_copy(update={"id": r.id + id_offset}) for r in rows)

        tenants = tuple(
            t.model_copy(
                update={
                    "tenant_id": tenant_prefix + t.tenant_id,
                    "observations": shift(t.observations),
                    "events": shift(t.events),
                    "documents": shift(t.documents),
                }
            )
            for t in self.tenants
        )
        return self.model_copy(update={"tenants": tenants})


class SeedReport(NamedTuple):
    """How many entries were upserted."""

    observations: int
    events: int
    documents: int


def load_corpus() -> DemoCorpus:
    """The packaged demo corpus."""
    text = resources.files("worker").joinpath("demo", "corpus.json").read_text(encoding="utf-8")
    return DemoCorpus.model_validate_json(text)


async def seed_corpus(
    pool: Any, db: AsyncDatabase[Any], settings: Settings, corpus: DemoCorpus
) -> SeedReport:
    """Upsert ``corpus`` into Postgres and MongoDB (re-running it changes nothing)."""
    tables = ((settings.observations_table, "observations"), (settings.events_table, "events"))
    counts = {}
    for table, attribute in tables:
        args = [
            (row.id, t.tenant_id, _list(row.acl), row.revoked_at, row.summary)
            for t in corpus.tenants
            for row in getattr(t, attribute)
        ]
        await pool.executemany(
            f"INSERT INTO {quote_identifier(table)} (id, tenant_id, acl, revoked_at, summary)"  # noqa: S608 - validated, quoted identifier
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET"
            " tenant_id = EXCLUDED.tenant_id, acl = EXCLUDED.acl,"
            " revoked_at = EXCLUDED.revoked_at, summary = EXCLUDED.summary",
            args,
        )
        counts[attribute] = len(args)
    collection = db[settings.documents_collection]
    documents = [d.to_mongo(t.tenant_id) for t in corpus.tenants for d in t.documents]
    for body in documents:
        # replace, not update: a document whose acl field was removed must lose it when re-seeded.
        await collection.replace_one({"_id": body["_id"]}, body, upsert=True)
    return SeedReport(counts["observations"], counts["events"], len(documents))


def _list(acl: tuple[str, ...] | None) -> list[str] | None:
    return list(acl) if acl is not None else None


async def seed(settings: Settings) -> str:
    """Migrate (idempotent), then seed the packaged corpus; returns a one-line summary."""
    corpus = load_corpus()
    async with (
        PostgresEvidence.connect(settings) as pg,
        MongoEvidence.connect(settings) as mongo,
    ):
        await apply_migrations(pg.pool, settings)
        await ensure_mongo_indexes(mongo.database, settings)
        report = await seed_corpus(pg.pool, mongo.database, settings, corpus)
    tenants = ", ".join(t.tenant_id for t in corpus.tenants)
    return (
        f"demo corpus upserted for tenants {tenants}: {report.observations} observations, "
        f"{report.events} events, {report.documents} documents"
    )


def seed_demo_corpus(settings: Settings) -> None:
    """Sync entry point for the CLI."""
    print(asyncio.run(seed(settings)))
