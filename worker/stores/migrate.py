"""``grounding-worker migrate``: create or upgrade the Postgres tables and the MongoDB index.

Migrations are the ``worker/sql/NNN_*.sql`` files shipped in the package, rendered with the table
names from settings. Every statement is idempotent DDL, and ``schema_migrations`` records each
(version, checksum of the rendered text) applied, so re-running is a no-op, while pointing the
settings at new table names (a new checksum) creates those tables too. All of it runs in one
transaction under an advisory lock, so two ``migrate`` runs never interleave.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from importlib import resources
from typing import Any, NamedTuple

from pymongo.asynchronous.database import AsyncDatabase

from worker.settings import Settings
from worker.stores.identifiers import quote_identifier
from worker.stores.mongo import MongoEvidence
from worker.stores.postgres import PostgresEvidence

#: Arbitrary, fixed: serialises concurrent ``migrate`` runs against one database.
_ADVISORY_LOCK_KEY = 0x6772_6E64_6D69_6772  # "grndmigr"

_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")

#: The MongoDB indexes of contract §8; ``schemas/mongo/documents.indexes.json`` mirrors them.
DOCUMENT_INDEXES: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = (
    ("tenant_id_1__id_1", (("tenant_id", 1), ("_id", 1))),
)


class Migration(NamedTuple):
    """One rendered migration file."""

    version: str
    sql: str
    checksum: str


class MigrationReport(NamedTuple):
    """What ``apply_migrations`` did."""

    applied: tuple[str, ...]
    already_applied: tuple[str, ...]


def identifiers(settings: Settings) -> dict[str, str]:
    """Placeholder -> quoted identifier, each validated (derived index names included)."""
    names = {
        "observations_table": settings.observations_table,
        "events_table": settings.events_table,
        "ledger_table": settings.ledger_table,
    }
    names |= {
        "observations_table_tenant_idx": f"{settings.observations_table}_tenant_id_idx",
        "events_table_tenant_idx": f"{settings.events_table}_tenant_id_idx",
        "ledger_table_key": f"{settings.ledger_table}_citation_key",
        "ledger_table_source_idx": f"{settings.ledger_table}_source_idx",
    }
    return {key: quote_identifier(name) for key, name in names.items()}


def render(sql: str, settings: Settings) -> str:
    """Replace every ``{{name}}`` with its quoted identifier; an unknown name is an error."""
    quoted = identifiers(settings)

    def substitute(match: re.Match[str]) -> str:
        try:
            return quoted[match.group(1)]
        except KeyError:
            raise ValueError(f"unknown placeholder {match.group(0)} in a migration") from None

    return _PLACEHOLDER.sub(substitute, sql)


def load_migrations(settings: Settings) -> list[Migration]:
    """The packaged migrations in version order, rendered for ``settings``."""
    files = sorted(
        (f for f in resources.files("worker").joinpath("sql").iterdir() if f.name.endswith(".sql")),
        key=lambda f: f.name,
    )
    migrations = []
    for file in files:
        sql = render(file.read_text(encoding="utf-8"), settings)
        checksum = hashlib.sha256(sql.encode()).hexdigest()
        migrations.append(Migration(file.name.removesuffix(".sql"), sql, checksum))
    return migrations


async def apply_migrations(pool_or_conn: Any, settings: Settings) -> MigrationReport:
    """Apply the migrations not yet recorded, in one transaction; accepts a pool or connection."""
    if hasattr(pool_or_conn, "acquire"):
        async with pool_or_conn.acquire() as conn:
            return await apply_migrations(conn, settings)
    conn = pool_or_conn
    applied: list[str] = []
    already: list[str] = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _ADVISORY_LOCK_KEY)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version text NOT NULL, checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now(),"
            " PRIMARY KEY (version, checksum))"
        )
        done = {
            (row["version"], row["checksum"])
            for row in await conn.fetch("SELECT version, checksum FROM schema_migrations")
        }
        for migration in load_migrations(settings):
            if (migration.version, migration.checksum) in done:
                already.append(migration.version)
                continue
            await conn.execute(migration.sql)
            await conn.execute(
                "INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)",
                migration.version,
                migration.checksum,
            )
            applied.append(migration.version)
    return MigrationReport(tuple(applied), tuple(already))


async def ensure_mongo_indexes(db: AsyncDatabase[Any], settings: Settings) -> list[str]:
    """Create the documents indexes (a no-op when they exist); returns their names."""
    collection = db[settings.documents_collection]
    return [await collection.create_index(list(keys), name=name) for name, keys in DOCUMENT_INDEXES]


async def migrate(settings: Settings) -> str:
    """Migrate both stores; returns a one-line summary."""
    async with PostgresEvidence.connect(settings) as pg:
        report = await apply_migrations(pg.pool, settings)
    async with MongoEvidence.connect(settings) as mongo:
        indexes = await ensure_mongo_indexes(mongo.database, settings)
    return (
        f"postgres: applied {list(report.applied)}, already applied "
        f"{list(report.already_applied)}; mongodb {settings.mongo_database}."
        f"{settings.documents_collection}: indexes {indexes}"
    )


def migrate_all(settings: Settings) -> None:
    """Sync entry point for the CLI."""
    print(asyncio.run(migrate(settings)))
