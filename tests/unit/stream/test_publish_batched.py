"""``BatchProcessor._publish`` over a bulk publisher (``GW_PRODUCE_BATCHED``): the same retry and
fault rules as the per-record hand-over, with in-memory publishers (no Kafka here; the bulk
hand-over against the broker is tests/integration/test_batched_produce.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence

import pytest
from test_pipeline import DANGLING, GOOD, RECORDS, processor, rec

from worker.core.ports import InMemoryEvidenceStore
from worker.faults import BrokerUnavailable, PoisonFault
from worker.kafka.records import Headers, OutRecord
from worker.stream.ports import BulkPublisher


class Bulk:
    """A bulk publisher that refuses chosen values on their first hand-over(s)."""

    def __init__(self, unavailable: dict[bytes, int] | None = None, poison: bytes = b"") -> None:
        self.unavailable = dict(unavailable or {})
        self.poison = poison
        self.hand_overs: list[list[bytes]] = []
        self.routes: list[list[tuple[str, bytes | None]]] = []
        self.single: list[bytes] = []

    async def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes,
        headers: Headers,
        partition: int | None = None,
    ) -> Awaitable[object]:
        self.single.append(value)
        done: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    async def send_many(self, records: Sequence[OutRecord]) -> list[asyncio.Future[object]]:
        self.hand_overs.append([r[2] for r in records])
        self.routes.append([(r[0].split(".")[-1], r[1]) for r in records])
        loop = asyncio.get_running_loop()
        out: list[asyncio.Future[object]] = []
        for _, _, value, _, _ in records:
            fut: asyncio.Future[object] = loop.create_future()
            if self.unavailable.get(value, 0) > 0:
                self.unavailable[value] -= 1
                fut.set_exception(BrokerUnavailable("broker unavailable: KafkaTimeoutError"))
            elif value == self.poison:
                fut.set_exception(PoisonFault("broker refused the record: MessageSizeTooLarge"))
            else:
                fut.set_result(None)
            out.append(fut)
        return out


def out(*values: bytes) -> list[OutRecord]:
    return [OutRecord("gw.out", b"k", v, (), None) for v in values]


def test_the_fake_is_a_bulk_publisher() -> None:
    assert isinstance(Bulk(), BulkPublisher)


async def test_only_the_records_that_failed_are_handed_over_again_in_order() -> None:
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS))
    bulk = Bulk(unavailable={b"b": 2, b"d": 1})
    proc._publisher = bulk
    await proc._publish(out(b"a", b"b", b"c", b"d", b"e"))
    assert bulk.hand_overs == [[b"a", b"b", b"c", b"d", b"e"], [b"b", b"d"], [b"b"]]
    assert bulk.single == []


async def test_a_refused_record_raises_its_poison_fault() -> None:
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS))
    proc._publisher = Bulk(poison=b"c")
    with pytest.raises(PoisonFault, match="MessageSizeTooLarge"):
        await proc._publish(out(b"a", b"b", b"c", b"d"))


async def test_the_setting_off_keeps_the_per_record_hand_over() -> None:
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS), produce_batched=False)
    bulk = Bulk()
    proc._publisher = bulk
    await proc._publish(out(b"a", b"b"))
    assert (bulk.single, bulk.hand_overs) == ([b"a", b"b"], [])


async def test_a_batch_s_outputs_go_over_in_one_hand_over_in_decision_order() -> None:
    """A turn's regenerate request must not overtake its terminal event on the partition."""
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS))
    bulk = Bulk()
    proc._publisher = bulk
    await proc.process([rec("t-a", DANGLING), rec("t-a", GOOD, attempt=1)])
    assert bulk.routes == [
        [("regenerate", b"t-a"), ("ledger", b"t-a"), ("validated", b"t-a"), ("ledger", b"t-a")]
    ]
    assert bulk.single == []
