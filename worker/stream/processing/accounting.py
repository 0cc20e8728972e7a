"""What each route of a batch is told: its log line, its metrics and its span's attributes.

The core decided every record (``decide_batch``); this counts and logs what it decided, as the
records go out in decision order, and each draft's end-to-end latency once they are
acknowledged. Nothing here changes a record.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import structlog
from prometheus_client import Counter

from worker.core import BatchOutcome, BatchPlan, ErrorClass, Incoming, Outcome, OutRecord, Route
from worker.runtime.logs import trace_scope
from worker.runtime.metrics import Metrics
from worker.runtime.spans import Spans

log = structlog.get_logger("worker.pipeline")


@dataclass
class BatchReport:
    """What one batch did, for logs, metrics and tests."""

    outcomes: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    dead_letters: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    store_fetches: int = 0
    published: int = 0


class _ByLabel:
    """A counter with one label, its child per label value resolved once (``labels()`` per draft
    cost ~1 us of keyword and lock handling; a child's ``inc`` ~0.25)."""

    __slots__ = ("_children", "_counter", "_label")

    def __init__(self, counter: Counter, label: str) -> None:
        self._counter = counter
        self._label = label
        self._children: dict[str, Counter] = {}

    def inc(self, value: str) -> None:
        child = self._children.get(value)
        if child is None:
            child = self._children[value] = self._counter.labels(**{self._label: value})
        child.inc()


class Accounting:
    """The logs, metrics and span attributes of a batch's routes; one per batch processor."""

    def __init__(self, metrics: Metrics) -> None:
        self._drafts = _ByLabel(metrics.drafts, "outcome")
        self._failure_codes = _ByLabel(metrics.failure_codes, "code")
        self._dead_letters = _ByLabel(metrics.dead_letters, "error_class")
        self._latency_produced = metrics.draft_latency.labels(since="produced_at")
        self._latency_record = metrics.draft_latency.labels(since="record")

    def routes(
        self,
        decided: BatchOutcome,
        report: BatchReport,
        drafts: Sequence[Any],
        parents: Sequence[str | None] | None,
    ) -> list[OutRecord]:
        """The batch's records in decision order (dead letters in their place); each route logged
        and counted (and its span told) on the way."""
        out: list[OutRecord] = []
        for position, route in enumerate(decided.routes):
            rec = route.incoming
            span = drafts[position] if drafts else None
            trace: bytes | str | None = rec.header("traceparent")
            if parents is not None and not route.planned.is_control:
                trace = parents[position]
            with trace_scope(trace):
                self._account(route, report, span)
                if route.dead_letter is not None:
                    self.dead_lettered(rec, route.dead_letter.error_class, report, span)
                out.extend(route.records)
        return out

    def _account(self, route: Route, report: BatchReport, span: Any) -> None:
        """One route's logs, metrics and span attributes (a dead letter's: ``_dead_lettered``)."""
        rec, planned = route.incoming, route.planned
        if route.error is not None:
            error = type(route.error).__name__
            stage = {"stage": "classify"} if planned.error is not None else {}
            if not stage and span is not None:
                Spans.failed(span, error)
            # Not log.exception: a traceback may quote draft text; it goes to DEBUG only.
            log.error(
                "draft.internal_error",
                **stage,
                error=error,
                topic=rec.topic,
                partition=rec.partition,
                offset=rec.offset,
            )
            log.debug("draft.internal_error.trace", exc_info=route.error)
        if route.dead_letter is not None:
            return
        if planned.is_control:
            self._account_control(route, report)
            return
        judgement = route.judgement
        if judgement is None:
            raise TypeError("a decided draft's route carries its judgement")
        draft, outcome = judgement.admitted.draft, judgement.outcome
        codes = judgement.failure_codes
        for code in codes:
            self._failure_codes.inc(code)
        self._drafts.inc(outcome)
        report.outcomes[outcome] += 1
        log.info(
            "draft.routed",
            turn_id=draft.turn_id,
            tenant_id=draft.tenant_id,
            draft_id=draft.draft_id,
            attempt=draft.attempt,
            outcome=outcome,
            codes=codes,
        )
        if span is not None:
            Spans.routed(
                span,
                outcome=outcome,
                turn_id=draft.turn_id,
                tenant_id=draft.tenant_id,
                attempt=draft.attempt,
                codes=codes,
            )

    def _account_control(self, route: Route, report: BatchReport) -> None:
        rec, control = route.incoming, route.planned.control
        if control is None:
            log.warning("control.ignored", partition=rec.partition, offset=rec.offset)
        elif route.outcome is Outcome.EXPIRED:
            report.outcomes[Outcome.EXPIRED] += 1
        elif route.outcome is not None:
            self._drafts.inc(route.outcome)
            report.outcomes[route.outcome] += 1
            with trace_scope(route.traceparent):
                log.info("turn.timed_out", turn_id=control.turn_id, outcome=route.outcome)

    def observe_latency(self, plan: BatchPlan) -> None:
        """Each draft's end-to-end latency, now that its outputs are acknowledged."""
        now = time.time()
        for planned in plan.records:
            admitted = planned.admitted
            if admitted is None:
                continue
            produced = _epoch_s(admitted.draft.produced_at)
            if produced is None:
                since = now - planned.incoming.timestamp_ms / 1000
                self._latency_record.observe(since if since > 0 else 0.0)
            else:
                since = now - produced
                self._latency_produced.observe(since if since > 0 else 0.0)

    def dead_lettered(
        self, rec: Incoming, error_class: ErrorClass, report: BatchReport, span: Any = None
    ) -> None:
        """A dead letter's logs, metrics and span attributes (the core composed its record)."""
        self._dead_letters.inc(error_class.value)
        report.dead_letters[error_class.value] += 1
        if span is not None:
            Spans.dead_lettered(span, error_class.value)
        log.warning(
            "draft.dead_lettered",
            error_class=error_class.value,
            topic=rec.topic,
            partition=rec.partition,
            offset=rec.offset,
        )


def _epoch_s(produced_at: str | None) -> float | None:
    """Seconds since the epoch of an RFC 3339 ``produced_at``; ``None`` if absent or unreadable
    (or without a UTC offset: its instant is unknown)."""
    if not produced_at:
        return None
    try:
        when = datetime.fromisoformat(produced_at)
    except ValueError:
        return None
    return when.timestamp() if when.tzinfo is not None else None
