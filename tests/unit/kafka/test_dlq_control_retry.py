"""Dead letters, control records and the retry loop: plain values in, plain values out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from worker.core.contract import DLQ_HEADERS, ErrorClass
from worker.core.envelope.dead_letter import dead_letter, replay_count
from worker.core.messages.records import Incoming, trace_headers
from worker.core.turns.control import (
    CONTROL_HEADER,
    Control,
    ControlKind,
    control_record,
    is_control,
    parse_control,
)
from worker.faults import PoisonFault, StoreUnavailable
from worker.runtime.retry import RetryBudgetExhaustedError, backoff_delays, with_retries


def incoming(
    headers: tuple[tuple[str, bytes], ...] = (),
    *,
    key: bytes | None = b"t-1",
    value: bytes = b'{"x": 1}',
) -> Incoming:
    return Incoming(
        topic="agent.drafts",
        partition=2,
        offset=41,
        timestamp_ms=1_764_000_000_123,
        key=key,
        value=value,
        headers=headers,
    )


# --- dead letters ---------------------------------------------------------------------------------


def test_fresh_dead_letter_keeps_bytes_and_names_its_origin() -> None:
    rec = incoming((("traceparent", b"00-abc"), ("x-app", b"1")))
    letter = dead_letter(
        rec, ErrorClass.OVERSIZED, "too big", failed_at_ms=1_764_000_001_000, worker_version="9.9"
    )
    assert (letter.key, letter.value) == (rec.key, rec.value)
    assert letter.headers == (
        ("traceparent", b"00-abc"),
        ("x-app", b"1"),
        ("dlq.original.topic", b"agent.drafts"),
        ("dlq.original.partition", b"2"),
        ("dlq.original.offset", b"41"),
        ("dlq.original.timestamp", b"1764000000123"),
        ("dlq.error.class", b"oversized"),
        ("dlq.error.message", b"too big"),
        ("dlq.failed_at", b"1764000001000"),
        ("dlq.worker.version", b"9.9"),
        ("dlq.replay.count", b"0"),
    )


@pytest.mark.parametrize(
    ("value", "got"),
    [
        (b'{"schema_version": 2}', "got 2"),
        (b'{"schema_version": "1"}', 'got "1"'),
        (b'{"schema_version": null}', "got null"),
        (b'{"turn_id": "t-1"}', "got nothing"),
        (b'{"schema_version": "' + b"v" * 100 + b'"}', 'got "' + "v" * 39),
        # Beyond 64 bits orjson cannot write it back: a whole batch once failed on this one
        # (the chaos suite's hostile drafts).
        (b'{"schema_version": 184467440737095516160}', "got an integer beyond 64 bits"),
        (b'{"schema_version": ' + b"9" * 5000 + b"}", 'got "<unreadable number>"'),
    ],
)
def test_an_unsupported_version_dead_letter_says_which_version_it_got(
    value: bytes, got: str
) -> None:
    letter = dead_letter(
        incoming(value=value),
        ErrorClass.UNSUPPORTED_SCHEMA_VERSION,
        "schema_version missing or not one this worker knows",
        failed_at_ms=1,
        worker_version="9.9",
    )
    message = dict(letter.headers)["dlq.error.message"].decode()
    assert message == f"schema_version missing or not one this worker knows: {got}"
    assert letter.value == value


def test_replayed_dead_letter_carries_origin_and_replay_count() -> None:
    """A replayed draft that fails again: first origin kept, count carried, nothing doubled."""
    replayed = incoming(
        (
            ("dlq.original.topic", b"agent.drafts"),
            ("dlq.original.partition", b"0"),
            ("dlq.original.offset", b"7"),
            ("dlq.original.timestamp", b"1700000000000"),
            ("dlq.error.class", b"infra_unavailable"),
            ("dlq.error.message", b"old"),
            ("dlq.failed_at", b"1700000000001"),
            ("dlq.worker.version", b"0.0.1"),
            ("dlq.replay.count", b"2"),
            ("traceparent", b"00-t"),
        )
    )
    letter = dead_letter(
        replayed,
        ErrorClass.INTERNAL_ERROR,
        "internal error: KeyError",
        failed_at_ms=5,
        worker_version="1.0",
    )
    headers = dict(letter.headers)
    assert [k for k, _ in letter.headers].count("dlq.replay.count") == 1
    assert all([k for k, _ in letter.headers].count(h) == 1 for h in DLQ_HEADERS)
    assert headers["dlq.original.partition"] == b"0"
    assert headers["dlq.original.offset"] == b"7"
    assert headers["dlq.original.timestamp"] == b"1700000000000"
    assert headers["dlq.error.class"] == b"internal_error"
    assert headers["dlq.failed_at"] == b"5"
    assert headers["dlq.worker.version"] == b"1.0"
    assert headers["dlq.replay.count"] == b"2"
    assert headers["traceparent"] == b"00-t"


def test_partial_origin_headers_are_replaced_by_this_records_origin() -> None:
    rec = incoming((("dlq.original.offset", b"7"),))
    headers = dict(
        dead_letter(
            rec, ErrorClass.MALFORMED_ENVELOPE, "m", failed_at_ms=1, worker_version="v"
        ).headers
    )
    assert headers["dlq.original.offset"] == b"41"
    assert headers["dlq.original.partition"] == b"2"


@pytest.mark.parametrize(
    ("raw", "count"), [(None, 0), (b"3", 3), (b"-2", 0), (b"x", 0), (b"\xff", 0)]
)
def test_replay_count_reads_garbage_as_zero(raw: bytes | None, count: int) -> None:
    headers = () if raw is None else (("dlq.replay.count", raw),)
    assert replay_count(incoming(headers)) == count


def test_long_messages_are_cut() -> None:
    letter = dead_letter(
        incoming(), ErrorClass.INTERNAL_ERROR, "é" * 5000, failed_at_ms=1, worker_version="v"
    )
    assert dict(letter.headers)["dlq.error.message"].decode() == "é" * 1000


def test_keyless_records_stay_keyless() -> None:
    letter = dead_letter(
        incoming(key=None), ErrorClass.MALFORMED_ENVELOPE, "m", failed_at_ms=1, worker_version="v"
    )
    assert letter.key is None


TRACEPARENT = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_only_trace_context_is_copied_onto_outputs() -> None:
    state = b"congo=t61rcWkgMzE"
    rec = incoming((("traceparent", TRACEPARENT), ("tracestate", state), ("x", b"c")))
    assert trace_headers(rec) == (("traceparent", TRACEPARENT), ("tracestate", state))


@pytest.mark.parametrize(
    "headers",
    [
        (("traceparent", b"[DOC-73002] Project Falcon"),),
        (("traceparent", b"00-a-b-01"),),
        (("traceparent", b"00-00000000000000000000000000000000-00f067aa0ba902b7-01"),),
        (("traceparent", b"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),),
        (("traceparent", TRACEPARENT + b"-x"),),  # version 00 has exactly four fields
        (("traceparent", TRACEPARENT), ("traceparent", TRACEPARENT)),
        (("tracestate", b"congo=t61rcWkgMzE"),),  # no parent: no trace context at all
    ],
)
def test_trace_headers_outside_the_w3c_format_are_dropped(headers: Any) -> None:
    """A header value copied verbatim reached every output (a hidden id with it)."""
    assert trace_headers(incoming(headers)) == ()


@pytest.mark.parametrize(
    "state", [b"k=[DOC-73002]", b"k=&#91;DOC-73002&#93;", b"k=a\\b", b"K=v", b"k=v,=x"]
)
def test_a_tracestate_outside_the_format_or_citation_shaped_is_dropped(state: bytes) -> None:
    rec = incoming((("traceparent", TRACEPARENT), ("tracestate", state)))
    assert trace_headers(rec) == (("traceparent", TRACEPARENT),)


# --- control records ------------------------------------------------------------------------------


def test_control_record_round_trip() -> None:
    due = datetime(2026, 12, 2, 12, 0, 3, tzinfo=UTC)
    rec = control_record(ControlKind.REGENERATION_DEADLINE, "t-9", 1, due)
    assert rec.partition == 1
    assert rec.key == b"t-9"
    assert rec.headers == ((CONTROL_HEADER, b"regeneration_deadline"),)
    assert orjson.loads(rec.value) == {
        "schema_version": 1,
        "control": "regeneration_deadline",
        "turn_id": "t-9",
        "due": "2026-12-02T12:00:03Z",
    }
    consumed = incoming(rec.headers, key=rec.key, value=rec.value)
    assert is_control(consumed)
    assert parse_control(consumed) == Control(ControlKind.REGENERATION_DEADLINE, "t-9")


def test_expire_turn_record() -> None:
    rec = control_record(ControlKind.EXPIRE_TURN, "t-1", 0, datetime(2026, 1, 1, tzinfo=UTC))
    consumed = incoming(rec.headers, key=rec.key, value=rec.value)
    assert parse_control(consumed) == Control(ControlKind.EXPIRE_TURN, "t-1")


@pytest.mark.parametrize(
    ("header", "key"),
    [
        (b"launch_missiles", b"t-1"),
        (b"\xff", b"t-1"),
        (b"regeneration_deadline", None),
        (b"regeneration_deadline", b""),
        (b"regeneration_deadline", b"\xff\xfe"),
    ],
)
def test_unreadable_control_records_are_ignored_not_drafts(
    header: bytes, key: bytes | None
) -> None:
    rec = incoming(((CONTROL_HEADER, header),), key=key)
    assert is_control(rec)
    assert parse_control(rec) is None


def test_a_draft_is_not_a_control_record() -> None:
    assert not is_control(incoming((("traceparent", b"x"),)))


# --- retries --------------------------------------------------------------------------------------


def test_backoff_doubles_and_is_capped() -> None:
    delay = backoff_delays(0.2, 1.0)
    assert [delay(n) for n in range(1, 6)] == [0.2, 0.4, 0.8, 1.0, 1.0]
    assert delay(10_000) == 1.0


class Flaky:
    """Fails ``failures`` times with ``fault``, then returns ``"ok"``."""

    def __init__(self, failures: int, fault: Exception) -> None:
        self.failures = failures
        self.fault = fault
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.fault
        return "ok"


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def test_retries_until_success_with_capped_backoff() -> None:
    op, sleep = Flaky(5, StoreUnavailable("down")), Sleeps()
    seen: list[int] = []
    result = await with_retries(
        op,
        budget=None,
        delay=backoff_delays(1.0, 4.0),
        sleep=sleep,
        on_retry=lambda n, fault, wait: seen.append(n),
    )
    assert result == "ok"
    assert op.calls == 6
    assert sleep.waits == [1.0, 2.0, 4.0, 4.0, 4.0]
    assert seen == [1, 2, 3, 4, 5]


async def test_budget_counts_retries_after_the_first_attempt() -> None:
    op, sleep = Flaky(100, StoreUnavailable("down")), Sleeps()
    with pytest.raises(RetryBudgetExhaustedError) as info:
        await with_retries(op, budget=2, delay=backoff_delays(0.1, 1.0), sleep=sleep)
    assert op.calls == 3
    assert info.value.attempts == 3
    assert isinstance(info.value.last, StoreUnavailable)
    assert sleep.waits == [0.1, 0.2]


async def test_budget_zero_tries_once() -> None:
    op = Flaky(1, StoreUnavailable("down"))
    with pytest.raises(RetryBudgetExhaustedError):
        await with_retries(op, budget=0, delay=backoff_delays(0.1, 1.0), sleep=Sleeps())
    assert op.calls == 1


@pytest.mark.parametrize("fault", [PoisonFault("bad row"), KeyError("x"), ValueError("y")])
async def test_non_retriable_faults_propagate_at_once(fault: Exception) -> None:
    op, sleep = Flaky(1, fault), Sleeps()
    with pytest.raises(type(fault)):
        await with_retries(op, budget=None, delay=backoff_delays(0.1, 1.0), sleep=sleep)
    assert op.calls == 1
    assert sleep.waits == []
