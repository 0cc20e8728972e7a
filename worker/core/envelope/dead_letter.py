"""Dead-letter records (contract §7): original key and value bytes, plus ``dlq.*`` headers.

The core composes every dead letter of a batch (``worker.core.batch.decide_batch``); this is how.
A draft that was already replayed arrives carrying the ``dlq.original.*`` headers of its first
failure and a ``dlq.replay.count``; if it fails again, those are carried over unchanged so on-call
always sees where the draft first came from and how often it has been replayed.

``dlq.error.message`` says what the worker got where that is a value of the envelope's own
(``unsupported_schema_version``: ``got 2``, ``got "1"``, ``got nothing``): on-call then knows
which worker version to upgrade to before a replay. The DLQ keeps the value's bytes anyway, so
the header shows nothing the topic does not; it is cut to 40 characters.
"""

from __future__ import annotations

import orjson

from worker.core.contract import (
    DEFAULT_TOPICS,
    DLQ_HEADERS,
    ERROR_CLASS,
    ERROR_MESSAGE,
    FAILED_AT,
    ORIGINAL_HEADERS,
    ORIGINAL_OFFSET,
    ORIGINAL_PARTITION,
    ORIGINAL_TIMESTAMP,
    ORIGINAL_TOPIC,
    REPLAY_COUNT,
    WORKER_VERSION,
    ErrorClass,
    TopicRole,
)
from worker.core.envelope.json_text import loads_json
from worker.core.messages.records import Incoming, OutRecord

#: Dead-letter messages are for operators, but are still cut to keep headers small.
MAX_MESSAGE_CHARS = 1000


def parse_replay_count(raw: bytes | None) -> int:
    """A ``dlq.replay.count`` header value; 0 when missing or unreadable."""
    if raw is None:
        return 0
    try:
        return max(0, int(raw.decode("ascii")))
    except (UnicodeDecodeError, ValueError):
        return 0


def schema_version_got(value: bytes | None) -> str:
    """What a draft's ``schema_version`` is, for the dead letter's message."""
    try:
        obj = loads_json(value or b"")
    except (ValueError, RecursionError):
        return "got no JSON object"
    if not isinstance(obj, dict) or "schema_version" not in obj:
        return "got nothing"
    version = obj["schema_version"]
    try:
        got = orjson.dumps(version, default=repr).decode()
    except (TypeError, ValueError, OverflowError, RecursionError):  # beyond what JSON text holds
        got = "an integer beyond 64 bits" if isinstance(version, int) else type(version).__name__
    return f"got {got[:40]}"


def replay_count(incoming: Incoming) -> int:
    """How many times this record has been replayed from the dead-letter topic already."""
    return parse_replay_count(incoming.header(REPLAY_COUNT))


def dead_letter(
    incoming: Incoming,
    error_class: ErrorClass,
    message: str,
    *,
    failed_at_ms: int,
    worker_version: str,
    topic: str = DEFAULT_TOPICS[TopicRole.DLQ],
) -> OutRecord:
    """The dead letter for ``incoming``: bytes untouched, origin and reason in headers
    (``topic``: the dead-letter topic's configured name)."""
    carried = all(incoming.header(h) is not None for h in ORIGINAL_HEADERS)
    if carried:
        origin = [(h, incoming.header(h) or b"") for h in ORIGINAL_HEADERS]
    else:
        origin = [
            (ORIGINAL_TOPIC, incoming.topic.encode()),
            (ORIGINAL_PARTITION, str(incoming.partition).encode()),
            (ORIGINAL_OFFSET, str(incoming.offset).encode()),
            (ORIGINAL_TIMESTAMP, str(incoming.timestamp_ms).encode()),
        ]
    if error_class is ErrorClass.UNSUPPORTED_SCHEMA_VERSION:
        message = f"{message}: {schema_version_got(incoming.value)}"
    kept = [(k, v) for k, v in incoming.headers if k not in DLQ_HEADERS]
    headers = (
        *kept,
        *origin,
        (ERROR_CLASS, error_class.value.encode()),
        (ERROR_MESSAGE, message[:MAX_MESSAGE_CHARS].encode("utf-8", "replace")),
        (FAILED_AT, str(failed_at_ms).encode()),
        (WORKER_VERSION, worker_version.encode()),
        (REPLAY_COUNT, str(replay_count(incoming)).encode()),
    )
    return OutRecord(topic, incoming.key, incoming.value, headers)
