"""Fixtures for the evidence-store integration tests: real PostgreSQL and a MongoDB-protocol server.

``postgres_dsn`` and ``mongo_url`` come from the top-level conftest (the test bed's services).
Every test that writes evidence gets private tenants and ids (``namespace``), because the
database is shared with other tests and with the demo corpus.
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import AsyncIterator
from typing import Any, NamedTuple

import asyncpg
import pytest
from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.monitoring import CommandListener, CommandStartedEvent

from worker.settings import Settings
from worker.stores.demo import DemoCorpus, load_corpus, seed_corpus
from worker.stores.identifiers import quote_identifier
from worker.stores.migrate import apply_migrations, ensure_mongo_indexes
from worker.stores.mongo import MongoEvidence
from worker.stores.postgres import PostgresEvidence


def make_settings(postgres_dsn: str, mongo_url: str, **overrides: Any) -> Settings:
    """Settings for the given servers; short timeouts so a failing test fails fast."""
    values: dict[str, Any] = {
        "GW_POSTGRES_DSN": postgres_dsn,
        "GW_MONGO_URL": mongo_url,
        "store_timeout_s": 3.0,
    }
    return Settings(**(values | overrides))


async def delete_corpus(
    pool: Any, db: AsyncDatabase[Any], settings: Settings, corpus: DemoCorpus
) -> None:
    """Remove what ``seed_corpus`` stored for ``corpus`` (tests clean up their private copy)."""
    for table, attribute in (
        (settings.observations_table, "observations"),
        (settings.events_table, "events"),
    ):
        ids = [row.id for t in corpus.tenants for row in getattr(t, attribute)]
        await pool.execute(
            f"DELETE FROM {quote_identifier(table)} WHERE id = ANY($1::bigint[])",
            ids,
        )
    doc_ids = [d.id for t in corpus.tenants for d in t.documents]
    await db[settings.documents_collection].delete_many({"_id": {"$in": doc_ids}})


@pytest.fixture(scope="session")
def settings_for() -> Any:
    """``make_settings`` as a fixture, for tests that point the adapters at their own servers."""
    return make_settings


@pytest.fixture(scope="session")
def settings(postgres_dsn: str, mongo_url: str) -> Settings:
    return make_settings(postgres_dsn, mongo_url)


@pytest.fixture(scope="session")
async def pg_pool(settings: Settings) -> AsyncIterator[Any]:
    """A plain asyncpg pool for arranging and inspecting rows (not the adapter under test)."""
    pool = await asyncpg.create_pool(
        settings.postgres_dsn.get_secret_value(), min_size=1, max_size=2
    )
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture(scope="session")
async def mongo_db(settings: Settings) -> AsyncIterator[AsyncDatabase[Any]]:
    """A plain pymongo database handle for arranging and inspecting documents."""
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
        settings.mongo_url.get_secret_value(), tz_aware=True, serverSelectionTimeoutMS=5000
    )
    try:
        yield client[settings.mongo_database]
    finally:
        await client.close()


@pytest.fixture(scope="session")
async def migrated(settings: Settings, pg_pool: Any, mongo_db: AsyncDatabase[Any]) -> Settings:
    """The schema and the documents index exist (idempotent, like ``grounding-worker migrate``)."""
    await apply_migrations(pg_pool, settings)
    await ensure_mongo_indexes(mongo_db, settings)
    return settings


class Namespace(NamedTuple):
    """Private tenants and ids for one test."""

    prefix: str
    id_offset: int

    def tenant(self, name: str) -> str:
        return self.prefix + name

    def id(self, demo_id: int) -> int:
        return demo_id + self.id_offset


@pytest.fixture
def namespace() -> Namespace:
    # Demo ids are < 10_000; offsets are multiples of 10^6 below 2^50, far from other tests'.
    return Namespace(f"t{secrets.token_hex(4)}-", (1 + secrets.randbelow(2**30)) * 10**6)


@pytest.fixture
async def corpus(
    migrated: Settings, pg_pool: Any, mongo_db: AsyncDatabase[Any], namespace: Namespace
) -> AsyncIterator[DemoCorpus]:
    """The demo corpus, relabelled into this test's namespace, seeded and removed afterwards."""
    private = load_corpus().relabelled(namespace.prefix, namespace.id_offset)
    await seed_corpus(pg_pool, mongo_db, migrated, private)
    try:
        yield private
    finally:
        await delete_corpus(pg_pool, mongo_db, migrated, private)


@pytest.fixture
async def pg(migrated: Settings) -> AsyncIterator[PostgresEvidence]:
    async with PostgresEvidence.connect(migrated) as adapter:
        yield adapter


@pytest.fixture
async def mongo(migrated: Settings) -> AsyncIterator[MongoEvidence]:
    async with MongoEvidence.connect(migrated) as adapter:
        yield adapter


class CommandLog(CommandListener):
    """Every command the MongoDB driver sends (pymongo command monitoring), by name."""

    #: Driver housekeeping, not queries.
    IGNORED = frozenset({"endSessions", "hello", "isMaster", "ismaster", "ping"})

    def __init__(self) -> None:
        self.commands: list[tuple[str, Any]] = []
        #: The ``filter`` of each ``find``, in order.
        self.filters: list[Any] = []

    def started(self, event: CommandStartedEvent) -> None:
        if event.command_name not in self.IGNORED:
            self.commands.append((event.command_name, event.command.get(event.command_name)))
            if event.command_name == "find":
                self.filters.append(event.command.get("filter"))

    def succeeded(self, event: Any) -> None:
        pass

    def failed(self, event: Any) -> None:
        pass


class QueryLog:
    """Every statement asyncpg sends on the adapter's connections (``add_query_logger``)."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.args: list[tuple[Any, ...]] = []

    async def attach(self, conn: Any) -> None:
        """Pass as ``PostgresEvidence.connect(init=...)``: runs on every new connection."""
        conn.add_query_logger(self._log)

    def _log(self, record: Any) -> None:
        self.queries.append(record.query)
        self.args.append(tuple(record.args or ()))

    def on(self, table: str) -> list[tuple[Any, ...]]:
        """The arguments of each statement that read ``table``."""
        return [a for q, a in zip(self.queries, self.args, strict=True) if f'FROM "{table}"' in q]


@pytest.fixture
def command_log() -> CommandLog:
    return CommandLog()


@pytest.fixture
def query_log() -> QueryLog:
    return QueryLog()


@pytest.fixture
def unused_port() -> int:
    """A local TCP port nothing listens on (bound then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
