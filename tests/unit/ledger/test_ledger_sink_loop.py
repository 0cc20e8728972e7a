"""The ledger sink's loop over an injected consumer: rows are written before their offsets are
committed, a store outage is waited out (never skipped), and an unreadable batch is skipped.

In-memory fakes of the consumer and the writer: this tests the loop's order of steps, not Kafka
(``tests/integration/test_ledger_sink_cli.py`` runs the sink against the real broker).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import orjson

from worker.faults import StoreUnavailable
from worker.ledger.sink import LedgerSink
from worker.runtime.metrics import Metrics
from worker.settings import Settings
from worker.stores.ledger_rows import LedgerRecord

FAST = Settings(retry_initial_backoff_s=0.001, retry_max_backoff_s=0.001)


class Rec(NamedTuple):
    partition: int
    offset: int
    value: bytes | None


def _batch(turn: str, *source_ids: int) -> bytes:
    return orjson.dumps(
        {
            "schema_version": 1, "event_id": f"ev-{turn}", "turn_id": turn,
            "draft_id": f"{turn}-d0", "attempt": 0, "tenant_id": "acme",
            "outcome": "grounded", "policy_version": "default-1",
            "rows": [
                {"kind": "OBS", "source_id": str(i), "resolution": "resolved",
                 "paths": ["answer_markdown"]}
                for i in source_ids
            ],
        }
    )  # fmt: skip


class Log:
    def __init__(self) -> None:
        self.steps: list[str] = []


class FakeConsumer:
    """Hands out the given fetches one per call, then asks the sink to stop."""

    def __init__(self, log: Log, fetches: list[dict[int, list[Rec]]]) -> None:
        self.log = log
        self.fetches = fetches
        self.sink: LedgerSink | None = None

    async def getmany(self, *, timeout_ms: int, max_records: int) -> dict[Any, list[Any]]:
        if not self.fetches:
            assert self.sink is not None
            self.sink.stop()
            return {}
        fetched = self.fetches.pop(0)
        self.log.steps.append(f"fetch {sum(len(r) for r in fetched.values())}")
        return dict(fetched)

    async def commit(self) -> None:
        self.log.steps.append("commit")


class FlakyWriter:
    """Unavailable for the first ``down`` calls, then stores every row."""

    def __init__(self, log: Log, down: int = 0) -> None:
        self.log = log
        self.down = down
        self.rows: list[tuple[str, int]] = []

    async def write_ledger(self, rows: Sequence[LedgerRecord]) -> None:
        if self.down:
            self.down -= 1
            self.log.steps.append("write failed")
            raise StoreUnavailable("postgres: down")
        self.log.steps.append(f"write {len(rows)}")
        self.rows.extend((r.turn_id, r.source_id) for r in rows)


async def _run(writer: FlakyWriter, consumer: FakeConsumer) -> LedgerSink:
    sink = LedgerSink(FAST, writer, Metrics(), consumer)
    consumer.sink = sink
    await sink.run()
    return sink


async def test_rows_are_written_before_their_offsets_are_committed() -> None:
    log = Log()
    consumer = FakeConsumer(
        log, [{0: [Rec(0, 7, _batch("t-1", 1001, 1002))], 1: [Rec(1, 3, _batch("t-2", 5))]}]
    )
    writer = FlakyWriter(log)
    await _run(writer, consumer)
    assert log.steps == ["fetch 2", "write 3", "commit"]
    assert writer.rows == [("t-1", 1001), ("t-1", 1002), ("t-2", 5)]


async def test_a_store_outage_is_waited_out_and_nothing_is_committed_meanwhile() -> None:
    log = Log()
    consumer = FakeConsumer(log, [{0: [Rec(0, 0, _batch("t-1", 1001))]}])
    writer = FlakyWriter(log, down=2)
    await _run(writer, consumer)
    assert log.steps == ["fetch 1", "write failed", "write failed", "write 1", "commit"]
    assert writer.rows == [("t-1", 1001)]


async def test_an_unreadable_batch_is_skipped_and_the_others_written() -> None:
    log = Log()
    consumer = FakeConsumer(
        log, [{0: [Rec(0, 0, b"not json"), Rec(0, 1, None), Rec(0, 2, _batch("t-3", 9))]}]
    )
    writer = FlakyWriter(log)
    await _run(writer, consumer)
    assert log.steps == ["fetch 3", "write 1", "commit"]
    assert writer.rows == [("t-3", 9)]
