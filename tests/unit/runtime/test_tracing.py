"""traceparent is read strictly (W3C Trace Context level 1)."""

from __future__ import annotations

import pytest

from worker.core import TraceContext, parse_traceparent

VALID = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def test_a_valid_traceparent() -> None:
    ctx = parse_traceparent(VALID.encode())
    assert ctx == TraceContext("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "01")
    assert ctx.traceparent == VALID


def test_a_later_version_may_append_fields() -> None:
    ctx = parse_traceparent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra")
    assert ctx is not None
    assert ctx.traceparent == VALID


@pytest.mark.parametrize(
    "raw",
    [
        None,
        b"",
        b"00-a-b-01",
        VALID.upper().encode(),
        (VALID + "-x").encode(),
        (VALID + "x").encode(),
        b"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        b"00-00000000000000000000000000000000-b7ad6b7169203331-01",
        b"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\n",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333\u00e9-01".encode(),
        b"\xff\xfe",
    ],
)
def test_anything_else_is_no_trace_context(raw: bytes | None) -> None:
    assert parse_traceparent(raw) is None
