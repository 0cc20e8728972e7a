"""OpenTelemetry spans: a draft's span is its producer's child, derived messages are its children.

The real pipeline over in-memory seams, with the SDK's in-memory exporter: the parentage a
collector would assemble, read from the finished spans and the published headers.
"""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from test_pipeline import GOOD, RECORDS, TOPICS, Sent, rec, settings

from worker.core import Incoming, InMemoryEvidenceStore, PolicyBook
from worker.runtime.metrics import Metrics
from worker.runtime.spans import Spans, spans_for
from worker.stream.memory import MemoryTurns
from worker.stream.processing.pipeline import BatchProcessor

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PRODUCER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PRODUCER_SPAN}-01".encode()
HIDDEN = "[DOC-777]"


def traced(record: Incoming, *headers: tuple[str, bytes]) -> Incoming:
    return record._replace(headers=headers) if headers else record


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def processor(exporter: InMemorySpanExporter) -> tuple[BatchProcessor, Sent]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sent = Sent()
    proc = BatchProcessor(
        settings=settings(topics=TOPICS),
        evidence=InMemoryEvidenceStore(RECORDS),
        turns=MemoryTurns(),
        publisher=sent,
        policies=PolicyBook(),
        metrics=Metrics(),
        worker_version="test",
        spans=Spans(provider.get_tracer("test"), "agent.drafts"),
    )
    return proc, sent


async def test_the_draft_span_is_the_producers_child_and_every_derived_message_names_it(
    exporter: InMemorySpanExporter,
) -> None:
    proc, sent = processor(exporter)
    await proc.process(
        [traced(rec("t-1", GOOD), ("traceparent", TRACEPARENT), ("tracestate", b"vendor=1"))]
    )

    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"grounding.batch", "grounding.draft"}
    draft, batch = spans["grounding.draft"], spans["grounding.batch"]
    assert draft.kind is SpanKind.CONSUMER
    assert f"{draft.context.trace_id:032x}" == TRACE_ID  # in the producer's trace
    assert draft.parent is not None
    assert f"{draft.parent.span_id:016x}" == PRODUCER_SPAN
    assert draft.parent.is_remote
    assert [link.context.span_id for link in draft.links] == [batch.context.span_id]
    assert draft.attributes is not None
    assert draft.attributes["grounding.outcome"] == "grounded"
    assert draft.attributes["grounding.turn_id"] == "t-1"
    assert draft.attributes["messaging.kafka.offset"] >= 0

    worker_parent = f"00-{TRACE_ID}-{draft.context.span_id:016x}-01".encode()
    published = [(t, dict(h)) for t, _, _, h, _ in sent.records]
    assert [t for t, _ in published] == [TOPICS["validated"], TOPICS["ledger"]]
    for _, headers in published:
        assert headers["traceparent"] == worker_parent
        assert headers["tracestate"] == b"vendor=1"


@pytest.mark.parametrize(
    "parent",
    [
        TRACEPARENT + b"-extra",  # version 00 has exactly four fields
        b" " + TRACEPARENT,  # OpenTelemetry's reader allows the blank; the worker's does not
        TRACEPARENT.replace(b"00-", b"ff-", 1),
    ],
)
async def test_a_parent_the_worker_would_not_propagate_starts_a_new_trace(
    exporter: InMemorySpanExporter, parent: bytes
) -> None:
    """The span's parent is read by the same reader as the propagated headers."""
    proc, sent = processor(exporter)
    await proc.process([traced(rec("t-6", GOOD), ("traceparent", parent))])
    (draft,) = [s for s in exporter.get_finished_spans() if s.name == "grounding.draft"]
    assert draft.parent is None
    assert f"{draft.context.trace_id:032x}" != TRACE_ID
    ctx = draft.context
    own = f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}".encode()
    assert [dict(h) for _, _, _, h, _ in sent.records] == [{"traceparent": own}] * 2


async def test_a_regenerate_request_and_its_state_carry_the_workers_span(
    exporter: InMemorySpanExporter,
) -> None:
    proc, sent = processor(exporter)
    await proc.process([traced(rec("t-2", "Latency rose [OBS-99]."), ("traceparent", TRACEPARENT))])
    (draft,) = [s for s in exporter.get_finished_spans() if s.name == "grounding.draft"]
    assert draft.attributes is not None
    assert draft.attributes["grounding.outcome"] == "regenerate"
    assert list(draft.attributes["grounding.failure_codes"]) == ["dangling_citation"]
    regen = [dict(h) for t, _, _, h, _ in sent.records if t == TOPICS["regenerate"]]
    assert regen[0]["traceparent"] == f"00-{TRACE_ID}-{draft.context.span_id:016x}-01".encode()


async def test_a_dead_letter_keeps_the_drafts_own_headers_and_the_span_says_why(
    exporter: InMemorySpanExporter,
) -> None:
    proc, sent = processor(exporter)
    bad = Incoming("agent.drafts", 0, 7, 0, b"t-3", b"{not json", (("traceparent", TRACEPARENT),))
    await proc.process([bad])
    (draft,) = [s for s in exporter.get_finished_spans() if s.name == "grounding.draft"]
    assert draft.attributes is not None
    assert draft.attributes["grounding.outcome"] == "dead_lettered"
    assert draft.attributes["grounding.error_class"] == "malformed_envelope"
    (headers,) = [dict(h) for t, _, _, h, _ in sent.records if t == TOPICS["dlq"]]
    assert headers["traceparent"] == TRACEPARENT


async def test_no_attribute_or_event_holds_a_citation_id(exporter: InMemorySpanExporter) -> None:
    proc, _ = processor(exporter)
    await proc.process(
        [
            traced(
                rec("t-4", f"Latency rose after the deploy [OBS-1] {HIDDEN}."),
                ("traceparent", TRACEPARENT),
            )
        ]
    )
    for span in exporter.get_finished_spans():
        text = repr(dict(span.attributes or {})) + repr(span.events) + span.name
        assert "DOC-777" not in text
        assert "777" not in text
        assert "OBS-1" not in text


async def test_a_failed_publish_ends_every_span_as_an_error(
    exporter: InMemorySpanExporter,
) -> None:
    proc, sent = processor(exporter)

    def refuse(*_: object, **__: object) -> object:
        raise RuntimeError("broker gone")

    sent.send = refuse  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await proc.process([traced(rec("t-5", GOOD), ("traceparent", TRACEPARENT))])
    finished = exporter.get_finished_spans()
    assert {s.name for s in finished} == {"grounding.batch", "grounding.draft"}
    assert {s.status.status_code for s in finished} == {StatusCode.ERROR}


def test_spans_are_off_unless_asked_for() -> None:
    assert spans_for(settings()) is None
