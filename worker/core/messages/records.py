"""Kafka records as plain values: the one consumed record and the one record to append.

The worker reads drafts (and its own control records) as :class:`Incoming`; ``replay`` reads dead
letters as :class:`Incoming` too. Everything the worker appends, whatever it is (an answer, a
regenerate request, a could-not-ground event, a ledger batch, a dead letter, a control record, a
turn table's changelog record), is one :class:`OutRecord`. The adapters turn client records into
these (``worker.kafka.records``) and these into client calls (``worker.kafka.publisher``).
"""

from __future__ import annotations

from typing import NamedTuple

from worker.core.messages.tracecontext import propagated

Headers = tuple[tuple[str, bytes], ...]

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


class OutRecord(NamedTuple):
    """One record to append."""

    topic: str
    key: bytes | None
    value: bytes
    headers: Headers = ()
    #: ``None``: the key's partition (the producer's default partitioner).
    partition: int | None = None


def last_header(headers: Headers, name: str) -> bytes | None:
    """The last value of header ``name`` (Kafka allows repeats; the last one wins), or ``None``."""
    found: bytes | None = None
    for k, v in headers:
        if k == name:
            found = v
    return found


def trace_headers(incoming: Incoming) -> Headers:
    """The trace-context headers of a draft that may be copied onto every derived message: W3C
    values only (``worker.core.messages.tracecontext``), a ``tracestate`` only beside a valid
    parent."""
    headers = incoming.headers
    parents = [v for k, v in headers if k == "traceparent"]
    if len(parents) != 1 or not propagated("traceparent", parents[0]):
        return ()  # W3C: no (single, valid) parent, no trace context at all
    if len(headers) == 1:
        return headers  # that valid parent alone (the usual draft): no second check
    return tuple((k, v) for k, v in headers if k in TRACE_HEADERS and propagated(k, v))
