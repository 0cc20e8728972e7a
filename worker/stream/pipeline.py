"""One batch of ``agent.drafts`` records: classify, resolve once, decide in order, publish.

This is the whole imperative shell around the pure core. It owns no Kafka client and no table:
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
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import NamedTuple

import structlog

from worker.core.envelope import Draft, EnvelopeRejection, parse_envelope
from worker.core.evidence import CitationRef, EvidenceRecord
from worker.core.policy import PolicyBook, TenantPolicy
from worker.core.ports import EvidenceStore, Found
from worker.core.turns import (
    Decision,
    OutTopic,
    TurnPhase,
    TurnState,
    decide,
    expired,
    on_deadline,
)
from worker.core.verdict import Prepared, evaluate, prepare
from worker.faults import RetriableFault
from worker.kafka.control import Control, ControlKind, is_control, parse_control
from worker.kafka.dlq import ErrorClass, dead_letter
from worker.kafka.records import Headers, Incoming, trace_headers
from worker.logs import trace_scope
from worker.metrics import Metrics
from worker.retry import (
    RetryBudgetExhaustedError,
    backoff_delays,
    half_jitter,
    with_retries,
)
from worker.settings import Settings
from worker.stream.ports import Publisher, TurnStore
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
    draft: Draft | None = None
    policy: TenantPolicy | None = None
    prepared: Prepared | None = None
    rejection: tuple[ErrorClass, str] | None = None


@dataclass
class BatchReport:
    """What one batch did, for logs, metrics and tests."""

    outcomes: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    dead_letters: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    store_fetches: int = 0
    published: int = 0


def _utc_from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000.0, tz=UTC)


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
    ) -> None:
        self._settings = settings
        #: Records the turn store deferred (its changelog): sent and acknowledged with the outputs.
        self._also_publish = also_publish
        self._evidence = evidence
        self._turns = turns
        self._publisher = publisher
        self._policies = policies
        self._metrics = metrics
        self._version = worker_version
        self._clock = clock
        self._delay = backoff_delays(
            settings.retry_initial_backoff_s, settings.retry_max_backoff_s, jitter=half_jitter
        )
        names = settings.topics
        self._out_topic = {
            OutTopic.REGENERATE: names.regenerate,
            OutTopic.VALIDATED: names.validated,
            OutTopic.COULD_NOT_GROUND: names.could_not_ground,
            OutTopic.LEDGER: names.ledger,
        }

    # ------------------------------------------------------------------------------------------
    async def process(self, batch: Sequence[Incoming]) -> BatchReport:
        """Decide and route every record of ``batch``; return when all outputs are acknowledged."""
        report = BatchReport()
        self._metrics.batch_size.observe(len(batch))
        items = [self._classify(rec) for rec in batch]
        evidence, unavailable = await self._resolve(items, report)
        now = self._clock()
        out: list[Outgoing] = []
        for item in items:
            try:
                with trace_scope(item.incoming.header("traceparent")):
                    out.extend(self._route(item, evidence, unavailable, now, report))
            except Exception as exc:  # any bug on one record is that record's poison
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
        if self._also_publish is not None:
            out.extend(self._also_publish())
        await self._publish(out)
        report.published = len(out)
        return report

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
            parsed = parse_envelope(rec.key, rec.value, max_bytes=self._settings.max_draft_bytes)
            if isinstance(parsed, EnvelopeRejection):
                item.rejection = (ErrorClass(parsed.error_class), parsed.message)
                return item
            item.draft = parsed
            item.policy = self._policies.for_tenant(parsed.tenant_id)
            item.prepared = prepare(parsed, item.policy)
        except Exception as exc:  # a record the core cannot read is poison
            log.error(  # noqa: TRY400 - traceback only at DEBUG, see above
                "draft.internal_error",
                stage="classify",
                error=type(exc).__name__,
                partition=rec.partition,
                offset=rec.offset,
            )
            log.debug("draft.internal_error.trace", exc_info=True)
            item.rejection = (ErrorClass.INTERNAL_ERROR, f"internal error: {type(exc).__name__}")
        return item

    async def _resolve(
        self, items: Sequence[_Item], report: BatchReport
    ) -> tuple[dict[str, Mapping[CitationRef, EvidenceRecord]], dict[str, tuple[ErrorClass, str]]]:
        """Fetch the evidence of the whole batch in one store call; retry while stores are down.

        Returns the evidence by tenant, and for each tenant whose fetch failed for good the
        dead-letter class and message for its drafts: ``infra_unavailable`` past a finite retry
        budget, ``internal_error`` for a non-retriable fault. One call serves every tenant of the
        batch, so when it fails for good and the batch has several tenants, each tenant is asked
        again alone: a fault that belongs to one tenant (a malformed row, a tenant the store
        cannot serve) must not take the drafts of the other tenants down with it.
        """
        wanted: dict[str, set[CitationRef]] = defaultdict(set)
        for item in items:
            if item.prepared is not None and item.draft is not None:
                wanted[item.draft.tenant_id].update(item.prepared.refs_to_resolve)
        wanted = {t: refs for t, refs in wanted.items() if refs}
        if not wanted:
            return {}, {}
        try:
            return dict(await self._fetch(wanted, report, self._settings.retry_budget)), {}
        except RetryBudgetExhaustedError as exhausted:
            message = f"evidence store unavailable after {exhausted.attempts} attempts"
            failure = (ErrorClass.INFRA_UNAVAILABLE, message)
            # The budget is spent: each tenant alone gets one more attempt, no more waiting.
            budget: int | None = 0
        except Exception as exc:  # a poison fault of the batch's fetch: find whose it is
            log.error("store.fetch_failed", error=type(exc).__name__, tenants=len(wanted))  # noqa: TRY400
            log.debug("store.fetch_failed.trace", exc_info=True)
            failure = (ErrorClass.INTERNAL_ERROR, f"internal error: {type(exc).__name__}")
            budget = self._settings.retry_budget
        if len(wanted) == 1:
            return {}, dict.fromkeys(wanted, failure)
        return await self._resolve_each(wanted, report, budget, failure)

    async def _resolve_each(
        self,
        wanted: Mapping[str, set[CitationRef]],
        report: BatchReport,
        budget: int | None,
        failure: tuple[ErrorClass, str],
    ) -> tuple[dict[str, Mapping[CitationRef, EvidenceRecord]], dict[str, tuple[ErrorClass, str]]]:
        """One store call per tenant (at most the pool's size at once), after a batch call failed.

        ``failure`` is the batch call's: a tenant still unavailable alone is reported with it.
        """
        evidence: dict[str, Mapping[CitationRef, EvidenceRecord]] = {}
        unavailable: dict[str, tuple[ErrorClass, str]] = {}
        # Queued on the pool, many calls would all time out together and retry in lockstep.
        limit = asyncio.Semaphore(self._settings.postgres_pool_size)

        async def fetch_one(tenant: str, refs: set[CitationRef]) -> None:
            try:
                async with limit:
                    found = await self._fetch({tenant: refs}, report, budget)
                evidence[tenant] = found.get(tenant, {})
            except RetryBudgetExhaustedError as exhausted:
                if failure[0] is ErrorClass.INFRA_UNAVAILABLE:
                    unavailable[tenant] = failure
                else:
                    message = f"evidence store unavailable after {exhausted.attempts} attempts"
                    unavailable[tenant] = (ErrorClass.INFRA_UNAVAILABLE, message)
            except Exception as exc:  # a poison fault of this tenant's fetch: its drafts only
                log.error("store.fetch_failed", error=type(exc).__name__, tenant_id=tenant)  # noqa: TRY400
                log.debug("store.fetch_failed.trace", exc_info=True)
                unavailable[tenant] = (
                    ErrorClass.INTERNAL_ERROR,
                    f"internal error: {type(exc).__name__}",
                )

        await asyncio.gather(*(fetch_one(t, refs) for t, refs in wanted.items()))
        return evidence, unavailable

    async def _fetch(
        self, wanted: Mapping[str, set[CitationRef]], report: BatchReport, budget: int | None
    ) -> Found:
        """One store call for ``wanted``, retried per ``budget`` while the store is unavailable."""

        def on_retry(n: int, fault: RetriableFault, wait: float) -> None:
            self._metrics.store_retries.labels(store=getattr(fault, "store", "unknown")).inc()
            log.warning("store.retry", attempt=n, fault=type(fault).__name__, wait_s=round(wait, 3))

        async def op() -> Found:  # timed per store by the adapters (worker/stores/observed.py)
            report.store_fetches += 1
            return await self._evidence.fetch_batch(wanted)

        return await with_retries(op, budget=budget, delay=self._delay, on_retry=on_retry)

    def _route(
        self,
        item: _Item,
        evidence: Mapping[str, Mapping[CitationRef, EvidenceRecord]],
        unavailable: Mapping[str, tuple[ErrorClass, str]],
        now: datetime,
        report: BatchReport,
    ) -> list[Outgoing]:
        rec = item.incoming
        if is_control(rec):
            return self._route_control(item.control, rec, now, report)
        if item.rejection is not None:
            error_class, message = item.rejection
            return [self._dead_letter(rec, error_class, message, report)]
        draft, prepared, policy = item.draft, item.prepared, item.policy
        if draft is None or prepared is None or policy is None:
            raise TypeError("a classified record is a control, a rejection or a prepared draft")
        tenant = draft.tenant_id
        if tenant in unavailable and prepared.refs_to_resolve:
            error_class, message = unavailable[tenant]
            return [self._dead_letter(rec, error_class, message, report)]
        stored = self._turns.get(draft.turn_id)
        state = stored.state if stored is not None else None
        if state is not None and expired(state, now, self._settings.turn_retention_s):
            state = None
        evaluation = evaluate(prepared, evidence.get(tenant, {}), policy, now)
        decision = decide(state, prepared, evaluation, policy, now, self._version)
        if decision.dead_letter is not None:
            return [
                self._dead_letter(
                    rec,
                    ErrorClass(decision.dead_letter.error_class),
                    decision.dead_letter.message,
                    report,
                )
            ]
        decision = _with_trace(decision, state, rec)
        self._store(draft.turn_id, rec.partition, state, decision)
        codes = sorted({f.code.value for f in evaluation.failures})
        for code in codes:
            self._metrics.failure_codes.labels(code=code).inc()
        self._metrics.drafts.labels(outcome=decision.outcome).inc()
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
                report.outcomes["expired"] += 1
            return []
        state = stored.state if stored is not None else None
        decision = on_deadline(state, control.turn_id, tick, now)
        self._store(control.turn_id, rec.partition, state, decision)
        # The control record carries no trace: the turn's own (kept in its state) goes out.
        traceparent = state.traceparent if state is not None else None
        headers: Headers = (("traceparent", traceparent.encode("ascii")),) if traceparent else ()
        if decision.outbound:
            self._metrics.drafts.labels(outcome=decision.outcome).inc()
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
        self._metrics.dead_letters.labels(error_class=error_class.value).inc()
        report.dead_letters[error_class.value] += 1
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

        Records are handed to the producer one after the other, in decision order, and only then
        awaited together: a turn's outputs reach its partition in the order they were decided.
        """
        pending = list(out)
        attempt = 0
        while pending:
            acks: list[Awaitable[object] | BaseException] = []
            for o in pending:
                try:
                    acks.append(
                        await self._publisher.send(o.topic, o.key, o.value, o.headers, o.partition)
                    )
                except RetriableFault as fault:
                    acks.append(fault)
            results = await asyncio.gather(*(_settled(a) for a in acks))
            failed: list[Outgoing] = []
            for o, result in zip(pending, results, strict=True):
                if isinstance(result, RetriableFault):
                    failed.append(o)
                elif isinstance(result, BaseException):
                    raise result
            if not failed:
                return
            attempt += 1
            wait = self._delay(attempt)
            log.warning("broker.retry", attempt=attempt, pending=len(failed), wait_s=round(wait, 3))
            await asyncio.sleep(wait)
            pending = failed


def _with_trace(decision: Decision, before: TurnState | None, rec: Incoming) -> Decision:
    """Keep the draft's trace context in a turn that now waits for its regeneration.

    A deadline may end that turn later, from a control record that carries no trace: its
    could-not-ground event then takes this one. Only a W3C-valid ``traceparent`` is kept.
    """
    state = decision.state
    if state is None or state is before or state.phase is not TurnPhase.REGENERATING:
        return decision
    ctx = parse_traceparent(rec.header("traceparent"))
    if ctx is None or state.traceparent == ctx.traceparent:
        return decision
    return decision._replace(state=state.model_copy(update={"traceparent": ctx.traceparent}))


async def _settled(ack: Awaitable[object] | BaseException) -> BaseException | None:
    """The fault of one send, or ``None`` once the broker acknowledged it."""
    if isinstance(ack, BaseException):
        return ack
    try:
        await ack
    except Exception as exc:  # noqa: BLE001 - returned to the caller, which sorts faults out
        return exc
    return None
