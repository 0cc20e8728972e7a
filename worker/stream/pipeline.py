"""One batch of ``agent.drafts`` records: classify, resolve once, decide in order, publish.

This is the whole imperative shell around the pure core: each draft is admitted and judged by
``worker.core.grounding`` (the same two calls ``check`` makes), with the batch's one evidence fetch
in between. It owns no Kafka client and no table:
the Faust agent hands it plain :class:`Incoming` values and gives it a :class:`TurnStore` and a
:class:`Publisher`, so the ordering and fault rules below can be read (and tested) in one place.

Rules it keeps (contract §7):

- Records are decided in the order they were consumed; a turn's drafts share a partition, so a
  turn's second draft always sees the state its first draft left.
- Evidence for the whole batch is fetched in one call across its tenants (the adapters turn that
  into one query per table or collection, every id matched with its tenant). An unavailable store
  is retried with capped exponential backoff and the batch waits: nothing is decided and nothing
  is acknowledged meanwhile. With a finite budget, a draft past it is dead-lettered as
  ``infra_unavailable``; no infrastructure fault ever yields a regenerate request or a
  could-not-ground event.
- Any other exception on one record dead-letters that record (``internal_error``), so a poison
  draft neither blocks its partition nor loops.
- Outputs are sent and acknowledged by the broker before the batch returns (and so before Faust
  acknowledges its offsets). Should the process die in between, the redelivered draft finds the
  turn's recorded state and the core re-publishes the same messages, with the same event ids.
- Logs carry turn, tenant, draft, outcome and failure codes: never a citation.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

import structlog
from prometheus_client import Counter

from worker.core.contract import ErrorClass, Outcome, TopicRole
from worker.core.envelope import EnvelopeRejection
from worker.core.evidence import CitationRef, EvidenceRecord
from worker.core.grounding import Admitted, admit, judge
from worker.core.policy import PolicyBook
from worker.core.ports import EvidenceStore
from worker.core.support import SourceIndex
from worker.core.turns import Decision, TurnPhase, TurnState, expired, on_deadline
from worker.faults import RetriableFault
from worker.kafka.control import Control, ControlKind, is_control, parse_control
from worker.kafka.dlq import dead_letter
from worker.kafka.records import Headers, Incoming, trace_headers
from worker.logs import trace_scope
from worker.metrics import Metrics
from worker.retry import (
    backoff_delays,
    half_jitter,
)
from worker.settings import Settings
from worker.spans import Spans, traceparent_of, with_parent
from worker.stream.lookahead import Lookahead, merged, record_key
from worker.stream.ports import BulkPublisher, Publisher, TurnStore
from worker.stream.resolve import BatchResolver, Resolved
from worker.tracing import parse_traceparent

log = structlog.get_logger("worker.pipeline")


class Outgoing(NamedTuple):
    """One record to append, with its destination."""

    topic: str
    key: bytes | None
    value: bytes
    headers: Headers
    partition: int | None = None


@dataclass
class _Item:
    """One consumed record on its way through the batch."""

    incoming: Incoming
    control: Control | None = None
    admitted: Admitted | None = None
    rejection: EnvelopeRejection | None = None


@dataclass
class BatchReport:
    """What one batch did, for logs, metrics and tests."""

    outcomes: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    dead_letters: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    store_fetches: int = 0
    published: int = 0


def _utc_from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000.0, tz=UTC)


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
        also_publish: Callable[[], Sequence[Outgoing]] | None = None,
        spans: Spans | None = None,
    ) -> None:
        self._settings = settings
        #: OpenTelemetry spans (``worker/spans.py``), or ``None`` when they are off.
        self._spans = spans
        self._span: Any = None  # the draft span being routed, while spans are on
        #: Records the turn store deferred (its changelog): sent and acknowledged with the outputs.
        self._also_publish = also_publish
        self._resolver = BatchResolver(evidence=evidence, settings=settings, metrics=metrics)
        self._turns = turns
        self._publisher = publisher
        self._lookahead: Lookahead[_Item] = Lookahead(self._classify, self._resolve_ahead)
        self._policies = policies
        self._metrics = metrics
        self._stage_seconds = {
            stage: metrics.batch_stage_seconds.labels(stage=stage)
            for stage in ("evidence", "decide", "publish")
        }
        self._drafts = _ByLabel(metrics.drafts, "outcome")
        self._failure_codes = _ByLabel(metrics.failure_codes, "code")
        self._dead_letters = _ByLabel(metrics.dead_letters, "error_class")
        self._version = worker_version
        self._latency_produced = metrics.draft_latency.labels(since="produced_at")
        self._latency_record = metrics.draft_latency.labels(since="record")
        self._clock = clock
        self._delay = backoff_delays(
            settings.retry_initial_backoff_s, settings.retry_max_backoff_s, jitter=half_jitter
        )
        names = settings.topics
        self._out_topic = {
            TopicRole.REGENERATE: names.regenerate,
            TopicRole.VALIDATED: names.validated,
            TopicRole.COULD_NOT_GROUND: names.could_not_ground,
            TopicRole.LEDGER: names.ledger,
        }

    # ------------------------------------------------------------------------------------------
    async def process(self, batch: Sequence[Incoming]) -> BatchReport:
        """Decide and route every record of ``batch``; return when all outputs are acknowledged.

        What a look-ahead (:meth:`look_ahead`) already did for its records is used.
        """
        report = BatchReport()
        self._metrics.batch_size.observe(len(batch))
        started = time.perf_counter()
        items, (evidence, unavailable) = await self._admitted(batch, report)
        fetched = time.perf_counter()
        now = self._clock()
        sources = SourceIndex()  # the batch's source texts, read once for every draft citing them
        out: list[Outgoing] = []
        spans = self._spans
        if spans is not None:
            batch_span = spans.batch(len(batch))
            opened = [batch_span]
        for item in items:
            first = len(out)
            traceparent: bytes | str | None = item.incoming.header("traceparent")
            if spans is not None and not is_control(item.incoming):  # a tick has no trace
                self._span = spans.draft(item.incoming, batch_span)
                opened.append(self._span)
                traceparent = traceparent_of(self._span)
            try:
                with trace_scope(traceparent):
                    out.extend(
                        self._route(item, evidence, unavailable, now, report, sources, traceparent)
                    )
            except Exception as exc:  # any bug on one record is that record's poison
                if self._span is not None:
                    Spans.failed(self._span, type(exc).__name__)
                # Not log.exception: a traceback may quote draft text; it goes to DEBUG only.
                log.error(  # noqa: TRY400
                    "draft.internal_error",
                    error=type(exc).__name__,
                    topic=item.incoming.topic,
                    partition=item.incoming.partition,
                    offset=item.incoming.offset,
                )
                log.debug("draft.internal_error.trace", exc_info=True)
                out.append(
                    self._dead_letter(
                        item.incoming,
                        ErrorClass.INTERNAL_ERROR,
                        f"internal error: {type(exc).__name__}",
                        report,
                    )
                )
            if self._span is not None and traceparent is not None:
                dlq = self._settings.topics.dlq
                out[first:] = [
                    o if o.topic == dlq else o._replace(headers=with_parent(o.headers, traceparent))
                    for o in out[first:]
                ]
            self._span = None
        if self._also_publish is not None:
            out.extend(self._also_publish())
        decided = time.perf_counter()
        if spans is None:
            await self._publish(out)
        else:
            await self._publish_spanned(out, spans, opened)
        self._observe_latency(items)
        stage = self._stage_seconds
        stage["evidence"].observe(fetched - started)
        stage["decide"].observe(decided - fetched)
        stage["publish"].observe(time.perf_counter() - decided)
        report.published = len(out)
        return report

    async def _publish_spanned(
        self, out: Sequence[Outgoing], spans: Spans, opened: Sequence[Any]
    ) -> None:
        """Publish, then end the batch's spans (as errors if the publish did not land)."""
        try:
            await self._publish(out)
        except BaseException as exc:
            spans.end(opened[::-1], exc)
            raise
        spans.end(opened[::-1])

    def _observe_latency(self, items: Sequence[_Item]) -> None:
        """Each draft's end-to-end latency, now that its outputs are acknowledged."""
        now = time.time()
        for item in items:
            admitted = item.admitted
            if admitted is None:
                continue
            produced = _epoch_s(admitted.draft.produced_at)
            if produced is None:
                since = now - item.incoming.timestamp_ms / 1000
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

    async def _admitted(
        self, batch: Sequence[Incoming], report: BatchReport
    ) -> tuple[list[_Item], Resolved]:
        """The batch's items and evidence, with what the look-ahead already did for it."""
        ahead = await self._lookahead.take(batch)
        if ahead is None:
            items = [self._classify(rec) for rec in batch]
            return items, await self._resolve(items, report)
        report.store_fetches += ahead.fetches
        items, rest = [], []
        for rec in batch:
            item = ahead.items.get(record_key(rec))
            if item is None:
                item = self._classify(rec)
                rest.append(item)
            items.append(item)
        if not rest:
            return items, ahead.resolved
        extra = await self._resolve(rest, report)
        return items, Resolved(merged(ahead.resolved.evidence, extra.evidence), extra.unavailable)

    async def _resolve_ahead(self, items: Sequence[_Item]) -> tuple[Resolved, int]:
        report = BatchReport()
        return await self._resolve(items, report), report.store_fetches

    async def dead_letter_batch(self, batch: Sequence[Incoming], error: str) -> BatchReport:
        """Dead-letter every record of a batch that failed as a whole (``internal_error``).

        The same dead letters, logs and metrics as one poison record's; returns once the broker
        acknowledged them all (a broker that refuses them raises, for the caller to retry).
        """
        report = BatchReport()
        out = [
            self._dead_letter(rec, ErrorClass.INTERNAL_ERROR, f"internal error: {error}", report)
            for rec in batch
        ]
        await self._publish(out)
        report.published = len(out)
        return report

    # ------------------------------------------------------------------------------------------
    def _classify(self, rec: Incoming) -> _Item:
        item = _Item(incoming=rec)
        try:
            if is_control(rec):
                item.control = parse_control(rec)
                return item
            admitted = admit(
                rec.key,
                rec.value,
                max_bytes=self._settings.max_draft_bytes,
                policies=self._policies,
            )
            if isinstance(admitted, EnvelopeRejection):
                item.rejection = admitted
            else:
                item.admitted = admitted
        except Exception as exc:  # a record the core cannot read is poison
            log.error(  # noqa: TRY400 - traceback only at DEBUG, see above
                "draft.internal_error",
                stage="classify",
                error=type(exc).__name__,
                partition=rec.partition,
                offset=rec.offset,
            )
            log.debug("draft.internal_error.trace", exc_info=True)
            item.rejection = EnvelopeRejection(
                ErrorClass.INTERNAL_ERROR, f"internal error: {type(exc).__name__}"
            )
        return item

    async def _resolve(self, items: Sequence[_Item], report: BatchReport) -> Resolved:
        """The evidence of every admitted draft of the batch, by tenant (``stream/resolve.py``)."""
        wanted: dict[str, set[CitationRef]] = defaultdict(set)
        for item in items:
            if item.admitted is not None:
                wanted[item.admitted.tenant_id].update(item.admitted.refs)
        wanted = {t: refs for t, refs in wanted.items() if refs}

        def counted() -> None:
            report.store_fetches += 1

        return await self._resolver.resolve(wanted, counted)

    def _route(  # noqa: PLR0917 -- the batch's state each record is routed in
        self,
        item: _Item,
        evidence: Mapping[str, Mapping[CitationRef, EvidenceRecord]],
        unavailable: Mapping[str, tuple[ErrorClass, str]],
        now: datetime,
        report: BatchReport,
        sources: SourceIndex,
        traceparent: bytes | str | None,
    ) -> list[Outgoing]:
        rec = item.incoming
        if is_control(rec):
            return self._route_control(item.control, rec, now, report)
        if item.rejection is not None:
            return [self._dead_letter(rec, *item.rejection, report)]
        admitted = item.admitted
        if admitted is None:
            raise TypeError("a classified record is a control, a rejection or an admitted draft")
        tenant, draft = admitted.tenant_id, admitted.draft
        if tenant in unavailable and admitted.refs:
            return [self._dead_letter(rec, *unavailable[tenant], report)]
        stored = self._turns.get(draft.turn_id)
        judgement = judge(
            admitted,
            stored.state if stored is not None else None,
            evidence.get(tenant, {}),
            now,
            retention_s=self._settings.turn_retention_s,
            sources=sources,
        )
        if judgement.dead_letter is not None:
            return [self._dead_letter(rec, *judgement.dead_letter, report)]
        state = judgement.before
        decision = _with_trace(judgement.decision, state, traceparent)
        self._store(draft.turn_id, rec.partition, state, decision)
        codes = judgement.failure_codes
        for code in codes:
            self._failure_codes.inc(code)
        self._drafts.inc(decision.outcome)
        report.outcomes[decision.outcome] += 1
        log.info(
            "draft.routed",
            turn_id=draft.turn_id,
            tenant_id=tenant,
            draft_id=draft.draft_id,
            attempt=draft.attempt,
            outcome=decision.outcome,
            codes=codes,
        )
        if self._span is not None:
            Spans.routed(
                self._span,
                outcome=decision.outcome,
                turn_id=draft.turn_id,
                tenant_id=tenant,
                attempt=draft.attempt,
                codes=codes,
            )
        return self._outgoing(decision, rec)

    def _route_control(
        self, control: Control | None, rec: Incoming, now: datetime, report: BatchReport
    ) -> list[Outgoing]:
        if control is None:
            log.warning("control.ignored", partition=rec.partition, offset=rec.offset)
            return []
        stored = self._turns.get(control.turn_id)
        tick = _utc_from_ms(rec.timestamp_ms)
        if control.kind is ControlKind.EXPIRE_TURN:
            if stored is not None and expired(stored.state, tick, self._settings.turn_retention_s):
                self._turns.delete(control.turn_id, rec.partition)
                report.outcomes[Outcome.EXPIRED] += 1
            return []
        state = stored.state if stored is not None else None
        decision = on_deadline(state, control.turn_id, tick, now)
        self._store(control.turn_id, rec.partition, state, decision)
        # The control record carries no trace: the turn's own (kept in its state) goes out.
        traceparent = state.traceparent if state is not None else None
        headers: Headers = (("traceparent", traceparent.encode("ascii")),) if traceparent else ()
        if decision.outbound:
            self._drafts.inc(decision.outcome)
            report.outcomes[decision.outcome] += 1
            with trace_scope(traceparent):
                log.info("turn.timed_out", turn_id=control.turn_id, outcome=decision.outcome)
        return self._outgoing(decision, rec, headers)

    def _store(self, turn_id: str, partition: int, before: object, decision: Decision) -> None:
        if decision.state is not None and decision.state != before:
            self._turns.put(turn_id, partition, decision.state)

    def _outgoing(
        self, decision: Decision, rec: Incoming, headers: Headers | None = None
    ) -> list[Outgoing]:
        if headers is None:
            headers = trace_headers(rec)
        return [
            Outgoing(self._out_topic[o.topic], o.key.encode("utf-8"), o.value, headers)
            for o in decision.outbound
        ]

    def _dead_letter(
        self, rec: Incoming, error_class: ErrorClass, message: str, report: BatchReport
    ) -> Outgoing:
        self._dead_letters.inc(error_class.value)
        report.dead_letters[error_class.value] += 1
        if self._span is not None:
            Spans.dead_lettered(self._span, error_class.value)
        log.warning(
            "draft.dead_lettered",
            error_class=error_class.value,
            topic=rec.topic,
            partition=rec.partition,
            offset=rec.offset,
        )
        letter = dead_letter(
            rec,
            error_class,
            message,
            failed_at_ms=int(self._clock().timestamp() * 1000),
            worker_version=self._version,
        )
        return Outgoing(self._settings.topics.dlq, letter.key, letter.value, letter.headers)

    async def _publish(self, out: Sequence[Outgoing]) -> None:
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
                        sent = await self._publisher.send(
                            o.topic, o.key, o.value, o.headers, o.partition
                        )
                    except RetriableFault as refused:
                        acks.append(refused)
                    else:
                        acks.append(asyncio.ensure_future(sent))  # a future stays itself
            futures = [a for a in acks if isinstance(a, asyncio.Future)]
            if futures:
                await asyncio.wait(futures)
            failed: list[Outgoing] = []
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


def _with_trace(
    decision: Decision, before: TurnState | None, traceparent: bytes | str | None
) -> Decision:
    """Keep the draft's trace context in a turn that now waits for its regeneration.

    A deadline may end that turn later, from a control record that carries no trace: its
    could-not-ground event then takes this one. Only a W3C-valid ``traceparent`` is kept.
    """
    state = decision.state
    if state is None or state is before or state.phase is not TurnPhase.REGENERATING:
        return decision
    ctx = parse_traceparent(traceparent)
    if ctx is None or state.traceparent == ctx.traceparent:
        return decision
    return decision._replace(state=state.model_copy(update={"traceparent": ctx.traceparent}))
