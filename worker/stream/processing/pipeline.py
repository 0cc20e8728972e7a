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
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import structlog

from worker.core import (
    BatchOutcome,
    BatchPlan,
    BatchRules,
    EvidenceStore,
    Incoming,
    OutRecord,
    Planned,
    PolicyBook,
    TurnState,
    decide_batch,
    failed_batch,
    plan_record,
    wanted_of,
)
from worker.faults import RetriableFault
from worker.runtime.metrics import Metrics
from worker.runtime.retry import backoff_delays, half_jitter
from worker.runtime.spans import Spans, traceparent_of
from worker.settings import Settings
from worker.stream.intake.lookahead import Lookahead, merged, record_key
from worker.stream.processing.accounting import Accounting, BatchReport
from worker.stream.processing.collector import BatchCollector
from worker.stream.processing.resolve import BatchResolver, Resolved
from worker.stream.seams import BulkPublisher, Publisher, TurnStore

log = structlog.get_logger("worker.pipeline")


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
        collector: BatchCollector | None = None,
    ) -> None:
        self._settings = settings
        #: OpenTelemetry spans (``worker/runtime/spans.py``), or ``None`` when they are off.
        self._spans = spans
        #: Records the turn store deferred (its changelog): sent and acknowledged with the outputs.
        self._also_publish = also_publish
        self._resolver = BatchResolver(evidence=evidence, settings=settings, metrics=metrics)
        self._turns = turns
        self._publisher = publisher
        #: Each step of a look-ahead's admission pauses the collector the loop pauses each batch
        #: with (the loop's own, handed over when it opens this pipeline; none: no pausing), so
        #: ``GW_GC_PAUSED_IN_BATCH`` has one owner.
        self._lookahead: Lookahead[Planned] = Lookahead(
            self._plan,
            self._resolve_ahead,
            paused=(collector or BatchCollector(enabled=False)).paused,
        )
        self._policies = policies
        self._metrics = metrics
        self._stage_seconds = {
            stage: metrics.batch_stage_seconds.labels(stage=stage)
            for stage in ("evidence", "decide", "publish")
        }
        self._accounting = Accounting(metrics)
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
        out = self._accounting.routes(decided, report, drafts, parents)
        if self._also_publish is not None:
            out.extend(self._also_publish())
        done = time.perf_counter()
        if spans is None:
            await self._publish(out)
        else:
            await self._publish_spanned(out, spans, opened)
        self._accounting.observe_latency(plan)
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
                self._accounting.dead_lettered(
                    route.incoming, route.dead_letter.error_class, report
                )
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
