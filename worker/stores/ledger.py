"""The citation ledger writer: rows into Postgres ``citation_ledger`` (contract §6), idempotently.

Its own pool (the ledger sink runs apart from the evidence look-ups, and may run in a process of
its own), opened and run through the same functions as the evidence adapter, so driver errors
become the same ``worker.faults``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any

import asyncpg

from worker.faults import PoisonFault
from worker.settings import Settings
from worker.stores.identifiers import quote_identifier
from worker.stores.ledger_rows import LedgerRecord
from worker.stores.postgres import open_pool, run_pooled

#: Errors of the rows themselves, not of the server: asyncpg's client-side encoding error
#: (``asyncpg.exceptions._base.DataError``) and SQLSTATE class 22 (``exceptions.DataError``).
_REJECTED_ROWS = (asyncpg.exceptions.DataError, asyncpg.exceptions._base.DataError)


class PostgresLedger:
    """Writes ledger rows. Build it with ``async with PostgresLedger.connect(settings)``."""

    def __init__(self, pool: Any, settings: Settings) -> None:
        self._pool = pool
        self._timeout = settings.store_timeout_s
        self._table = settings.ledger_table
        self._insert = (
            f"INSERT INTO {quote_identifier(settings.ledger_table)}"  # noqa: S608 - validated, quoted identifier
            " (tenant_id, turn_id, draft_id, attempt, outcome, policy_version, event_id,"
            " kind, source_id, resolution, quote_check, paths)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
            " ON CONFLICT (tenant_id, turn_id, draft_id, kind, source_id) DO NOTHING"
        )

    @classmethod
    @asynccontextmanager
    async def connect(cls, settings: Settings) -> AsyncIterator[PostgresLedger]:
        """Open the pool (no connection yet: the sink may start while Postgres is down)."""
        async with open_pool(settings) as pool:
            yield cls(pool, settings)

    @property
    def pool(self) -> Any:
        """The asyncpg pool (tests look at its size)."""
        return self._pool

    async def write_ledger(self, rows: Sequence[LedgerRecord]) -> None:
        """Insert ledger rows; rows already present (a replayed batch) are left alone.

        One prepared statement pipelined over the batch, atomic (asyncpg wraps ``executemany``
        in a transaction), so a failed batch leaves nothing half-written to retry around.
        """
        if not rows:
            return
        args = [
            (
                r.tenant_id,
                r.turn_id,
                r.draft_id,
                r.attempt,
                r.outcome,
                r.policy_version,
                r.event_id,
                r.kind.value,
                Decimal(r.source_id),  # exact: numeric, may exceed a bigint
                r.resolution.value,
                r.quote_check.value,
                list(r.paths),
            )
            for r in rows
        ]
        try:
            await run_pooled(
                self._pool,
                self._timeout,
                f"insert into {self._table}",
                lambda conn: conn.executemany(self._insert, args),
            )
        except _REJECTED_ROWS as exc:
            # Deterministic: the same rows fail the same way on every retry (an attempt past
            # the integer column, a NUL in a path). Named by class only: the message may quote
            # the rejected value.
            rejected = f"{self._table} rejected rows: {type(exc).__name__}"
            raise PoisonFault(f"postgres: {rejected}") from exc
