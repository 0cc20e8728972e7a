"""The ledger sink skips rows Postgres can never store, and keeps the others (found by
scripts/chaos, scenario 5: a draft with ``attempt`` 2^63 is a valid envelope, but its ledger row
does not fit the integer column; the sink raised, the worker crashed, and restarted into the
same batch again)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from worker.core import EvidenceKind, Resolution
from worker.faults import PoisonFault
from worker.ledger.sink import LedgerSink
from worker.runtime.metrics import Metrics
from worker.settings import Settings
from worker.stores.ledger import PostgresLedger
from worker.stores.ledger_rows import LedgerRecord


def _row(draft: str, attempt: int) -> LedgerRecord:
    return LedgerRecord(
        tenant_id="acme", turn_id=f"t-{draft}", draft_id=draft, attempt=attempt,
        outcome="grounded", policy_version="p1", event_id=f"e-{draft}", kind=EvidenceKind.OBS,
        source_id=1001, resolution=Resolution.RESOLVED, paths=("answer_markdown",),
    )  # fmt: skip


class FussyWriter:
    """Rejects any write that contains a row whose attempt does not fit an int4, like Postgres."""

    def __init__(self) -> None:
        self.stored: list[str] = []
        self.calls = 0

    async def write_ledger(self, rows: Sequence[LedgerRecord]) -> None:
        self.calls += 1
        if any(r.attempt > 2**31 - 1 for r in rows):
            raise PoisonFault("postgres: citation_ledger rejected rows: DataError")
        self.stored.extend(r.draft_id for r in rows)


class IdleConsumer:
    """A consumer that never fetches anything (these tests call the write step directly)."""

    async def getmany(self, *, timeout_ms: int, max_records: int) -> dict[Any, list[Any]]:
        return {}

    async def commit(self) -> None:
        raise AssertionError("nothing was fetched, so nothing is committed")


async def test_one_unstorable_row_costs_only_itself() -> None:
    writer = FussyWriter()
    sink = LedgerSink(Settings(), writer, Metrics(), IdleConsumer())
    await sink._write([_row("d-1", 0), _row("d-2", 2**63), _row("d-3", 1)])
    assert writer.stored == ["d-1", "d-3"]


async def test_a_clean_batch_is_written_in_one_call() -> None:
    writer = FussyWriter()
    sink = LedgerSink(Settings(), writer, Metrics(), IdleConsumer())
    await sink._write([_row("d-1", 0), _row("d-2", 1)])
    assert (writer.stored, writer.calls) == (["d-1", "d-2"], 1)


@pytest.mark.parametrize(
    ("field", "value"), [("attempt", 2**64), ("paths", ("answer_markdown", "claims[0].\ud800"))]
)
async def test_a_row_the_insert_cannot_carry_is_poison_before_any_connection(
    field: str, value: Any
) -> None:
    """The writer sends a batch as one JSON parameter: an int past 64 bits or a lone surrogate
    cannot be written, and no retry could change that (the pool is never touched)."""
    writer = PostgresLedger(None, Settings())
    with pytest.raises(PoisonFault, match=r"citation_ledger rejected rows: TypeError"):
        await writer.write_ledger([_row("d-1", 0).model_copy(update={field: value})])
