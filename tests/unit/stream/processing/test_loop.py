"""The agent body (``worker.stream.processing.loop``) with in-memory seams: the pipeline of
``test_pipeline`` (evidence, turns and outputs in dicts and lists), and small fakes of the
consumer's assignment, the batch intake and the offset probe.

No Kafka here: these pin the loop's state transitions (first batch, rebalance, gap, a batch that
fails as a whole) and the deadline tick's (rebuild, expiry cadence). The real broker runs them
in tests/e2e (test_restart, test_deadlines, test_outage).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Collection, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from test_pipeline import GOOD, RECORDS, Sent, processor, rec

from worker.core.evidence_store import InMemoryEvidenceStore
from worker.core.messages.records import Incoming, OutRecord
from worker.core.turns.control import ControlKind, control_record
from worker.faults import PoisonFault
from worker.runtime.metrics import Metrics
from worker.stream.processing.collector import BatchCollector
from worker.stream.processing.loop import (
    EXPIRY_CHECK_EVERY_S,
    DraftLoop,
    LoopState,
    StartOffsets,
    send_due_controls,
)
from worker.stream.processing.pipeline import BatchProcessor

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


class Assignment:
    """The consumer's assignment: owned partitions, a generation, and the seeks asked for."""

    def __init__(self, owned: Collection[int] = (0, 1), generation: int = 1) -> None:
        self.owned_now = frozenset(owned)
        self.generation_now = generation
        self.seeks: list[tuple[int, int]] = []

    def owned(self) -> frozenset[int]:
        return self.owned_now

    def generation(self) -> int:
        return self.generation_now

    async def seek(self, partition: int, offset: int) -> None:
        self.seeks.append((partition, offset))


class Intake:
    """What the loop asked the batch source to leave unacknowledged or drop."""

    def __init__(self) -> None:
        self.left: set[int] = set()
        self.discarded: list[int] = []

    def leave(self, partitions: set[int]) -> None:
        self.left |= partitions

    def discard(self, partition: int) -> int:
        self.discarded.append(partition)
        return 0


class Probe:
    """Committed offsets by partition (0 when not given); counts the questions."""

    def __init__(self, committed: Mapping[int, int] | None = None) -> None:
        self.committed = dict(committed or {})
        self.asked: list[set[int]] = []

    async def starts(self, partitions: Collection[int]) -> Mapping[int, int]:
        self.asked.append(set(partitions))
        return {p: self.committed.get(p, 0) for p in partitions}


class Harness:
    def __init__(
        self,
        proc: BatchProcessor,
        sent: Sent,
        *,
        assignment: Assignment | None = None,
        probe: Probe | None = None,
        collector: BatchCollector | None = None,
        look_ahead: bool = False,
    ) -> None:
        self.proc, self.sent = proc, sent
        self.assignment = assignment or Assignment()
        self.probe = probe or Probe()
        self.intake = Intake()
        self.opened = 0
        #: The collector the loop handed to each opening of the adapters.
        self.handed: list[BatchCollector] = []
        self.state = LoopState(started=0.0)
        self.metrics = Metrics()
        self.loop = DraftLoop(
            self.state,
            self.assignment,
            self.open,
            self.metrics,
            dead_letter_retry_s=0.0,
            collector=collector,
            look_ahead=look_ahead,
        )

    async def open(self, collector: BatchCollector) -> tuple[BatchProcessor, StartOffsets | None]:
        self.opened += 1
        self.handed.append(collector)
        return self.proc, self.probe

    async def take(self, *batch: Incoming) -> None:
        await self.loop.handle(list(batch), self.intake)

    def decided(self) -> list[bytes | None]:
        """Keys of the turns that got an output (ledger records left out)."""
        return [k for t, k, _, _, _ in self.sent.records if not t.endswith("ledger")]


def at(record: Incoming, offset: int) -> Incoming:
    return record._replace(offset=offset)


def harness(store: InMemoryEvidenceStore | None = None, **kw: Any) -> Harness:
    proc, _, sent = processor(store or InMemoryEvidenceStore(RECORDS))
    return Harness(proc, sent, **kw)


@pytest.mark.parametrize("look_ahead", [True, False])
async def test_a_complete_next_batch_is_read_ahead_when_enabled(look_ahead: bool) -> None:
    store = InMemoryEvidenceStore(RECORDS)
    h = harness(store, look_ahead=look_ahead)
    first, second, third = (at(rec(f"t-{i}", GOOD), i) for i in range(3))
    h.loop.next_batch_complete([second, third])  # before the adapters opened: nothing to do
    await h.take(first)
    h.loop.next_batch_complete([second, third])  # the take's buffer filled meanwhile
    await asyncio.sleep(0.01)  # a look-ahead runs while the loop waits
    assert len(store.batches) == (2 if look_ahead else 1)
    await h.take(second, third)
    assert h.decided() == [b"t-0", b"t-1", b"t-2"]
    # One fetch per batch either way: the look-ahead's stands in for the second batch's own.
    assert len(store.batches) == 2
    assert h.metrics.registry.get_sample_value("grounding_batch_processing_seconds_count") == 2


async def test_batches_run_with_the_collector_paused_and_the_start_up_heap_frozen_once() -> None:
    h = harness(collector=BatchCollector(enabled=True))
    collecting_at_send: list[bool] = []
    send = h.sent.send

    async def observed(*args: Any, **kwargs: Any) -> Any:
        collecting_at_send.append(gc.isenabled())
        return await send(*args, **kwargs)

    h.sent.send = observed  # type: ignore[method-assign]
    was = gc.isenabled()
    gc.enable()
    try:
        await h.take(at(rec("t-1", GOOD), 0))
        frozen = gc.get_freeze_count()
        gc.unfreeze()
        await h.take(at(rec("t-2", GOOD), 1))
        assert gc.get_freeze_count() == 0  # settled once, on the first batch only
        assert gc.isenabled()  # back on between batches
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()
    assert frozen > 0
    assert h.decided() == [b"t-1", b"t-2"]
    assert collecting_at_send
    assert not any(collecting_at_send)


async def test_the_adapters_are_opened_with_the_collector_the_batches_pause() -> None:
    """One owner of ``GW_GC_PAUSED_IN_BATCH``: the pipeline's look-ahead is handed the loop's
    collector, not one of its own (``test_lookahead``: it pauses the one handed over)."""
    collector = BatchCollector(enabled=True)
    h = harness(collector=collector)
    await h.take(at(rec("t-1", GOOD), 0))
    await h.take(at(rec("t-2", GOOD), 1))
    assert len(h.handed) == 1
    assert h.handed[0] is collector


async def test_the_first_batch_opens_the_adapters_once_and_every_batch_is_counted() -> None:
    h = harness()
    assert (h.opened, h.state.batches, h.state.generation) == (0, 0, None)
    await h.take(at(rec("t-1", GOOD), 0))
    await h.take(at(rec("t-2", GOOD), 1))
    assert h.opened == 1
    assert h.state.batches == 2
    assert h.state.busy is False
    assert h.state.generation == 1
    assert h.decided() == [b"t-1", b"t-2"]
    assert h.probe.asked == [{0}]  # the start of partition 0 is known after the first batch
    assert h.metrics.registry.get_sample_value("grounding_batch_processing_seconds_count") == 2


async def test_a_rebalance_leaves_the_records_of_lost_partitions_to_their_new_owner() -> None:
    h = harness(assignment=Assignment(owned=(0, 1)), probe=Probe({0: 0, 1: 1}))
    await h.take(at(rec("t-1", GOOD, partition=0), 0), at(rec("t-2", GOOD, partition=1), 0))
    h.assignment.owned_now, h.assignment.generation_now = frozenset({1}), 2
    await h.take(at(rec("t-3", GOOD, partition=0), 1), at(rec("t-4", GOOD, partition=1), 1))
    assert h.intake.left == {0}
    assert h.decided() == [b"t-1", b"t-2", b"t-4"]  # t-3 is neither decided nor acknowledged
    assert h.state.generation == 2
    assert h.probe.asked == [{0, 1}, {1}]  # the guard forgot everything: asked again


async def test_the_first_batch_of_a_generation_is_no_rebalance() -> None:
    h = harness(assignment=Assignment(owned=()))  # nothing owned yet in the assignor's view
    await h.take(at(rec("t-1", GOOD, partition=0), 0))
    assert h.intake.left == set()
    assert h.decided() == [b"t-1"]


async def test_a_gap_is_sought_back_and_nothing_past_it_is_decided() -> None:
    h = harness(probe=Probe({0: 5}))
    await h.take(at(rec("t-1", GOOD, partition=0), 7), at(rec("t-2", GOOD, partition=1), 0))
    assert h.assignment.seeks == [(0, 5)]
    assert h.intake.discarded == [0]
    assert h.decided() == [b"t-2"]


async def test_a_failing_offset_guard_decides_the_whole_batch_rather_than_lose_it() -> None:
    class Broken(Assignment):
        def generation(self) -> int:
            raise RuntimeError("no generation")

    h = harness(assignment=Broken())
    await h.take(at(rec("t-1", GOOD), 0), at(rec("t-2", GOOD), 1))
    assert h.decided() == [b"t-1", b"t-2"]
    assert h.state.batches == 1


class Refusing(Sent):
    """Refuses the first ``outputs`` hand-overs to ``answers.validated`` and the first
    ``letters`` to the DLQ with a non-retriable fault: the batch fails as a whole."""

    def __init__(self, outputs: int, letters: int) -> None:
        super().__init__()
        self.refuse = {"answers.validated": outputs, "agent.drafts.dlq": letters}

    async def send(self, record: OutRecord) -> Awaitable[object]:
        if self.refuse.get(record.topic, 0) > 0:
            self.refuse[record.topic] -= 1
            raise PoisonFault("broker refused the record: RecordTooLargeError")
        return await super().send(record)


@pytest.mark.parametrize("dlq_refusals", [0, 2])
async def test_a_batch_that_fails_as_a_whole_is_dead_lettered_through_the_pipeline(
    dlq_refusals: int,
) -> None:
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS))
    sent = Refusing(outputs=1, letters=dlq_refusals)
    proc._publisher = sent
    h = Harness(proc, sent)
    await h.take(at(rec("t-1", GOOD), 0), at(rec("t-2", GOOD), 1))
    letters = [(t, k, dict(hs)) for t, k, _, hs, _ in sent.records if t == "agent.drafts.dlq"]
    assert [(t, k) for t, k, _ in letters] == [
        ("agent.drafts.dlq", b"t-1"),
        ("agent.drafts.dlq", b"t-2"),
    ]
    for _, _, headers in letters:
        assert headers["dlq.error.class"] == b"internal_error"
        assert headers["dlq.error.message"] == b"internal error: PoisonFault"
        assert headers["dlq.failed_at"] == str(int(NOW.timestamp() * 1000)).encode()
        assert headers["dlq.original.topic"] == b"agent.drafts"
    # Counted like any dead letter (the pipeline's metrics), each attempt of the batch.
    assert proc._metrics.registry.get_sample_value(
        "grounding_dead_letters_total", {"error_class": "internal_error"}
    ) == 2 * (1 + dlq_refusals)
    assert h.state.batches == 1
    assert h.state.busy is False


# --- the deadline tick ----------------------------------------------------------------------------


class Scanner:
    """Records how it was asked; returns the records it is given."""

    def __init__(self, records: list[OutRecord] | None = None) -> None:
        self.records = records or []
        self.calls: list[tuple[set[int], bool, bool]] = []

    def due(
        self, now: datetime, owned: set[int], *, rebuild: bool = False, expire: bool = False
    ) -> list[OutRecord]:
        self.calls.append((owned, rebuild, expire))
        return self.records


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


async def tick(
    state: LoopState, scanner: Scanner, owned: Collection[int], clock: Clock, sent: Sent
) -> None:
    await send_due_controls(
        state,
        owned=frozenset(owned),
        scanner=scanner,
        publisher=sent,
        now=NOW,
        monotonic=clock,
    )


async def test_the_tick_rebuilds_after_a_recovery_or_a_new_assignment_only() -> None:
    state, scanner, clock, sent = LoopState(started=0.0), Scanner(), Clock(1000.0), Sent()
    await tick(state, scanner, (), clock, sent)
    assert scanner.calls == []  # nothing owned: nothing asked, nothing forgotten
    state.recovered = True
    await tick(state, scanner, (), clock, sent)
    assert (scanner.calls, state.recovered) == ([], True)
    await tick(state, scanner, (0, 1), clock, sent)
    clock.t += 1
    await tick(state, scanner, (0, 1), clock, sent)
    clock.t += 1
    await tick(state, scanner, (1,), clock, sent)
    state.recovered = True
    clock.t += 1
    await tick(state, scanner, (1,), clock, sent)
    assert [(owned, rebuild) for owned, rebuild, _ in scanner.calls] == [
        ({0, 1}, True),
        ({0, 1}, False),
        ({1}, True),
        ({1}, True),
    ]
    assert state.recovered is False
    assert state.owned == frozenset({1})


async def test_the_tick_looks_for_expired_turns_every_thirty_seconds() -> None:
    state, scanner, clock, sent = LoopState(started=0.0), Scanner(), Clock(1000.0), Sent()
    for step in (0.0, 1.0, EXPIRY_CHECK_EVERY_S - 2.0, 1.0, 1.0):
        clock.t += step
        await tick(state, scanner, (0,), clock, sent)
    assert [expire for _, _, expire in scanner.calls] == [True, False, False, True, False]


async def test_the_tick_appends_due_controls_to_their_partition_and_survives_a_refusal() -> None:
    due = [
        control_record(ControlKind.REGENERATION_DEADLINE, "t-1", 0, NOW),
        control_record(ControlKind.EXPIRE_TURN, "t-2", 1, NOW),
    ]

    class RefuseFirst(Sent):
        def __init__(self) -> None:
            super().__init__()
            self.refused = False
            self.partitions: list[int | None] = []

        async def send(self, record: OutRecord) -> Awaitable[object]:
            if not self.refused:
                self.refused = True
                raise PoisonFault("broker refused the record")
            self.partitions.append(record.partition)
            return await super().send(record)

    sent = RefuseFirst()
    await tick(LoopState(started=0.0), Scanner(due), (0, 1), Clock(1000.0), sent)
    assert [(t, k, dict(h)) for t, k, _, h, _ in sent.records] == [
        ("agent.drafts", b"t-2", {"gw.control": b"expire_turn"}),
    ]
    assert sent.partitions == [1]
