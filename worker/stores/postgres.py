"""Postgres adapter of the evidence port: OBS and EVT look-ups over one asyncpg pool.

One ``SELECT`` per table per batch of drafts, whatever the number of tenants in it: one tenant is
``tenant_id = $1 AND id = ANY($2)``; several are a join on the pairs (``tenant_id``, ``id``) of
``unnest($1::text[], $2::bigint[])`` (contract §8), so every id is matched with its own tenant and
an id of another tenant is simply absent. No query ever matches ids without their tenant.
Driver errors become ``worker.faults`` in ``_store_faults`` and nowhere else; the ledger writer
(``worker.stores.ledger``) opens its pool and runs its statements through the same functions here.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
)
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import asyncpg

from worker.core import CitationRef, EvidenceKind, EvidenceRecord, Found, Wanted
from worker.faults import StoreUnavailable
from worker.settings import Settings
from worker.stores.concurrency import gather_all
from worker.stores.deadline import within
from worker.stores.identifiers import quote_identifier
from worker.stores.rows import parse_sql_row, queryable_ids

#: A callback run on every new pooled connection (tests use it to attach a query logger).
ConnectionInit = Callable[[Any], Awaitable[None]]

T = TypeVar("T")


class _ConnectionLost(Exception):
    """The server closed a pooled connection under a running statement."""


#: Errors that mean "the store is not serving right now": retry, never decide.
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    _ConnectionLost,
    OSError,  # refused, reset, unreachable
    TimeoutError,  # asyncio.wait_for and asyncpg's command/connect timeouts
    asyncpg.exceptions.PostgresConnectionError,  # SQLSTATE 08: incl. ConnectionDoesNotExistError
    asyncpg.exceptions.OperatorInterventionError,  # 57: admin/crash shutdown, cannot connect now
    asyncpg.exceptions.InsufficientResourcesError,  # 53: too many connections, disk full
    asyncpg.exceptions.InvalidAuthorizationSpecificationError,  # 28: fixed by the operator
    asyncpg.exceptions.InvalidCatalogNameError,  # 3D000: database missing
    asyncpg.exceptions.UndefinedTableError,  # 42P01: `grounding-worker migrate` not run yet
)


@contextmanager
def _store_faults(what: str) -> Iterator[None]:
    """Translate driver errors into ``StoreUnavailable``; let everything else through."""
    try:
        yield
    except StoreUnavailable:
        raise
    except _UNAVAILABLE as exc:
        raise StoreUnavailable(f"postgres: {what}: {type(exc).__name__}: {exc}") from exc
    except asyncpg.exceptions.InterfaceError as exc:
        # "connection is closed" / "pool is closing": the socket went away under us.
        if "closed" not in str(exc) and "closing" not in str(exc):
            raise
        raise StoreUnavailable(f"postgres: {what}: {type(exc).__name__}: {exc}") from exc


class PostgresEvidence:
    """The Postgres half of the evidence port.

    Build it with ``async with PostgresEvidence.connect(settings) as pg``. The pool connects
    lazily and replaces dead connections on acquire, so it outlives a Postgres restart.
    """

    def __init__(self, pool: Any, settings: Settings) -> None:
        self._pool = pool
        self._timeout = settings.store_timeout_s
        self._tables = {
            EvidenceKind.OBS: settings.observations_table,
            EvidenceKind.EVT: settings.events_table,
        }
        self._select = {
            kind: (
                f"SELECT id, acl, revoked_at, summary FROM {quote_identifier(table)}"  # noqa: S608 - validated, quoted identifier
                " WHERE tenant_id = $1 AND id = ANY($2::bigint[])"
            )
            for kind, table in self._tables.items()
        }
        # Several tenants: the pairs join the table on both columns of its (tenant_id, id) match.
        self._select_pairs = {
            kind: (
                f"SELECT e.tenant_id, e.id, e.acl, e.revoked_at, e.summary"  # noqa: S608 - validated, quoted identifier
                f" FROM {quote_identifier(table)} AS e"
                " JOIN unnest($1::text[], $2::bigint[]) AS w(tenant_id, id)"
                " ON e.tenant_id = w.tenant_id AND e.id = w.id"
            )
            for kind, table in self._tables.items()
        }

    @classmethod
    @asynccontextmanager
    async def connect(
        cls, settings: Settings, *, init: ConnectionInit | None = None
    ) -> AsyncIterator[PostgresEvidence]:
        """Open the pool (no connection yet: a worker may start while Postgres is down)."""
        async with open_pool(settings, init=init) as pool:
            yield cls(pool, settings)

    @property
    def pool(self) -> Any:
        """The asyncpg pool, for the migration runner and the demo seeder."""
        return self._pool

    async def fetch_batch(self, wanted: Wanted) -> Found:
        """Records of each tenant among its OBS and EVT refs (other kinds are ignored): one query
        per table in all."""
        found: dict[str, dict[CitationRef, EvidenceRecord]] = {t: {} for t in wanted}
        queries = []
        for kind in self._tables:
            pairs = [(t, i) for t, refs in wanted.items() for i in queryable_ids(refs, kind)]
            if pairs:
                queries.append(self._fetch_table(kind, pairs))
        for part in await gather_all(*queries):
            for tenant, record in part:
                found[tenant][record.ref] = record
        return dict(found)

    async def _fetch_table(
        self, kind: EvidenceKind, pairs: list[tuple[str, int]]
    ) -> list[tuple[str, EvidenceRecord]]:
        table = self._tables[kind]
        tenants = sorted({t for t, _ in pairs})
        if len(tenants) == 1:
            tenant, ids = tenants[0], [i for _, i in pairs]
            rows = await self._run(
                f"select from {table}", lambda conn: conn.fetch(self._select[kind], tenant, ids)
            )
            return [(tenant, parse_sql_row(table, kind, row)) for row in rows]
        rows = await self._run(
            f"select from {table}",
            lambda conn: conn.fetch(
                self._select_pairs[kind], [t for t, _ in pairs], [i for _, i in pairs]
            ),
        )
        return [(row["tenant_id"], parse_sql_row(table, kind, row)) for row in rows]

    async def _run(self, what: str, statement: Callable[[Any], Awaitable[T]]) -> T:
        """Run ``statement`` on a pooled connection, bounded by the store timeout."""
        return await run_pooled(self._pool, self._timeout, what, statement)


@asynccontextmanager
async def open_pool(
    settings: Settings, *, init: ConnectionInit | None = None
) -> AsyncIterator[Any]:
    """An asyncpg pool that connects lazily (a worker may start while Postgres is down)."""
    with _store_faults("create pool"):
        pool = await asyncpg.create_pool(
            settings.postgres_dsn.get_secret_value(),
            min_size=0,
            max_size=settings.postgres_pool_size,
            timeout=settings.store_timeout_s,  # connect timeout: fail fast during an outage
            command_timeout=settings.store_timeout_s,
            init=init,
            server_settings={"application_name": settings.app_id},
        )
    try:
        yield pool
    finally:
        try:
            await within(settings.store_timeout_s, pool.close(), what="close pool")
        except (TimeoutError, OSError, asyncpg.exceptions.PostgresError):
            pool.terminate()


async def run_pooled(
    pool: Any, limit_s: float, what: str, statement: Callable[[Any], Awaitable[T]]
) -> T:
    """Run ``statement`` on a connection of ``pool``, bounded by ``limit_s``; faults translated."""
    with _store_faults(what):
        return await within(limit_s, _on_connection(pool, statement), what=what)


async def _on_connection(pool: Any, statement: Callable[[Any], Awaitable[T]]) -> T:
    async with pool.acquire() as conn:
        try:
            return await statement(conn)
        except (
            asyncpg.exceptions.InterfaceError,
            asyncpg.exceptions.InternalClientError,
        ) as exc:
            # A server that shut down while the connection sat idle leaves it half-open:
            # asyncpg notices only when the next statement fails, with a client-side error
            # ("another operation is in progress"). Closed now: an outage, not a bug.
            if conn.is_closed():
                raise _ConnectionLost(f"{type(exc).__name__}: {exc}") from exc
            raise
