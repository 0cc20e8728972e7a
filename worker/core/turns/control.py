"""The worker's own control records on ``agent.drafts``: regeneration deadlines and turn expiry.

Faust lets a table key change only in the context of an event with that key (faust #497), and the
contract wants a regeneration timed out only by the partition's current owner, and only once every
draft appended to the partition before the deadline has been processed. A timer therefore never
decides anything: at the deadline it appends a control record keyed by the turn to the turn's own
partition of ``agent.drafts``. That record is ordered after every draft appended before it, is
consumed by whoever owns the partition then, and is decided in the same ordered loop as drafts
(``worker.core.batch``). Its broker timestamp (the topic uses ``LogAppendTime``) is the tick time,
so it cannot be forged to fire early. A record with the header ``gw.control`` is never a draft.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

import orjson

from worker.core.contract import DEFAULT_TOPICS, TopicRole
from worker.core.messages.records import Incoming, OutRecord

CONTROL_HEADER = "gw.control"


class ControlKind(StrEnum):
    """What a control record asks the turn's owner to check."""

    REGENERATION_DEADLINE = "regeneration_deadline"
    EXPIRE_TURN = "expire_turn"


class Control(NamedTuple):
    """A parsed control record."""

    kind: ControlKind
    turn_id: str


def is_control(incoming: Incoming) -> bool:
    """Whether the record carries the control header (then it is never a draft)."""
    return incoming.header(CONTROL_HEADER) is not None


def parse_control(incoming: Incoming) -> Control | None:
    """The control a record asks for; ``None`` for an unknown or unreadable one (ignored)."""
    raw = incoming.header(CONTROL_HEADER)
    if raw is None or incoming.key is None:
        return None
    try:
        kind = ControlKind(raw.decode("ascii"))
        turn_id = incoming.key.decode("utf-8")
    except (UnicodeDecodeError, ValueError):
        return None
    return Control(kind=kind, turn_id=turn_id) if turn_id else None


def control_record(
    kind: ControlKind,
    turn_id: str,
    partition: int,
    due: datetime,
    *,
    topic: str = DEFAULT_TOPICS[TopicRole.DRAFTS],
) -> OutRecord:
    """The record that asks the owner of ``partition`` to check ``turn_id`` at or after ``due``
    (``topic``: the drafts topic's configured name)."""
    value = orjson.dumps(
        {
            "schema_version": 1,
            "control": kind.value,
            "turn_id": turn_id,
            "due": due.isoformat().replace("+00:00", "Z"),
        }
    )
    return OutRecord(
        topic=topic,
        key=turn_id.encode("utf-8"),
        value=value,
        headers=((CONTROL_HEADER, kind.value.encode("ascii")),),
        partition=partition,
    )
