"""``BatchProcessor._publish`` over a bulk publisher (``GW_PRODUCE_BATCHED``): the same retry and
fault rules as the per-record hand-over, with in-memory publishers (no Kafka here; the bulk
hand-over against the broker is tests/integration/test_batched_produce.py)."""

from __future__ import annotations

import pytest
from test_pipeline import DANGLING, GOOD, RECORDS, processor, rec

from worker.core import InMemoryEvidenceStore, OutRecord
from worker.faults import PoisonFault
from worker.stream.memory import MemoryBulkPublisher
from worker.stream.seams import BulkPublisher


def out(*values: bytes) -> list[OutRecord]:
    return [OutRecord("gw.out", b"k", v, (), None) for v in values]


def values(hand_overs: list[list[OutRecord]]) -> list[list[bytes]]:
    return [[r.value for r in records] for records in hand_overs]


def test_the_fake_is_a_bulk_publisher() -> None:
    assert isinstance(MemoryBulkPublisher(), BulkPublisher)


async def test_only_the_records_that_failed_are_handed_over_again_in_order() -> None:
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS))
    bulk = MemoryBulkPublisher(unavailable={b"b": 2, b"d": 1})
    proc._publisher = bulk
    await proc._publish(out(b"a", b"b", b"c", b"d", b"e"))
    assert values(bulk.hand_overs) == [[b"a", b"b", b"c", b"d", b"e"], [b"b", b"d"], [b"b"]]
    assert bulk.singles == []
    assert [r.value for r in bulk.records] == [b"a", b"c", b"e", b"d", b"b"]


async def test_a_refused_record_raises_its_poison_fault() -> None:
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS))
    proc._publisher = MemoryBulkPublisher(poison=b"c")
    with pytest.raises(PoisonFault, match="MessageSizeTooLarge"):
        await proc._publish(out(b"a", b"b", b"c", b"d"))


async def test_the_setting_off_keeps_the_per_record_hand_over() -> None:
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS), produce_batched=False)
    bulk = MemoryBulkPublisher()
    proc._publisher = bulk
    await proc._publish(out(b"a", b"b"))
    assert ([r.value for r in bulk.singles], bulk.hand_overs) == ([b"a", b"b"], [])


async def test_a_batch_s_outputs_go_over_in_one_hand_over_in_decision_order() -> None:
    """A turn's regenerate request must not overtake its terminal event on the partition."""
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS))
    bulk = MemoryBulkPublisher()
    proc._publisher = bulk
    await proc.process([rec("t-a", DANGLING), rec("t-a", GOOD, attempt=1)])
    assert [[(r.topic.split(".")[-1], r.key) for r in h] for h in bulk.hand_overs] == [
        [("regenerate", b"t-a"), ("ledger", b"t-a"), ("validated", b"t-a"), ("ledger", b"t-a")]
    ]
    assert bulk.singles == []
