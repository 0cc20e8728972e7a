"""W3C trace context (``traceparent``), read strictly: a malformed value is no trace context.

Pure: the pipeline uses it to keep a turn's trace context in its state (so the could-not-ground
event of a regeneration timeout carries the trace of the draft that asked for the regeneration),
and the log configuration uses it to put ``trace_id``/``span_id`` on every line about a draft.
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: version-trace_id-parent_id-flags, lower-case hex (W3C Trace Context, level 1).
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16


class TraceContext(NamedTuple):
    """The parts of a valid ``traceparent``."""

    trace_id: str
    span_id: str
    flags: str

    @property
    def traceparent(self) -> str:
        """The header value, version 00."""
        return f"00-{self.trace_id}-{self.span_id}-{self.flags}"


def parse_traceparent(raw: bytes | str | None) -> TraceContext | None:
    """The trace context of a ``traceparent`` value, or ``None`` unless it is W3C-valid.

    Version ``ff`` and all-zero ids are invalid; a version-00 value must be exactly 55
    characters, a later version may append fields after a dash (which are ignored).
    """
    if raw is None:
        return None
    try:
        text = raw.decode("ascii") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        return None
    match = _TRACEPARENT.match(text)
    if match is None:
        return None
    version, trace_id, span_id, flags = match.groups()
    rest = text[match.end() :]
    if version == "ff" or (version == "00" and rest) or (rest and not rest.startswith("-")):
        return None
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return TraceContext(trace_id, span_id, flags)
