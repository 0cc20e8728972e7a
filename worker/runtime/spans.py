"""OpenTelemetry spans: one per batch, one per draft inside its producer's trace. Off by default.

With ``GW_OTEL_ENABLED=true`` the worker records

- ``grounding.batch`` (kind INTERNAL): one per batch of drafts, with the number of records;
- ``grounding.draft`` (kind CONSUMER): one per record, whose **parent is the producer's context**
  (the draft's W3C ``traceparent``/``tracestate``; a new trace without one), **linked** to its
  batch's span, with the outcome, the failure codes or the dead-letter class, the turn and
  tenant as attributes. It ends when the batch's outputs are acknowledged.

Every message derived from the draft (validated, regenerate, could-not-ground, ledger) then carries
the draft span as its parent, so the worker sits in the agent turn's trace between the producer
and the UI. Dead letters keep the draft's own headers (they are the draft, for ``replay``).

No attribute ever holds a citation id, a title, a quote or any text: only what the log line of
the same draft holds (``draft.routed``). When spans are off, the pipeline holds ``None`` and pays
one ``is None`` test per draft; ``opentelemetry-api`` is imported only here.

The SDK and the OTLP exporter are the optional ``otel`` extra; the exporter reads the standard
``OTEL_EXPORTER_OTLP_*`` variables. A tracer provider already installed (by
``opentelemetry-instrument``, say) is used as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    Tracer,
    TraceState,
)

from worker import __version__
from worker.core import Incoming, parse_traceparent
from worker.faults import UsageFault
from worker.settings import Settings

TRACER_NAME = "grounding-worker"


class SpansUnavailableError(UsageFault):
    """``GW_OTEL_ENABLED`` is set but the SDK is not installed (the ``otel`` extra)."""


def traceparent_of(span: Span) -> str | None:
    """The W3C ``traceparent`` naming ``span`` as the parent, or ``None`` for an invalid span."""
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def _producer_context(incoming: Incoming) -> Context:
    """The producer's span, as the draft span's parent: the draft's first ``traceparent`` read by
    the worker's one reader (``worker.core.messages.tracecontext``), with its first ``tracestate``;
    without
    a valid one, an empty context (the draft span starts a new trace)."""
    first: dict[str, bytes] = {}
    for key, value in incoming.headers:
        if key in {"traceparent", "tracestate"} and key not in first:
            first[key] = value
    parent = parse_traceparent(first.get("traceparent"))
    if parent is None:
        return Context()
    state = None
    if "tracestate" in first:
        try:
            state = TraceState.from_header([first["tracestate"].decode("ascii")])
        except UnicodeDecodeError:
            state = None
    span = SpanContext(
        trace_id=int(parent.trace_id, 16),
        span_id=int(parent.span_id, 16),
        is_remote=True,
        trace_flags=TraceFlags(int(parent.flags, 16)),
        trace_state=state,
    )
    return trace.set_span_in_context(NonRecordingSpan(span))


class Spans:
    """Starts and ends the worker's spans over one tracer."""

    def __init__(self, tracer: Tracer, drafts_topic: str) -> None:
        self._tracer = tracer
        self._topic = drafts_topic

    def batch(self, size: int) -> Span:
        """The span of one batch of ``size`` records (ended by :meth:`end`)."""
        return self._tracer.start_span(
            "grounding.batch",
            kind=SpanKind.INTERNAL,
            attributes={
                "messaging.system": "kafka",
                "messaging.destination.name": self._topic,
                "messaging.batch.message_count": size,
            },
        )

    def draft(self, incoming: Incoming, batch: Span) -> Span:
        """The span of one record: child of its producer's context, linked to ``batch``."""
        return self._tracer.start_span(
            "grounding.draft",
            context=_producer_context(incoming),
            kind=SpanKind.CONSUMER,
            links=[Link(batch.get_span_context())],
            attributes={
                "messaging.system": "kafka",
                "messaging.operation.type": "process",
                "messaging.destination.name": incoming.topic,
                "messaging.destination.partition.id": str(incoming.partition),
                "messaging.kafka.offset": incoming.offset,
            },
        )

    @staticmethod
    def routed(
        span: Span,
        *,
        outcome: str,
        turn_id: str | None = None,
        tenant_id: str | None = None,
        codes: Sequence[str] = (),
        attempt: int | None = None,
    ) -> None:
        """What became of the draft: the same fields as its ``draft.routed`` log line."""
        attributes: dict[str, Any] = {"grounding.outcome": outcome}
        if turn_id is not None:
            attributes["grounding.turn_id"] = turn_id
        if tenant_id is not None:
            attributes["grounding.tenant_id"] = tenant_id
        if attempt is not None:
            attributes["grounding.attempt"] = attempt
        if codes:
            attributes["grounding.failure_codes"] = list(codes)
        span.set_attributes(attributes)

    @staticmethod
    def dead_lettered(span: Span, error_class: str) -> None:
        """The record was dead-lettered with ``error_class`` (``dlq.error.class``)."""
        span.set_attributes(
            {"grounding.outcome": "dead_lettered", "grounding.error_class": error_class}
        )

    @staticmethod
    def failed(span: Span, error: str) -> None:
        """The record could not be processed (it was dead-lettered as an internal error)."""
        span.set_status(Status(StatusCode.ERROR, error))

    @staticmethod
    def end(spans: Sequence[Span], error: BaseException | None = None) -> None:
        """End ``spans``; with ``error``, mark them failed first (a publish that did not land)."""
        for span in spans:
            if error is not None:
                span.set_status(Status(StatusCode.ERROR, type(error).__name__))
            span.end()


def spans_for(settings: Settings) -> Spans | None:
    """The worker's spans when ``GW_OTEL_ENABLED``, else ``None`` (and no cost)."""
    if not settings.otel_enabled:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider):  # nobody installed one: ours, over OTLP
        provider = _otlp_provider(settings)
        trace.set_tracer_provider(provider)
    return Spans(provider.get_tracer(TRACER_NAME, __version__), settings.topics.drafts)


def _otlp_provider(settings: Settings) -> trace.TracerProvider:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
            OTLPSpanExporter,
        )
        from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
        from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
        from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415
    except ImportError as exc:
        raise SpansUnavailableError(
            "GW_OTEL_ENABLED=true needs the OpenTelemetry SDK and OTLP exporter: "
            "pip install 'grounding-worker[otel]'"
        ) from exc
    resource = Resource.create(
        {"service.name": settings.otel_service_name, "service.version": __version__}
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider
