"""Logging, configured once at the entry point: one JSON stream for everything.

structlog's events and every stdlib logger's records (Faust, mode, aiokafka, asyncpg, warnings)
go to one handler's stream on stderr, rendered alike by the same processors (structlog's
directly, the stdlib's through the handler's ``ProcessorFormatter``): one JSON object
per line with ``timestamp``, ``level``, ``logger``, ``service``, ``version`` and ``event``, plus
``trace_id``/``span_id`` while the worker handles a draft that carried a ``traceparent``
(:func:`trace_scope`). Faust's own logging set-up is turned off (``override_logging=False`` in
``worker.stream.main``), so it cannot replace the handler or colour the output.

Events are key-value (``log.info("draft.routed", outcome=..., turn_id=...)``). No call site ever
passes a hidden citation's id, title, quote or text: the stream loop logs turn, tenant, outcome and
failure codes only, and a test captures the logs of a hidden-document draft to prove it.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

import orjson
import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from worker import __version__
from worker.core import TraceContext, parse_traceparent

SERVICE = "grounding-worker"
#: Third-party loggers kept to warnings and errors unless the level asks for less.
NOISY = ("faust", "mode", "aiokafka", "asyncio", "asyncpg", "pymongo")
#: Loggers whose lines repeat for as long as a server is down (aiokafka logs every failed
#: reconnect, ~165 lines a second with the broker stopped): rate-limited by :class:`RateLimit`.
RATE_LIMITED = ("aiokafka",)


class RateLimit(logging.Filter):
    """At most ``burst`` records per logger and message template every ``window_s`` seconds from
    the loggers named in ``prefixes``; the first record let through after some were dropped
    carries ``suppressed``, how many. The worker's own ``kafka.unreachable`` line says what the
    repetition meant (``worker/runtime/broker_watch.py``)."""

    def __init__(
        self,
        prefixes: tuple[str, ...] = RATE_LIMITED,
        *,
        burst: int = 3,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._prefixes = prefixes
        self._burst = burst
        self._window_s = window_s
        self._clock = clock
        #: (logger, template) -> [window start, records let through, records dropped]
        self._seen: dict[tuple[str, str], list[float]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(self._prefixes):
            return True
        key = (record.name, str(record.msg))
        now = self._clock()
        state = self._seen.get(key)
        if state is None or now - state[0] >= self._window_s:
            dropped = int(state[2]) if state is not None else 0
            if len(self._seen) > 1000:  # templates are few; never let the table grow unbounded
                self._seen.clear()
            self._seen[key] = [now, 1, 0]
            if dropped:
                record.suppressed = dropped
            return True
        if state[1] < self._burst:
            state[1] += 1
            return True
        state[2] += 1
        return False


def _add_service(_: WrappedLogger, __: str, event: EventDict) -> EventDict:
    event.setdefault("service", SERVICE)
    event.setdefault("version", __version__)
    return event


def _add_logger_name(logger: WrappedLogger, _: str, event: EventDict) -> EventDict:
    """``logger``: the stdlib logger's name (a record's, or the structlog logger's)."""
    record = event.get("_record")
    if record is not None:
        event["logger"] = record.name
    elif "logger" not in event:
        name = getattr(logger, "name", None)
        if name:
            event["logger"] = name
    return event


#: The trace context of the draft being handled (``trace_scope``): one variable set and reset per
#: draft. structlog's ``bound_contextvars`` did the same with two variables and a copy of the
#: whole context on entry (~4.5 us a draft; this ~1).
_TRACE: contextvars.ContextVar[TraceContext | None] = contextvars.ContextVar(
    "grounding_trace", default=None
)


def _add_trace(_: WrappedLogger, __: str, event: EventDict) -> EventDict:
    """``trace_id``/``span_id`` of the draft being handled, if it carried a valid trace."""
    ctx = _TRACE.get()
    if ctx is not None:
        event.setdefault("trace_id", ctx.trace_id)
        event.setdefault("span_id", ctx.span_id)
    return event


class TraceScope:
    """Inside, every log line carries the ``trace_id``/``span_id`` of ``ctx`` (if any)."""

    __slots__ = ("_ctx", "_token")

    def __init__(self, ctx: TraceContext | None) -> None:
        self._ctx = ctx
        self._token: contextvars.Token[TraceContext | None] | None = None

    def __enter__(self) -> None:
        if self._ctx is not None:  # no trace context: an enclosing scope's stays
            self._token = _TRACE.set(self._ctx)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _TRACE.reset(self._token)
            self._token = None


def trace_scope(traceparent: bytes | str | None) -> TraceScope:
    """Inside, every log line carries the ``trace_id``/``span_id`` of a valid ``traceparent``."""
    return TraceScope(parse_traceparent(traceparent))


class _LineWriter:
    """structlog's logger: writes each rendered event as one line to the handler's stream.

    structlog events skip the stdlib ``LogRecord`` and its formatter (about 5 x cheaper per line
    on the hot path, one ``draft.routed`` per draft); they take the handler's lock, so a line
    never interleaves with a stdlib record's.
    """

    def __init__(self, handler: logging.StreamHandler[TextIO], name: str) -> None:
        self._handler = handler
        self.name = name

    def msg(self, line: str) -> None:
        handler = self._handler
        with handler.lock or contextlib.nullcontext():
            handler.stream.write(line + "\n")
            handler.flush()

    debug = info = warning = warn = error = critical = exception = fatal = log = msg


def _orjson_lines(_: WrappedLogger, __: str, event: EventDict) -> str:
    """One JSON object per line; what JSON cannot hold is written as its ``repr``.

    orjson refuses an integer beyond 64 bits (a draft's ``attempt`` may be one: the envelope
    only asks for an integer >= 0) without asking ``default``; the standard library writes it.
    A log line that raised would dead-letter the draft being routed (``internal_error``).
    """
    try:
        return orjson.dumps(event, default=repr, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        plain = {str(k): v for k, v in event.items()}
        return json.dumps(plain, default=repr, ensure_ascii=False)


def configure_logging(
    level: str = "INFO", *, json: bool = True, stream: TextIO | None = None
) -> None:
    """Route structlog and the stdlib loggers through one formatter on ``stream`` (stderr)."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        _add_trace,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    finish: list[Processor] = [
        _add_service,
        structlog.processors.format_exc_info,
        _orjson_lines if json else structlog.dev.ConsoleRenderer(colors=False),
    ]
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(RateLimit())
    structlog.configure(
        processors=[*shared, _add_logger_name, *finish],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=lambda *args: _LineWriter(handler, str(args[0]) if args else ""),
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()],
        processors=[
            _add_logger_name,
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *finish,
        ],
    )
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric)
    for name in NOISY:
        logging.getLogger(name).setLevel(max(numeric, logging.WARNING))
    logging.captureWarnings(True)
