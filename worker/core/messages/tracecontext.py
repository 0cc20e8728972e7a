"""W3C Trace Context (``traceparent``, ``tracestate``): the one reader, and what may be propagated.

Every place that looks at a trace header goes through here: the propagation of a draft's trace
headers onto its outputs (``worker.core.messages.records.trace_headers``), the trace context a turn
keeps
for its regeneration timeout (``worker.core.batch``), a span's parent on the outputs
(:func:`with_parent`) and the ``trace_id``/``span_id`` of log lines (``worker.runtime.logs``).

A draft's trace headers are copied onto every message derived from it (contract §1), so their
values reach the user-facing topics. Copied verbatim, a value such as ``[DOC-73002] Project Falcon``
would carry a hidden id there. Only values of the W3C format are propagated; others are dropped
(the message goes out without that header). ``tracestate`` members may hold ``[``, ``]``, ``&``
and ``\\`` by the W3C grammar; a value with any of them is dropped too, since they are what a
citation token or a look-alike of one needs (``worker.core.citations.lookalikes``).

``traceparent`` is read strictly (level 1): lower-case hex; version ``ff`` and all-zero ids are
invalid; a version-``00`` value is exactly 55 characters, a later version may append printable
fields after a dash (ignored).
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: ``version-trace_id-parent_id-flags``; a future version may append ``-…`` (W3C §3.2.4).
_TRACEPARENT = re.compile(
    rb"(?!ff)([0-9a-f]{2})-(?!0{32})([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-([0-9a-f]{2})(-[ -~]*)?"
)
_KEY = rb"(?:[a-z][_0-9a-z*/-]{0,255}|[a-z0-9][_0-9a-z*/-]{0,240}@[a-z][_0-9a-z*/-]{0,13})"
_VALUE = rb"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"
_MEMBER = re.compile(rb"[ \t]*" + _KEY + rb"=" + _VALUE + rb"[ \t]*")
_MAX_MEMBERS = 32
_MAX_TRACESTATE = 512
_FORBIDDEN = frozenset(b"[]&\\")


class TraceContext(NamedTuple):
    """The parts of a valid ``traceparent``."""

    trace_id: str
    span_id: str
    flags: str

    @property
    def traceparent(self) -> str:
        """The header value, version 00."""
        return f"00-{self.trace_id}-{self.span_id}-{self.flags}"


def _match(value: bytes) -> re.Match[bytes] | None:
    """The one parse of a ``traceparent`` value: its match, or ``None`` unless W3C-valid."""
    m = _TRACEPARENT.fullmatch(value)
    if m is None or (m[1] == b"00" and m[5] is not None):
        return None
    return m


def valid_traceparent(value: bytes) -> bool:
    """Whether ``value`` is a W3C ``traceparent`` (version ``00`` exactly, later ones by prefix)."""
    return _match(value) is not None


def parse_traceparent(raw: bytes | str | None) -> TraceContext | None:
    """The trace context of a ``traceparent`` value, or ``None`` unless it is W3C-valid."""
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            raw = raw.encode("ascii")
        except UnicodeEncodeError:
            return None
    m = _match(raw)
    if m is None:
        return None
    return TraceContext(m[2].decode("ascii"), m[3].decode("ascii"), m[4].decode("ascii"))


def valid_tracestate(value: bytes) -> bool:
    """Whether ``value`` is a W3C ``tracestate`` free of citation-shaped characters."""
    if not value or len(value) > _MAX_TRACESTATE or not _FORBIDDEN.isdisjoint(value):
        return False
    members = [m for m in value.split(b",") if m.strip(b" \t")]
    return len(members) <= _MAX_MEMBERS and all(_MEMBER.fullmatch(m) for m in members)


def propagated(name: str, value: bytes) -> bool:
    """Whether the trace header ``name: value`` of a draft may be copied onto its outputs."""
    if name == "traceparent":
        return valid_traceparent(value)
    if name == "tracestate":
        return valid_tracestate(value)
    return False


def with_parent(
    headers: tuple[tuple[str, bytes], ...], traceparent: str | bytes
) -> tuple[tuple[str, bytes], ...]:
    """``headers`` with ``traceparent`` naming the worker's span first; a ``tracestate`` is kept."""
    kept = tuple((k, v) for k, v in headers if k != "traceparent")
    value = traceparent.encode("ascii") if isinstance(traceparent, str) else traceparent
    return (("traceparent", value), *kept)
