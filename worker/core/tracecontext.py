"""W3C Trace Context headers (``traceparent``, ``tracestate``): which values may be propagated.

A draft's trace headers are copied onto every message derived from it (contract §1), so their
values reach the user-facing topics. Copied verbatim, a value such as ``[DOC-73002] Project Falcon``
would carry a hidden id there. Only values of the W3C format are propagated; others are dropped
(the message goes out without that header). ``tracestate`` members may hold ``[``, ``]``, ``&``
and ``\\`` by the W3C grammar; a value with any of them is dropped too, since they are what a
citation token or a look-alike of one needs (``worker.core.lookalikes``).
"""

from __future__ import annotations

import re

#: ``version-trace_id-parent_id-flags``; a future version may append ``-…`` (W3C §3.2.4).
_TRACEPARENT = re.compile(
    rb"(?!ff)([0-9a-f]{2})-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}(-[ -~]*)?"
)
_KEY = rb"(?:[a-z][_0-9a-z*/-]{0,255}|[a-z0-9][_0-9a-z*/-]{0,240}@[a-z][_0-9a-z*/-]{0,13})"
_VALUE = rb"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"
_MEMBER = re.compile(rb"[ \t]*" + _KEY + rb"=" + _VALUE + rb"[ \t]*")
_MAX_MEMBERS = 32
_MAX_TRACESTATE = 512
_FORBIDDEN = frozenset(b"[]&\\")


def valid_traceparent(value: bytes) -> bool:
    """Whether ``value`` is a W3C ``traceparent`` (version ``00`` exactly, later ones by prefix)."""
    m = _TRACEPARENT.fullmatch(value)
    if m is None:
        return False
    return m[1] != b"00" or m[2] is None


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
