"""One batch of ``agent.drafts`` records: plan, fetch, decide, store the turns, publish.

This is the whole imperative shell around the core's batch use case (``worker.core.batch``, the
steps ``check`` takes): :func:`plan_record` reads each record (``check`` calls
:func:`plan_batch`, which is that over a whole batch; here the look-ahead may have read some of
the batch's records already, so the :class:`BatchPlan` is assembled here), the batch's one evidence
fetch and the turn table's reads follow, :func:`decide_batch` decides every record in order, and
what it decided is written (the turn table) and published. It holds no rule of its own and owns
no Kafka client and no table: the Faust agent hands it plain :class:`Incoming` values and gives
it a :class:`TurnStore` and a :class:`Publisher`.

IO rules it keeps (contract §7):

- Evidence for the whole batch is fetched in one call across its tenants (the adapters turn that
  into one query per table or collection, every id matched with its tenant). An unavailable store
  is retried with capped exponential backoff and the batch waits: nothing is decided and nothing
  is acknowledged meanwhile (``worker.stream.processing.resolve``). A tenant whose evidence cannot
  be had is handed to the core, which dead-letters its drafts; no infrastructure fault ever yields a
  regenerate request or a could-not-ground event.
- Outputs are sent and acknowledged by the broker before the batch returns (and so before Faust
  acknowledges its offsets). Should the process die in between, the redelivered draft finds the
  turn's recorded state and the core re-publishes the same messages, with the same event ids.
- Logs carry turn, tenant, draft, outcome and failure codes: never a citation.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog
from prometheus_client import Counter

from worker.core import (
    BatchOutcome,
    BatchPlan,
    BatchRules,
    ErrorClass,
    EvidenceStore,
    Incoming,
    Outcome,
    OutRecord,
    Planned,
    PolicyBook,
    Route,
    TurnState,
    decide_batch,
    failed_batch,
    plan_record,
    wanted_of,
)
from worker.faults import RetriableFault
from worker.runtime.logs import trace_scope
from worker.runtime.metrics import Metrics
from worker.runtime.retry import backoff_delays, half_jitter
from worker.runtime.spans import Spans, traceparent_of
from worker.settings import Settings
from worker.stream.intake.lookahead import Lookahead, merged, record_key
from worker.stream.processing.resolve import BatchResolver, Resolved
from worker.stream.seams import BulkPublisher, Publisher, TurnStore

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


class BatchProcessor:
    """Decides batches of drafts and routes every verdict; one instance per consumer task."""

    def __init__(
        self,
        *,
        settings: Settings,
        evidence: EvidenceStore,
        turns: TurnStore,
        publisher: Publisher,
        policies: PolicyBook,
        metrics: Metrics,
        worker_version: str,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        also_publish: Callable[[], Sequence[OutRecord]] | None = None,
        spans: Spans | None = None,
    ) -> None:
        self._settings = settings
        #: OpenTelemetry spans (``worker/runtime/spans.py``), or ``None`` when they are off.
        self._spans = spans
        #: Records the turn store deferred (its changelog): sent and acknowledged with the outputs.
        self._also_publish = also_publish
        self._resolver = BatchResolver(evidence=evidence, settings=settings, metrics=metrics)
        self._turns = turns
        self._publisher = publisher
        self._lookahead: Lookahead[Planned] = Lookahead(self._plan, self._resolve_ahead)
        self._policies = policies
        self._metrics = metrics
        self._stage_seconds = {
            stage: metrics.batch_stage_seconds.labels(stage=stage)
            for stage in ("evidence", "decide", "publish")
        }
        self._drafts = _ByLabel(metrics.drafts, "outcome")
        self._failure_codes = _ByLabel(metrics.failure_codes, "code")
        self._dead_letters = _ByLabel(metrics.dead_letters, "error_class")
        self._latency_produced = metrics.draft_latency.labels(since="produced_at")
        self._latency_record = metrics.draft_latency.labels(since="record")
        self._clock = clock
        self._delay = backoff_delays(
            settings.retry_initial_backoff_s, settings.retry_max_backoff_s, jitter=half_jitter
        )
        self._rules = BatchRules(
            topics=settings.topics.by_role(),
            retention_s=settings.turn_retention_s,
            worker_version=worker_version,
        )

    # ------------------------------------------------------------------------------------------
    async def process(self, batch: Sequence[Incoming]) -> BatchReport:
        """Decide and route every record of ``batch``; return when all outputs are acknowledged.

        What a look-ahead (:meth:`look_ahead`) already did for its records is used.
        """
        report = BatchReport()
        self._metrics.batch_size.observe(len(batch))
        started = time.perf_counter()
        plan, resolved = await self._planned(batch, report)
        fetched = time.perf_counter()
        now = self._clock()
        states, unreadable = self._read_turns(plan.turn_ids)
        spans = self._spans
        opened: list[Any] = []
        drafts: list[Any] = []  # each record's span (``None``: a control record)
        parents: list[str | None] | None = None
        if spans is not None:
            batch_span = spans.batch(len(batch))
            opened.append(batch_span)
            parents = []
            for planned in plan.records:  # a control record has no trace: no span
                span = None if planned.is_control else spans.draft(planned.incoming, batch_span)
                if span is not None:
                    opened.append(span)
                drafts.append(span)
                parents.append(None if span is None else traceparent_of(span))
        decided = decide_batch(
            plan,
            resolved.evidence,
            states,
            now,
            self._rules,
            unavailable=resolved.unavailable,
            unreadable=unreadable,
            parents=parents,
        )
        self._write_turns(decided)
        out = self._accounted(decided, report, drafts, parents)
        if self._also_publish is not None:
            out.extend(self._also_publish())
        done = time.perf_counter()
        if spans is None:
            await self._publish(out)
        else:
            await self._publish_spanned(out, spans, opened)
        self._observe_latency(plan)
        stage = self._stage_seconds
        stage["evidence"].observe(fetched - started)
        stage["decide"].observe(done - fetched)
        stage["publish"].observe(time.perf_counter() - done)
        report.published = len(out)
        return report

    def _read_turns(
        self, turn_ids: Sequence[str]
    ) -> tuple[dict[str, TurnState], dict[str, Exception]]:
        """The stored state of each turn, and the turns whose state could not be read."""
        states: dict[str, TurnState] = {}
        unreadable: dict[str, Exception] = {}
        for turn_id in turn_ids:
            try:
                stored = self._turns.get(turn_id)
            except Exception as exc:  # noqa: BLE001 - that turn's records are dead-lettered
                unreadable[turn_id] = exc
                continue
            if stored is not None:
                states[turn_id] = stored.state
        return states, unreadable

    def _write_turns(self, decided: BatchOutcome) -> None:
        """The turn table's writes, in the order the core decided them."""
        for write in decided.turn_writes:
            if write.state is None:
                self._turns.delete(write.turn_id, write.partition)
            else:
                self._turns.put(write.turn_id, write.partition, write.state)

    def _accounted(
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
                    self._dead_lettered(rec, route.dead_letter.error_class, report, span)
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

    async def _publish_spanned(
        self, out: Sequence[OutRecord], spans: Spans, opened: Sequence[Any]
    ) -> None:
        """Publish, then end the batch's spans (as errors if the publish did not land)."""
        try:
            await self._publish(out)
        except BaseException as exc:
            spans.end(opened[::-1], exc)
            raise
        spans.end(opened[::-1])

    def _observe_latency(self, plan: BatchPlan) -> None:
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

    def look_ahead(self, records: Sequence[Incoming]) -> None:
        """Admit ``records`` (the next batch) and fetch their evidence in the background."""
        self._lookahead.start(records)

    def close(self) -> None:
        """Drop the look-ahead in flight (the consumer is stopping)."""
        self._lookahead.cancel()

    async def _planned(
        self, batch: Sequence[Incoming], report: BatchReport
    ) -> tuple[BatchPlan, Resolved]:
        """The batch's plan and evidence, with what the look-ahead already did for it."""
        ahead = await self._lookahead.claim(batch)
        if ahead is None:
            plan = BatchPlan(tuple(self._plan(rec) for rec in batch))
            return plan, await self._resolve(plan.records, report)
        report.store_fetches += ahead.fetches
        planned: list[Planned] = []
        rest: list[Planned] = []
        for rec in batch:
            item = ahead.items.get(record_key(rec))
            if item is None:
                item = self._plan(rec)
                rest.append(item)
            planned.append(item)
        plan = BatchPlan(tuple(planned))
        if not rest:
            return plan, ahead.resolved
        extra = await self._resolve(rest, report)
        return plan, Resolved(merged(ahead.resolved.evidence, extra.evidence), extra.unavailable)

    def _plan(self, rec: Incoming) -> Planned:
        return plan_record(rec, self._policies, max_bytes=self._settings.max_draft_bytes)

    async def _resolve_ahead(self, items: Sequence[Planned]) -> tuple[Resolved, int]:
        report = BatchReport()
        return await self._resolve(items, report), report.store_fetches

    async def dead_letter_batch(self, batch: Sequence[Incoming], error: str) -> BatchReport:
        """Dead-letter every record of a batch that failed as a whole (``internal_error``).

        The same dead letters, logs and metrics as one poison record's; returns once the broker
        acknowledged them all (a broker that refuses them raises, for the caller to retry).
        """
        report = BatchReport()
        out: list[OutRecord] = []
        for route in failed_batch(batch, error, self._clock(), self._rules):
            if route.dead_letter is not None:
                self._dead_lettered(route.incoming, route.dead_letter.error_class, report)
            out.extend(route.records)
        await self._publish(out)
        report.published = len(out)
        return report

    async def _resolve(self, items: Sequence[Planned], report: BatchReport) -> Resolved:
        """The evidence of every admitted draft of ``items``, by tenant
        (``stream/processing/resolve.py``)."""

        def counted() -> None:
            report.store_fetches += 1

        return await self._resolver.resolve(wanted_of(items), counted)

    def _dead_lettered(
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

    async def _publish(self, out: Sequence[OutRecord]) -> None:
        """Send every record and wait for the broker's acknowledgements; retry what failed.

        Records are handed to the producer in decision order (one by one, or in one bulk
        hand-over that keeps each partition's order, ``GW_PRODUCE_BATCHED``), and only then
        awaited together: a turn's outputs reach its partition in the order they were decided.
        """
        bulk = self._publisher if self._settings.produce_batched else None
        if not isinstance(bulk, BulkPublisher):
            bulk = None
        pending = list(out)
        attempt = 0
        while pending:
            acks: list[asyncio.Future[object] | RetriableFault] = []
            if bulk is not None:
                acks.extend(await bulk.send_many(pending))
            else:
                for o in pending:
                    try:
                        sent = await self._publisher.send(o)
                    except RetriableFault as refused:
                        acks.append(refused)
                    else:
                        acks.append(asyncio.ensure_future(sent))  # a future stays itself
            futures = [a for a in acks if isinstance(a, asyncio.Future)]
            if futures:
                await asyncio.wait(futures)
            failed: list[OutRecord] = []
            for o, ack in zip(pending, acks, strict=True):
                fault = ack.exception() if isinstance(ack, asyncio.Future) else ack
                if isinstance(fault, RetriableFault):
                    failed.append(o)
                elif fault is not None:
                    raise fault
            if not failed:
                return
            attempt += 1
            wait = self._delay(attempt)
            log.warning("broker.retry", attempt=attempt, pending=len(failed), wait_s=round(wait, 3))
            await asyncio.sleep(wait)
            pending = failed


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
