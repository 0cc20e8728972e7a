"""Reads done ahead for the next batch: used for its records, per tenant, dropped on faults."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator, Sequence

from test_pipeline import GOOD, RECORDS, DownStore, processor, rec

from worker.core.citations.evidence import CitationRef, EvidenceRecord
from worker.core.evidence_store import Found, InMemoryEvidenceStore, Wanted
from worker.stream.intake.lookahead import Lookahead, merged
from worker.stream.processing.collector import BatchCollector
from worker.stream.processing.resolve import Resolved


async def test_a_batch_read_ahead_is_decided_without_a_fetch_of_its_own() -> None:
    store = InMemoryEvidenceStore(RECORDS)
    proc, _, sent = processor(store)
    first, second = rec("t-1", GOOD), rec("t-2", GOOD)
    proc.look_ahead([second])  # the take's buffer filled while the first batch is decided
    await proc.process([first])
    assert store.batches == [("acme",), ("acme",)]  # the look-ahead's and the first batch's
    report = await proc.process([second])
    assert store.batches == [("acme",), ("acme",)]  # nothing more: the look-ahead's evidence
    assert report.store_fetches == 1
    assert [v["turn_id"] for v in sent.on("validated")] == ["t-1", "t-2"]


async def test_records_not_read_ahead_are_read_then_and_each_tenant_keeps_its_own_evidence() -> (
    None
):
    """acme's OBS-1 exists; globex cites the same id, which globex does not have: dangling."""
    store = InMemoryEvidenceStore(RECORDS)
    proc, _, sent = processor(store)
    ahead, later = rec("t-a", GOOD), rec("t-g", GOOD, tenant="globex")
    proc.look_ahead([ahead])
    report = await proc.process([ahead, later])
    assert store.batches == [("acme",), ("globex",)]
    assert report.store_fetches == 2
    assert [v["turn_id"] for v in sent.on("validated")] == ["t-a"]
    (regenerate,) = sent.on("regenerate")
    assert regenerate["turn_id"] == "t-g"
    assert [f["code"] for f in regenerate["reasons"]] == ["dangling_citation"]


async def test_records_read_ahead_but_never_handed_out_are_left_unused() -> None:
    store = InMemoryEvidenceStore(RECORDS)
    proc, _, sent = processor(store)
    proc.look_ahead([rec("t-never", GOOD)])
    await proc.process([rec("t-1", GOOD)])
    assert [v["turn_id"] for v in sent.on("validated")] == ["t-1"]
    assert store.batches == [("acme",), ("acme",)]


async def test_a_look_ahead_that_met_an_outage_is_dropped_and_the_batch_reads_again() -> None:
    """Budget 0: the look-ahead finds the store down and gives up; that is never a verdict."""
    store = DownStore(failures=1)
    proc, _, sent = processor(store, retry_budget=0)
    first = rec("t-1", GOOD)
    proc.look_ahead([first])
    await asyncio.sleep(0.01)  # the look-ahead runs (and fails) before the batch comes
    report = await proc.process([first])
    assert store.calls == 2
    assert report.store_fetches == 1  # the batch's own
    assert dict(report.dead_letters) == {}
    assert [v["turn_id"] for v in sent.on("validated")] == ["t-1"]


class Gate:
    """A store whose reads wait until the gate opens; counts the reads that finished."""

    def __init__(self) -> None:
        self.inner = InMemoryEvidenceStore(RECORDS)
        self.open = asyncio.Event()
        self.started = 0
        self.finished = 0

    async def fetch_batch(self, wanted: Wanted) -> Found:
        for _ in wanted:  # each tenant's look-up waits for the gate
            self.started += 1
            await self.open.wait()
            self.finished += 1
        return await self.inner.fetch_batch(wanted)


async def test_close_drops_a_look_ahead_in_flight() -> None:
    store = Gate()
    proc, _, _ = processor(store)
    proc.look_ahead([rec("t-1", GOOD)])
    for _ in range(5):
        await asyncio.sleep(0)
    assert store.started == 1
    proc.close()
    store.open.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert store.finished == 0


def test_evidence_of_two_fetches_merges_per_tenant_only() -> None:
    one, two = (
        EvidenceRecord(ref=CitationRef(r.ref.kind, i), acl=None, text="t")
        for i, r in ((1, RECORDS["acme"][0]), (2, RECORDS["acme"][0]))
    )
    out = merged({"acme": {one.ref: one}}, {"acme": {two.ref: two}, "globex": {}})
    assert out == {"acme": {one.ref: one, two.ref: two}, "globex": {}}


async def test_a_look_ahead_admits_with_automatic_collection_off_when_no_batch_is_in_flight() -> (
    None
):
    """The batch pauses the collector (``GW_GC_PAUSED_IN_BATCH``); a look-ahead that admits
    while no batch runs pauses it for its own steps too, and leaves it on between them."""
    seen: list[bool] = []

    def classify(record: object) -> object:
        seen.append(gc.isenabled())
        return record

    async def resolve(items: Sequence[object]) -> tuple[Resolved, int]:
        seen.append(gc.isenabled())
        return Resolved({}, {}), 0

    ahead: Lookahead[object] = Lookahead(
        classify, resolve, paused=BatchCollector(enabled=True).paused
    )
    assert gc.isenabled()
    first, second = rec("t-1", GOOD), rec("t-2", GOOD)
    ahead.start([first, second])
    assert await ahead.claim([first]) is not None
    assert (seen, gc.isenabled()) == ([False, False, True], True)


class CountingCollector(BatchCollector):
    """A collector that counts the pauses asked of it (and pauses nothing)."""

    def __init__(self) -> None:
        super().__init__(enabled=False)
        self.pauses = 0

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        self.pauses += 1
        yield


async def test_the_pipelines_look_ahead_pauses_the_collector_it_is_handed() -> None:
    """The loop hands the pipeline its own collector (``test_loop``); the look-ahead pauses that
    one, not one built from the settings beside it (``GW_GC_PAUSED_IN_BATCH`` has one owner)."""
    collector = CountingCollector()
    proc, _, sent = processor(InMemoryEvidenceStore(RECORDS), collector=collector)
    first = rec("t-1", GOOD)
    proc.look_ahead([first])
    await proc.process([first])
    assert collector.pauses == 1  # one chunk of admission
    assert [v["turn_id"] for v in sent.on("validated")] == ["t-1"]
