"""Which dead letters ``replay`` re-publishes, and how (contract §7): the pure part of the tool.

Decisions:

- Offsets (``--from-offset``/``--to-offset``, both inclusive) are the DLQ record's own offsets,
  the numbers on-call sees in Kafka tooling; ``dlq.original.offset`` only says where the draft
  came from. Offsets of different partitions are unrelated, so offsets need exactly one
  ``--partition``.
- The time range (``--since`` inclusive, ``--until`` exclusive) is on the DLQ record's timestamp,
  which every record has and tooling shows; ``dlq.failed_at`` is the same instant up to the
  worker's send latency and may be missing on a hand-made record.
- A tenant is the value's ``tenant_id`` when the value is a JSON object with a string
  ``tenant_id``; a value that does not parse never matches a tenant filter.
- A dead letter whose ``dlq.replay.count`` is already ``max_replays`` or more is skipped: one
  more replay would exceed the budget.
- By default only the classes a replay can fix are replayed (:data:`FIXED_BY_REPLAY`): a fault
  of the worker or its infrastructure, and a schema version the worker did not know (replayed
  once the worker is upgraded, contract §2). The others (:data:`NOT_FIXED_BY_REPLAY`) fail the
  same way again, doubling the DLQ each run; they are replayed only when named with
  ``--error-class`` or with ``--all-classes``, and a run lists what it skipped and why.
- The replayed record keeps every header in order, ``dlq.*`` included (the worker carries the
  ``dlq.original.*`` ones over if the draft fails again); every ``dlq.replay.count`` is removed
  and one, raised by one, is appended.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import NamedTuple

from worker.core import ERROR_CLASS, REPLAY_COUNT, Headers, Incoming, loads_json, replay_count

#: Classes a replay can fix, by default replayed: why each can succeed the next time.
FIXED_BY_REPLAY: dict[str, str] = {
    "infra_unavailable": "a store or the broker was down; it may be up now",
    "internal_error": "a bug of the worker; a fixed worker may decide it",
    "unsupported_schema_version": "an upgraded worker may know the version",
}
#: Classes a replay cannot fix: why the same bytes fail the same way again.
NOT_FIXED_BY_REPLAY: dict[str, str] = {
    "malformed_envelope": "the envelope itself is wrong; the producer must send a new draft",
    "oversized": "the same bytes are as large again; the producer must send a smaller draft",
    "identity_mismatch": "the turn keeps its first reader until its state expires",
    "unknown": "no dlq.error.class header: nothing says a replay can help",
}

_DURATION = re.compile(r"^(\d+)([smhd])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def error_class_of(record: Incoming) -> str:
    """``dlq.error.class``, or ``unknown`` when the header is missing or not UTF-8."""
    raw = record.header(ERROR_CLASS)
    try:
        return raw.decode("utf-8") if raw else "unknown"
    except UnicodeDecodeError:
        return "unknown"


def turn_of(record: Incoming) -> str:
    """The record key (the turn id) for listings; ``-`` when absent or not UTF-8."""
    if record.key is None:
        return "-"
    try:
        return record.key.decode("utf-8")
    except UnicodeDecodeError:
        return "-"


def tenant_of(value: bytes) -> str | None:
    """The value's ``tenant_id`` when it is a JSON object with a string one; else ``None``."""
    try:
        obj = loads_json(value)
    except (ValueError, RecursionError):
        return None
    tenant = obj.get("tenant_id") if isinstance(obj, dict) else None
    return tenant if isinstance(tenant, str) else None


class ReplayFilter(NamedTuple):
    """What on-call asked for; an empty field selects everything."""

    error_classes: frozenset[str] = frozenset()
    tenants: frozenset[str] = frozenset()
    partitions: frozenset[int] = frozenset()
    #: Inclusive DLQ offsets (only with exactly one partition).
    from_offset: int | None = None
    to_offset: int | None = None
    #: DLQ record timestamps in ms: ``since`` inclusive, ``until`` exclusive.
    since_ms: int | None = None
    until_ms: int | None = None
    #: ``--all-classes``: also the classes a replay cannot fix.
    all_classes: bool = False

    def fixable(self, record: Incoming) -> bool:
        """Whether this run may replay ``record``'s class: one a replay can fix, one named with
        ``--error-class``, or any with ``--all-classes``."""
        name = error_class_of(record)
        return self.all_classes or name in FIXED_BY_REPLAY or name in self.error_classes

    def matches(self, record: Incoming, tenant: str | None) -> bool:
        """Whether ``record`` (whose value's tenant is ``tenant``) is selected."""
        if self.partitions and record.partition not in self.partitions:
            return False
        if self.from_offset is not None and record.offset < self.from_offset:
            return False
        if self.to_offset is not None and record.offset > self.to_offset:
            return False
        if self.since_ms is not None and record.timestamp_ms < self.since_ms:
            return False
        if self.until_ms is not None and record.timestamp_ms >= self.until_ms:
            return False
        if self.error_classes and error_class_of(record) not in self.error_classes:
            return False
        return not self.tenants or (tenant is not None and tenant in self.tenants)


class ReplayAction(StrEnum):
    """What a run does with one dead letter."""

    REPLAY = "replay"
    #: Not selected by the filters.
    FILTERED = "filtered"
    #: Its class is one a replay cannot fix (``NOT_FIXED_BY_REPLAY``), and was not asked for.
    NOT_FIXABLE = "not_fixable"
    #: In the replay log: a run replayed it already.
    ALREADY_REPLAYED = "already_replayed"
    #: ``dlq.replay.count`` has reached the maximum.
    OVER_MAX = "over_max"
    #: Selected, but ``--limit`` was reached first: a later run takes it.
    OVER_LIMIT = "over_limit"


def replay_action(
    record: Incoming,
    tenant: str | None,
    selection: ReplayFilter,
    *,
    already_replayed: bool,
    max_replays: int,
    replays_so_far: int,
    limit: int | None,
) -> ReplayAction:
    """The one thing a run does with ``record``, checked in the order of the enum."""
    if not selection.matches(record, tenant):
        return ReplayAction.FILTERED
    if not selection.fixable(record):
        return ReplayAction.NOT_FIXABLE
    if already_replayed:
        return ReplayAction.ALREADY_REPLAYED
    if replay_count(record) >= max_replays:
        return ReplayAction.OVER_MAX
    if limit is not None and replays_so_far >= limit:
        return ReplayAction.OVER_LIMIT
    return ReplayAction.REPLAY


def replayed_headers(headers: Headers, previous_count: int) -> Headers:
    """The headers of the replayed draft: all kept, one ``dlq.replay.count`` raised by one."""
    kept = tuple((k, v) for k, v in headers if k != REPLAY_COUNT)
    return (*kept, (REPLAY_COUNT, str(previous_count + 1).encode("ascii")))


def parse_time(text: str, now: datetime) -> int:
    """``--since``/``--until``: RFC 3339 (``2026-12-02T12:00:00Z``; naive means UTC), epoch
    milliseconds, or a duration before ``now`` (``90s``, ``15m``, ``2h``, ``3d``). Returns ms."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    if match := _DURATION.match(text):
        seconds = int(match.group(1)) * _UNIT_S[match.group(2)]
        return int((now - timedelta(seconds=seconds)).timestamp() * 1000)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not an RFC 3339 time, epoch milliseconds or a duration like 2h"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)


def validate_filter(selection: ReplayFilter, known_classes: Iterable[str]) -> list[str]:
    """Usage errors in ``selection`` (empty when it is usable)."""
    problems: list[str] = []
    known = sorted(known_classes)
    unknown = sorted(selection.error_classes - set(known))
    if unknown:
        problems.append(f"unknown --error-class {', '.join(unknown)} (known: {', '.join(known)})")
    has_offsets = selection.from_offset is not None or selection.to_offset is not None
    if has_offsets and len(selection.partitions) != 1:
        problems.append("--from-offset/--to-offset need exactly one --partition")
    if (
        selection.from_offset is not None
        and selection.to_offset is not None
        and selection.from_offset > selection.to_offset
    ):
        problems.append("--from-offset is after --to-offset")
    if (
        selection.since_ms is not None
        and selection.until_ms is not None
        and selection.since_ms >= selection.until_ms
    ):
        problems.append("--since is not before --until")
    return problems
