"""The ledger sink: ``citations.ledger`` into Postgres ``citation_ledger``, apart from verdicts.

It reads through a consumer of its own consumer group, given to it (``worker.ledger.main`` builds
it), so a Postgres outage stalls only the sink: it retries with capped backoff, forever, and
commits a batch's offsets only after its rows are written. The insert ignores rows already
present (unique on tenant, turn, draft, kind, source id), so a batch published twice, or re-read
after a crash, adds nothing. A ledger outage therefore never blocks or changes a verdict
(contract §6).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial
from typing import Any, Protocol

import orjson
import structlog
from aiokafka.errors import KafkaError
from pydantic import ValidationError

from worker.faults import PoisonFault, RetriableFault
from worker.ledger.message import ledger_rows
from worker.runtime.metrics import Metrics
from worker.runtime.retry import backoff_delays, half_jitter, with_retries
from worker.settings import Settings
from worker.stores.ledger_rows import LedgerRecord, LedgerRow

#: What the writer takes: the sink's own decoded rows, or validated records built elsewhere.
Row = LedgerRow | LedgerRecord

log = structlog.get_logger("worker.ledger_sink")


class LedgerWriter(Protocol):
    """Where ledger rows go (``worker.stores.ledger.PostgresLedger``)."""

    async def write_ledger(self, rows: Sequence[Row]) -> None:
        """Insert rows idempotently."""
        ...


class LedgerConsumer(Protocol):
    """The part of a started aiokafka consumer the sink uses (subscribed to the ledger topic)."""

    async def getmany(self, *, timeout_ms: int, max_records: int) -> dict[Any, list[Any]]:
        """Fetched records by partition; empty when none arrived within ``timeout_ms``."""
        ...

    async def commit(self) -> None:
        """Commit the offsets of everything fetched so far."""
        ...


class LedgerSink:
    """Consumes ledger batches and writes their rows; one instance per process."""

    def __init__(
        self, settings: Settings, writer: LedgerWriter, metrics: Metrics, consumer: LedgerConsumer
    ) -> None:
        self._writer = writer
        self._consumer = consumer
        self._metrics = metrics
        self._delay = backoff_delays(
            settings.retry_initial_backoff_s, settings.retry_max_backoff_s, jitter=half_jitter
        )
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """Ask :meth:`run` to return after the batch in hand."""
        self._stopping.set()

    async def run(self) -> None:
        """Consume until :meth:`stop`; never commits past rows not yet written."""
        while not self._stopping.is_set():
            batches = await self._consumer.getmany(timeout_ms=500, max_records=500)
            if not batches:
                continue
            rows: list[Row] = []
            for records in batches.values():
                for rec in records:
                    rows.extend(self._decode(rec.value, rec.partition, rec.offset))
            await self._write(rows)
            await self._commit(self._consumer)

    @staticmethod
    async def _commit(consumer: LedgerConsumer) -> None:
        """Commit what was written; a commit that fails is not an error.

        When the sink's group rebalances between a fetch and its commit (a worker joining or
        leaving), or the broker is away, the commit fails; the rows are written already, and
        whoever owns the partition next reads them again from the last commit and inserts
        nothing new. Raising here used to stop the whole worker process (found by
        scripts/chaos, scenario 4: CommitFailedError in a rebalance storm).
        """
        try:
            await consumer.commit()
        except KafkaError as exc:
            log.warning("ledger.commit_skipped", error=type(exc).__name__)

    def _decode(self, value: bytes | None, partition: int, offset: int) -> list[LedgerRow]:
        try:
            return ledger_rows(value or b"")
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, ValidationError):
            # Our own output, so this is a bug; skipping keeps the ledger flowing and is loud.
            log.error("ledger.unreadable_batch", partition=partition, offset=offset)  # noqa: TRY400
            return []

    async def _write(self, rows: list[Row]) -> None:
        def on_retry(n: int, fault: RetriableFault, wait: float) -> None:
            log.warning("ledger.retry", attempt=n, fault=type(fault).__name__, wait_s=wait)

        async def op(part: Sequence[Row] = rows) -> None:
            await self._writer.write_ledger(part)

        try:
            await with_retries(op, budget=None, delay=self._delay, on_retry=on_retry)
        except PoisonFault:
            # Some row can never be stored: write the rows one by one and skip those rejected,
            # so one bad row neither stops the sink (nor the worker) nor costs the others.
            written = 0
            for row in rows:
                try:
                    await with_retries(
                        partial(op, [row]), budget=None, delay=self._delay, on_retry=on_retry
                    )
                    written += 1
                except PoisonFault as exc:
                    log.error(  # noqa: TRY400 - the message names the class; no row content
                        "ledger.row_rejected",
                        tenant_id=row.tenant_id,
                        turn_id=row.turn_id,
                        draft_id=row.draft_id,
                        error=str(exc),
                    )
            self._metrics.ledger_rows.inc(written)
            return
        self._metrics.ledger_rows.inc(len(rows))
