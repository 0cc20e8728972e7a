"""The shared in-memory publisher and turn store (``worker/stream/memory.py``) keep what they are
given and fail where they are told to."""

from __future__ import annotations

import pytest

from worker.core.messages.records import OutRecord
from worker.core.turns.machine import TurnPhase, TurnState
from worker.faults import BrokerUnavailable, PoisonFault
from worker.stream.memory import MemoryBulkPublisher, MemoryPublisher, MemoryTurns
from worker.stream.seams import BulkPublisher, StoredTurn


async def test_the_publisher_keeps_records_in_order_and_acknowledges_them() -> None:
    pub = MemoryPublisher()
    ack = await pub.send(OutRecord("t.a", b"k1", b"v1", (("h", b"x"),), 2))
    await pub.send(OutRecord("t.b", None, b"v2", ()))
    assert await ack is None
    assert pub.records == [
        OutRecord("t.a", b"k1", b"v1", (("h", b"x"),), 2),
        OutRecord("t.b", None, b"v2", (), None),
    ]
    assert pub.values("t.b") == [b"v2"]
    assert not isinstance(pub, BulkPublisher)


async def test_the_bulk_publisher_fails_chosen_values_and_keeps_the_rest() -> None:
    pub = MemoryBulkPublisher(unavailable={b"b": 1}, poison=b"c")
    assert isinstance(pub, BulkPublisher)
    futures = await pub.send_many(
        [OutRecord("t", b"k", b"a"), OutRecord("t", b"k", b"b"), OutRecord("t", b"k", b"c", (), 1)]
    )
    assert futures[0].result() is None
    assert isinstance(futures[1].exception(), BrokerUnavailable)
    assert isinstance(futures[2].exception(), PoisonFault)
    again = await pub.send_many([OutRecord("t", b"k", b"b")])
    assert again[0].result() is None
    assert [r.value for r in pub.records] == [b"a", b"b"]
    assert [[r.value for r in h] for h in pub.hand_overs] == [[b"a", b"b", b"c"], [b"b"]]
    assert pub.singles == []


def test_turns_survive_the_table_encoding_and_poison_ids_raise() -> None:
    turns = MemoryTurns(poison={"t-bad"})
    state = TurnState(
        phase=TurnPhase.REGENERATING,
        turn_id="t-1",
        tenant_id="acme",
        user_id="u-1",
        groups=("g",),
        policy_version="p",
        first_draft_id="d-0",
        first_attempt=0,
        kind="answer",
    )
    turns.put("t-1", 3, state)
    assert turns.get("t-1") == StoredTurn(state, 3)
    assert turns.turns == {"t-1": StoredTurn(state, 3)}
    assert isinstance(turns.raw["t-1"], bytes)
    turns.delete("t-1", 3)
    assert turns.get("t-1") is None
    with pytest.raises(KeyError):
        turns.get("t-bad")
