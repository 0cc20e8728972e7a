"""One consumed Kafka record as a plain value: the one record type of the worker and its tools.

The worker's loop reads drafts (and its own control records) as :class:`Incoming`; ``replay``
reads dead letters as :class:`Incoming` too. Faust's events become one in ``worker.stream.app``,
aiokafka's consumer records in :func:`from_consumer_record`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from worker.core.tracecontext import propagated

Headers = tuple[tuple[str, bytes], ...]

#: One record to append: topic, key, value, headers, partition (``None``: the key's partition).
OutRecord = tuple[str, bytes | None, bytes, Headers, int | None]

#: W3C trace context headers propagated from a draft to every message derived from it.
TRACE_HEADERS = ("traceparent", "tracestate")


class Incoming(NamedTuple):
    """One record as consumed (a draft, a control record, a dead letter), bytes untouched."""

    topic: str
    partition: int
    offset: int
    #: Record timestamp, milliseconds since the epoch.
    timestamp_ms: int
    key: bytes | None
    value: bytes
    headers: Headers

    def header(self, name: str) -> bytes | None:
        """The last value of header ``name``, or ``None``."""
        return last_header(self.headers, name)


def last_header(headers: Headers, name: str) -> bytes | None:
    """The last value of header ``name`` (Kafka allows repeats; the last one wins), or ``None``."""
    found: bytes | None = None
    for k, v in headers:
        if k == name:
            found = v
    return found


def from_consumer_record(raw: Any) -> Incoming:
    """An aiokafka ``ConsumerRecord`` (timestamp in ms) as a value; a null value becomes ``b""``."""
    return Incoming(
        topic=raw.topic,
        partition=raw.partition,
        offset=raw.offset,
        timestamp_ms=raw.timestamp,
        key=raw.key,
        value=raw.value or b"",
        headers=normalize_headers(raw.headers),
    )


def normalize_headers(raw: Iterable[tuple[str, bytes | None]] | None) -> Headers:
    """Kafka headers as a tuple of ``(str, bytes)``; a null header value becomes ``b""``."""
    return tuple((k, v if v is not None else b"") for k, v in (raw or ()))


def trace_headers(incoming: Incoming) -> Headers:
    """The trace-context headers of a draft that may be copied onto every derived message: W3C
    values only (``worker.core.tracecontext``), a ``tracestate`` only beside a valid parent."""
    headers = incoming.headers
    parents = [v for k, v in headers if k == "traceparent"]
    if len(parents) != 1 or not propagated("traceparent", parents[0]):
        return ()  # W3C: no (single, valid) parent, no trace context at all
    if len(headers) == 1:
        return headers  # that valid parent alone (the usual draft): no second check
    return tuple((k, v) for k, v in headers if k in TRACE_HEADERS and propagated(k, v))
