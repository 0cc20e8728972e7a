"""One JSON stream: structlog events and stdlib records (Faust, aiokafka) rendered alike."""

from __future__ import annotations

import io
import json
import logging
import warnings
from collections.abc import Iterator

import pytest
import structlog

from worker import __version__
from worker.runtime.logs import configure_logging, trace_scope

TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    out = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, structlog.get_config())
    configure_logging("INFO", json=True, stream=out)
    try:
        yield out
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        structlog.configure(**saved[2])
        logging.captureWarnings(False)
        for name in ("faust", "mode", "aiokafka", "asyncio", "asyncpg", "pymongo"):
            logging.getLogger(name).setLevel(logging.NOTSET)


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    text = stream.getvalue()
    docs = [json.loads(line) for line in text.splitlines()]
    assert len(docs) == len(text.splitlines())  # every line is one JSON object
    return docs


def test_structlog_and_stdlib_lines_share_one_shape(stream: io.StringIO) -> None:
    structlog.get_logger("worker.test").info("draft.routed", turn_id="t-1")
    logging.getLogger("faust.transport").warning("Heartbeat failed for %s", "group-1")
    logging.getLogger("aiokafka.consumer").info("not shown below WARNING")
    first, second = lines(stream)
    for doc in (first, second):
        assert doc["service"] == "grounding-worker"
        assert doc["version"] == __version__
        assert "timestamp" in doc
    assert first["logger"] == "worker.test"
    assert first["event"] == "draft.routed"
    assert first["level"] == "info"
    assert first["turn_id"] == "t-1"
    assert second["logger"] == "faust.transport"
    assert second["event"] == "Heartbeat failed for group-1"
    assert second["level"] == "warning"


def test_lines_about_a_traced_draft_carry_its_ids(stream: io.StringIO) -> None:
    log = structlog.get_logger("worker.test")
    with trace_scope(TRACE.encode()):
        log.info("inside")
        logging.getLogger("faust.x").error("inside, stdlib")
    log.info("outside")
    with trace_scope(b"00-a-b-01"):
        log.info("invalid trace")
    inside, inside_stdlib, outside, invalid = lines(stream)
    for doc in (inside, inside_stdlib):
        assert doc["trace_id"] == "0af7651916cd43dd8448eb211c80319c"
        assert doc["span_id"] == "b7ad6b7169203331"
    for doc in (outside, invalid):
        assert "trace_id" not in doc
        assert "span_id" not in doc


def test_warnings_and_exceptions_are_json_too(stream: io.StringIO) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # the suite turns warnings into errors
        warnings.warn("something odd", UserWarning, stacklevel=1)
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("mode.x").exception("failed")
    warn, exc = lines(stream)
    assert warn["logger"] == "py.warnings"
    assert "something odd" in str(warn["event"])
    assert exc["logger"] == "mode.x"
    assert "ValueError: boom" in str(exc["exception"])


def test_an_integer_beyond_64_bits_is_written_exactly(stream: io.StringIO) -> None:
    """A draft may carry ``attempt`` past 2^63-1 (any integer >= 0 is valid): its
    ``draft.routed`` line must be written, or the draft is dead-lettered ``internal_error``."""
    huge = 10**400 + 7
    structlog.get_logger("worker.test").info("draft.routed", attempt=huge, turn_id="t-1")
    (doc,) = lines(stream)
    assert doc["attempt"] == huge
    assert doc["event"] == "draft.routed"
    assert doc["service"] == "grounding-worker"
