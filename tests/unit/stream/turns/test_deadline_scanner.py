"""DeadlineScanner over the Faust turn store, with a dict standing in for the table."""

from __future__ import annotations

import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

import cramjam
import orjson
import pytest

from worker.core import Incoming
from worker.core.turns.control import ControlKind, parse_control
from worker.core.turns.machine import TurnPhase, TurnState
from worker.stream.turns.deadlines import DeadlineScanner
from worker.stream.turns.table import FaustTurnStore, decode_turn, encode_turn

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
DAY = 24 * 3600.0


class DictTable:
    """What FaustTurnStore uses of a Faust table: ``data`` and ``send_changelog``."""

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}
        self.changelog: list[tuple[int, bytes, bytes | None]] = []

    def send_changelog(self, partition: int, key: bytes, value: bytes | None, **_: Any) -> None:
        self.changelog.append((partition, key, value))


def state(turn: str, phase: TurnPhase, **fields: Any) -> TurnState:
    return TurnState(
        phase=phase,
        turn_id=turn,
        tenant_id="acme",
        user_id="u-1",
        groups=(),
        policy_version="p",
        first_draft_id=f"{turn}-0",
        first_attempt=0,
        kind="answer",
        **fields,
    )


def regenerating(turn: str, deadline: datetime) -> TurnState:
    return state(turn, TurnPhase.REGENERATING, regenerate_draft_id=f"{turn}-0", deadline=deadline)


def terminal(turn: str, ended_at: datetime) -> TurnState:
    return state(turn, TurnPhase.TERMINAL, ended_at=ended_at)


def scanner(resend_after_s: float = 5.0) -> tuple[DeadlineScanner, FaustTurnStore, DictTable]:
    table = DictTable()
    store = FaustTurnStore(table)
    return DeadlineScanner(store, retention_s=7 * DAY, resend_after_s=resend_after_s), store, table


def kinds(records: list[Any]) -> list[tuple[str, str, int]]:
    out = []
    for r in records:
        control = parse_control(
            Incoming("agent.drafts", r.partition, 0, 0, r.key, r.value, r.headers)
        )
        assert control is not None
        out.append((control.kind.value, control.turn_id, r.partition))
    return out


def test_a_due_regeneration_on_an_owned_partition_gets_one_record() -> None:
    scan, store, _ = scanner()
    store.put("t-due", 1, regenerating("t-due", NOW - timedelta(seconds=1)))
    store.put("t-later", 1, regenerating("t-later", NOW + timedelta(seconds=1)))
    store.put("t-other", 0, regenerating("t-other", NOW - timedelta(seconds=1)))
    assert kinds(scan.due(NOW, {1}, rebuild=False)) == [("regeneration_deadline", "t-due", 1)]


def test_a_record_is_resent_only_after_the_resend_period() -> None:
    scan, store, _ = scanner(resend_after_s=5)
    store.put("t-1", 0, regenerating("t-1", NOW))
    assert len(scan.due(NOW, {0}, rebuild=False)) == 1
    assert scan.due(NOW + timedelta(seconds=4), {0}, rebuild=False) == []
    assert len(scan.due(NOW + timedelta(seconds=5), {0}, rebuild=False)) == 1


def test_a_decided_turn_leaves_the_index() -> None:
    scan, store, _ = scanner()
    store.put("t-1", 0, regenerating("t-1", NOW))
    store.put("t-1", 0, terminal("t-1", NOW))
    assert scan.due(NOW + timedelta(seconds=60), {0}, rebuild=False) == []


def test_a_rebuild_finds_recovered_turns() -> None:
    """State restored from the changelog is in the table but not in the indexes yet."""
    scan, _, table = scanner()
    table.data[b"t-rec"] = encode_turn(1, regenerating("t-rec", NOW - timedelta(seconds=3)))
    table.data[b"t-end"] = encode_turn(1, terminal("t-end", NOW - timedelta(days=8)))
    assert scan.due(NOW, {0, 1}, rebuild=False, expire=True) == []
    assert kinds(scan.due(NOW, {0, 1}, rebuild=True, expire=True)) == [
        ("regeneration_deadline", "t-rec", 1),
        (ControlKind.EXPIRE_TURN.value, "t-end", 1),
    ]


def test_expiry_finds_finished_turns_past_retention_only_without_decoding() -> None:
    scan, store, table = scanner()
    store.put("t-old", 0, terminal("t-old", NOW - timedelta(days=8)))
    store.put("t-new", 0, terminal("t-new", NOW - timedelta(days=6)))
    store.put("t-away", 1, terminal("t-away", NOW - timedelta(days=8)))
    assert scan.due(NOW, {0}) == []
    # The index alone answers: garbage in the table's bytes is never read.
    table.data = dict.fromkeys(table.data, b"not a turn")
    assert kinds(scan.due(NOW, {0}, expire=True)) == [(ControlKind.EXPIRE_TURN.value, "t-old", 0)]


def test_a_deleted_turn_leaves_both_indexes() -> None:
    scan, store, _ = scanner()
    store.put("t-old", 0, terminal("t-old", NOW - timedelta(days=8)))
    store.delete("t-old", 0)
    assert store.ended == {}
    assert scan.due(NOW, {0}, expire=True) == []


def test_the_store_writes_the_changelog_partition_of_the_turn() -> None:
    _, store, table = scanner()
    s = regenerating("t-1", NOW)
    store.put("t-1", 3, s)
    store.delete("t-1", 3)
    assert table.changelog == [(3, b"t-1", encode_turn(3, s)), (3, b"t-1", None)]
    assert decode_turn(encode_turn(3, s)).state == s
    assert store.get("t-1") is None
    assert store.pending == {}


def test_a_turn_value_round_trips_compressed_and_older_values_still_read() -> None:
    s = regenerating("t-1", NOW)
    raw = encode_turn(2, s)
    assert raw[:1] == b"\x02"  # LZ4
    assert decode_turn(raw) == (s, 2)
    legacy = orjson.dumps({"p": 2, "s": orjson.Fragment(s.model_dump_json())})
    assert decode_turn(legacy) == (s, 2)
    assert decode_turn(b"\x01" + zlib.compress(legacy, 1)) == (s, 2)  # written before LZ4


def test_a_recorded_terminal_event_is_stored_compressed() -> None:
    """A state records the messages it may re-publish: kilobytes of JSON, stored far smaller."""
    event = '{"event": "' + "grounded answer text [OBS-1] " * 200 + '"}'
    s = state("t-big", TurnPhase.TERMINAL, ended_at=NOW, terminal_event=event)
    raw = encode_turn(0, s)
    assert len(raw) * 5 < len(s.model_dump_json())
    assert decode_turn(raw).state.terminal_event == event


def test_a_turn_value_keeps_its_json_texts_exactly_and_lz4_json_values_still_read() -> None:
    """Route step: the recorded messages travel raw after the head, byte for byte."""
    request = '{"attempt":1,"note":"caf\u00e9 \\"quoted\\" é 🙂"}'
    ledger = '{"rows":[{"id":"OBS-1"}],"text":"a\\nb"}'
    event = '{"event":"grounded","text":"x \\" y ' + "é" * 50 + '"}'
    cases = [
        state("t-0", TurnPhase.TERMINAL, ended_at=NOW),  # no texts at all
        state(
            "t-1",
            TurnPhase.REGENERATING,
            regenerate_draft_id="t-1-0",
            regenerate_request=request,
            regenerate_ledger=ledger,
            deadline=NOW,
            traceparent="00-" + "ab" * 16 + "-" + "cd" * 8 + "-01",
        ),
        state(
            "t-2",
            TurnPhase.TERMINAL,
            regenerate_draft_id="t-2-0",
            regenerate_request=request,
            regenerate_ledger="",  # an empty text is a text, not an absent one
            deciding_draft_id="t-2-1",
            terminal_event=event,
            terminal_topic="validated",
            terminal_ledger=ledger,
            attempts_decided=2,
            ended_at=NOW,
        ),
    ]
    for s in cases:
        raw = encode_turn(5, s)
        assert raw[:1] == b"\x02"
        back = decode_turn(raw)
        assert back == (s, 5)
        assert back.state.regenerate_request == s.regenerate_request
        assert back.state.regenerate_ledger == s.regenerate_ledger
        assert back.state.terminal_event == s.terminal_event
        assert back.state.terminal_ledger == s.terminal_ledger
        # The LZ4-compressed JSON values written before this step still read.
        doc = orjson.dumps({"p": 5, "s": orjson.Fragment(s.model_dump_json())})
        assert decode_turn(b"\x02" + bytes(cramjam.lz4.compress_block(doc))) == (s, 5)


def test_a_framed_turn_value_with_bytes_past_its_texts_is_refused() -> None:
    s = state("t-1", TurnPhase.TERMINAL, ended_at=NOW, terminal_event='{"a":1}')
    data = bytes(cramjam.lz4.decompress_block(encode_turn(0, s)[1:]))
    with pytest.raises(ValueError, match="past its texts"):
        decode_turn(b"\x02" + bytes(cramjam.lz4.compress_block(data + b"x")))


def test_a_deferred_changelog_waits_for_the_batch_publish_and_keeps_the_index() -> None:
    """Batching: the worker's store hands its changelog records to the batch's publish."""
    table = DictTable()
    store = FaustTurnStore(table, defer_changelog=True)
    due = regenerating("t-due", NOW - timedelta(seconds=1))
    store.put("t-due", 2, due)
    store.put("t-end", 1, terminal("t-end", NOW))
    assert table.changelog == []  # nothing through Faust's send_soon buffer
    unsent = store.drain_unsent()
    assert [(p, k) for p, k, _ in unsent] == [(2, b"t-due"), (1, b"t-end")]
    assert decode_turn(unsent[0][2]) == decode_turn(table.data[b"t-due"])
    assert store.drain_unsent() == []  # handed over once
    assert set(store.pending) == {"t-due"}
    assert set(store.ended) == {"t-end"}
    store.delete("t-end", 1)  # tombstones still go through send_changelog
    assert table.changelog == [(1, b"t-end", None)]
