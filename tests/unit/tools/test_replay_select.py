"""The pure parts of ``replay``: filters, dispositions, header rewrite, times, the replay log."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest

from worker.core import Incoming, replay_count
from worker.core import contract as h
from worker.tools.progress import Progress
from worker.tools.replay import chunk_size
from worker.tools.replay_log import log_key, log_value, parse_log_key, replayed_set
from worker.tools.replay_select import (
    FIXED_BY_REPLAY,
    NOT_FIXED_BY_REPLAY,
    ReplayAction,
    ReplayFilter,
    error_class_of,
    parse_time,
    replay_action,
    replayed_headers,
    tenant_of,
    turn_of,
    validate_filter,
)
from worker.tools.replay_summary import ReplaySummary

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
NOW_MS = int(NOW.timestamp() * 1000)
CLASSES = [c.value for c in h.ErrorClass]
DLQ = "agent.drafts.dlq"


def record(
    *,
    partition: int = 0,
    offset: int = 10,
    ts: int = NOW_MS,
    cls: str = "infra_unavailable",
    replays: int | None = None,
    value: bytes = b'{"tenant_id": "acme", "output": "secret words"}',
    key: bytes | None = b"t-1",
) -> Incoming:
    headers: list[tuple[str, bytes]] = [
        ("traceparent", b"00-abc-def-01"),
        (h.ERROR_CLASS, cls.encode()),
    ]
    if replays is not None:
        headers.append((h.REPLAY_COUNT, str(replays).encode()))
    return Incoming(DLQ, partition, offset, ts, key, value, tuple(headers))


# --- tenants --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "tenant"),
    [
        (b'{"tenant_id": "acme"}', "acme"),
        (b'{"tenant_id": 7}', None),
        (b'["tenant_id", "acme"]', None),
        (b"\xff\xfe", None),
        (b"not json", None),
        (b"", None),
        (b'{"tenant_id": "globex", "x": 123456789012345678901234567890}', "globex"),
    ],
)
def test_tenant_of(value: bytes, tenant: str | None) -> None:
    assert tenant_of(value) == tenant


# --- filters --------------------------------------------------------------------------------------


def test_empty_filter_selects_everything() -> None:
    assert ReplayFilter().matches(record(), None)


@pytest.mark.parametrize(
    ("selection", "rec", "tenant", "selected"),
    [
        (ReplayFilter(error_classes=frozenset({"internal_error"})), record(), "acme", False),
        (ReplayFilter(error_classes=frozenset({"infra_unavailable"})), record(), "acme", True),
        (ReplayFilter(tenants=frozenset({"acme"})), record(), "acme", True),
        (ReplayFilter(tenants=frozenset({"acme"})), record(), "globex", False),
        (ReplayFilter(tenants=frozenset({"acme"})), record(), None, False),  # unparseable value
        (ReplayFilter(partitions=frozenset({1})), record(partition=0), None, False),
        (ReplayFilter(partitions=frozenset({0}), from_offset=10), record(offset=10), None, True),
        (ReplayFilter(partitions=frozenset({0}), from_offset=11), record(offset=10), None, False),
        (ReplayFilter(partitions=frozenset({0}), to_offset=10), record(offset=10), None, True),
        (ReplayFilter(partitions=frozenset({0}), to_offset=9), record(offset=10), None, False),
        (ReplayFilter(since_ms=NOW_MS), record(ts=NOW_MS), None, True),
        (ReplayFilter(since_ms=NOW_MS + 1), record(ts=NOW_MS), None, False),
        (ReplayFilter(until_ms=NOW_MS), record(ts=NOW_MS), None, False),  # until is exclusive
        (ReplayFilter(until_ms=NOW_MS + 1), record(ts=NOW_MS), None, True),
    ],
)
def test_each_filter(
    selection: ReplayFilter, rec: Incoming, tenant: str | None, selected: bool
) -> None:
    assert selection.matches(rec, tenant) is selected


def test_missing_error_class_header_is_unknown() -> None:
    rec = Incoming(DLQ, 0, 0, 0, None, b"", ())
    assert error_class_of(rec) == "unknown"
    assert replay_count(rec) == 0
    assert turn_of(rec) == "-"
    assert not ReplayFilter(error_classes=frozenset({"internal_error"})).matches(rec, None)


@pytest.mark.parametrize("raw", [b"x", b"-3", b"\xff"])
def test_unreadable_replay_count_is_zero_like_the_worker(raw: bytes) -> None:
    rec = record()._replace(headers=((h.REPLAY_COUNT, raw),))
    assert replay_count(rec) == 0


@pytest.mark.parametrize(
    ("selection", "problem"),
    [
        (ReplayFilter(error_classes=frozenset({"oops"})), "unknown --error-class oops"),
        (ReplayFilter(from_offset=3), "exactly one --partition"),
        (ReplayFilter(partitions=frozenset({0, 1}), to_offset=3), "exactly one --partition"),
        (ReplayFilter(partitions=frozenset({0}), from_offset=4, to_offset=3), "after --to-offset"),
        (ReplayFilter(since_ms=5, until_ms=5), "--since is not before --until"),
    ],
)
def test_usage_problems(selection: ReplayFilter, problem: str) -> None:
    problems = validate_filter(selection, CLASSES)
    assert len(problems) == 1
    assert problem in problems[0]


def test_a_usable_filter_has_no_problem() -> None:
    selection = ReplayFilter(
        error_classes=frozenset(CLASSES), partitions=frozenset({2}), from_offset=0, to_offset=0
    )
    assert validate_filter(selection, CLASSES) == []


# --- dispositions ---------------------------------------------------------------------------------


def decide(rec: Incoming, **kw: object) -> ReplayAction:
    args: dict[str, object] = {
        "already_replayed": False,
        "max_replays": 3,
        "replays_so_far": 0,
        "limit": None,
    } | kw
    return replay_action(rec, "acme", ReplayFilter(), **args)  # type: ignore[arg-type]


def test_dispositions_in_order() -> None:
    assert decide(record()) is ReplayAction.REPLAY
    not_selected = ReplayFilter(tenants=frozenset({"globex"}))
    assert (
        replay_action(
            record(),
            "acme",
            not_selected,
            already_replayed=True,
            max_replays=0,
            replays_so_far=9,
            limit=1,
        )
        is ReplayAction.FILTERED
    )
    assert decide(record(replays=9), already_replayed=True) is ReplayAction.ALREADY_REPLAYED
    assert decide(record(replays=3)) is ReplayAction.OVER_MAX
    assert decide(record(replays=2)) is ReplayAction.REPLAY
    assert decide(record(replays=3), max_replays=4) is ReplayAction.REPLAY
    assert decide(record(), max_replays=0) is ReplayAction.OVER_MAX
    assert decide(record(replays=5), limit=1, replays_so_far=1) is ReplayAction.OVER_MAX
    assert decide(record(), limit=1, replays_so_far=1) is ReplayAction.OVER_LIMIT
    assert decide(record(), limit=2, replays_so_far=1) is ReplayAction.REPLAY


@pytest.mark.parametrize(
    ("cls", "default"),
    [
        ("infra_unavailable", ReplayAction.REPLAY),
        ("internal_error", ReplayAction.REPLAY),
        ("unsupported_schema_version", ReplayAction.REPLAY),
        ("malformed_envelope", ReplayAction.NOT_FIXABLE),
        ("oversized", ReplayAction.NOT_FIXABLE),
        ("identity_mismatch", ReplayAction.NOT_FIXABLE),
        ("unknown", ReplayAction.NOT_FIXABLE),
    ],
)
def test_only_classes_a_replay_can_fix_are_replayed_unless_asked_for(
    cls: str, default: ReplayAction
) -> None:
    rec = record(cls=cls, replays=9)  # not fixable is decided before the replay count
    args: dict[str, object] = {
        "already_replayed": False,
        "max_replays": 99,
        "replays_so_far": 0,
        "limit": None,
    }
    assert replay_action(rec, "acme", ReplayFilter(), **args) is default  # type: ignore[arg-type]
    named = ReplayFilter(error_classes=frozenset({cls}))
    assert replay_action(rec, "acme", named, **args) is ReplayAction.REPLAY  # type: ignore[arg-type]
    every = ReplayFilter(all_classes=True)
    assert replay_action(rec, "acme", every, **args) is ReplayAction.REPLAY  # type: ignore[arg-type]


def test_every_error_class_is_either_fixable_or_not_with_a_reason() -> None:
    assert set(FIXED_BY_REPLAY) | set(NOT_FIXED_BY_REPLAY) == {*CLASSES, "unknown"}
    assert not set(FIXED_BY_REPLAY) & set(NOT_FIXED_BY_REPLAY)
    assert all(NOT_FIXED_BY_REPLAY.values())


# --- headers --------------------------------------------------------------------------------------


def test_replayed_headers_keep_everything_and_replace_the_count() -> None:
    headers = (
        ("traceparent", b"t"),
        (h.REPLAY_COUNT, b"1"),
        (h.ORIGINAL_OFFSET, b"42"),
        (h.REPLAY_COUNT, b"1"),
        ("x-custom", b"\x00"),
    )
    assert replayed_headers(headers, 1) == (
        ("traceparent", b"t"),
        (h.ORIGINAL_OFFSET, b"42"),
        ("x-custom", b"\x00"),
        (h.REPLAY_COUNT, b"2"),
    )


def test_first_replay_gets_count_one() -> None:
    assert replayed_headers((("a", b"1"),), 0) == (("a", b"1"), (h.REPLAY_COUNT, b"1"))


# --- times ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("2026-12-02T12:00:00Z", NOW_MS),
        ("2026-12-02T13:00:00+01:00", NOW_MS),
        ("2026-12-02T12:00:00", NOW_MS),  # naive means UTC
        (str(NOW_MS), NOW_MS),
        ("90s", NOW_MS - 90_000),
        ("15m", NOW_MS - 900_000),
        ("2h", NOW_MS - 7_200_000),
        ("3d", NOW_MS - 3 * 86_400_000),
    ],
)
def test_parse_time(text: str, ms: int) -> None:
    assert parse_time(text, NOW) == ms


@pytest.mark.parametrize("text", ["yesterday", "2h30m", "-5", "12:00", ""])
def test_parse_time_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="not an RFC 3339 time"):
        parse_time(text, NOW)


# --- replay log -----------------------------------------------------------------------------------


def test_log_keys_round_trip() -> None:
    assert log_key(3, 17) == "3:17"
    assert parse_log_key(b"3:17") == (3, 17)
    for foreign in (None, b"", b"3", b"a:b", b"\xff:1"):
        assert parse_log_key(foreign) is None


def test_replayed_set_folds_in_order_and_honours_tombstones() -> None:
    records = [(b"0:1", b"{}"), (b"0:2", b"{}"), (b"0:1", None), (b"junk", b"{}"), (b"1:1", b"{}")]
    assert replayed_set(records) == {(0, 2), (1, 1)}


def test_log_value_names_no_draft_content() -> None:
    value = json.loads(
        log_value(replayed_at_ms=1, replay_count=2, error_class="x", version="0.1.0")
    )
    assert value == {
        "replayed_at_ms": 1,
        "replay_count": 2,
        "error_class": "x",
        "by": "grounding-worker replay 0.1.0",
    }


# --- summary and progress -------------------------------------------------------------------------


def test_summary_counts_and_lists_lowest_offsets_without_value_text() -> None:
    summary = ReplaySummary(dry_run=True, max_replays=3)
    for offset in range(15, 0, -1):
        summary.note(record(offset=offset), "acme", ReplayAction.REPLAY)
    summary.note(record(offset=99, replays=3, value=b"\xff"), None, ReplayAction.OVER_MAX)
    summary.note(record(offset=100), "acme", ReplayAction.FILTERED)
    body = summary.as_json()
    assert body["scanned"] == 17
    assert body["planned"] == 15
    assert body["by_class"] == {"infra_unavailable": 15}
    assert body["by_tenant"] == {"acme": 15}
    assert [r["offset"] for r in body["to_replay"]] == list(range(1, 11))
    assert body["over_max"] == [
        {
            "partition": 0,
            "offset": 99,
            "error_class": "infra_unavailable",
            "tenant": "(no tenant)",
            "turn": "t-1",
            "replay_count": 3,
        }
    ]
    assert body["skipped"] == {
        "filtered": 1,
        "not_fixable": 0,
        "already_replayed": 0,
        "over_max": 1,
        "over_limit": 0,
    }
    text = "\n".join(summary.lines())
    assert "would replay 15" in text
    assert "secret" not in text
    assert "secret" not in json.dumps(body)
    assert "NOT replayed" in text


def test_chunk_size_follows_the_rate() -> None:
    assert chunk_size(None) == 100
    assert chunk_size(1.0) == 1
    assert chunk_size(50.0) == 5
    assert chunk_size(1e6) == 100


def test_progress_prints_plain_lines_when_not_a_tty() -> None:
    clock = iter([0.0, 1.0, 6.0, 7.0]).__next__
    stream = io.StringIO()
    progress = Progress(stream, interval_s=5.0, clock=clock)
    progress.update("a")  # 1.0: too soon
    progress.update("b")  # 6.0: shown
    progress.done("c")  # always shown
    assert stream.getvalue() == "b\nc\n"
