"""The Faust application: one agent on ``agent.drafts``, a deadline timer, health and metrics.

Only the wiring lives here: what the agent and the timer do with a batch or a tick is
``worker.stream.processing.loop`` (no Faust in it). Faust specifics that shape the wiring (see
STYLE.md):

- Batches come from :class:`worker.stream.intake.take.OverlappedTake`, fed by the agent's stream or
  by a conductor channel (``GW_DRAFTS_INTAKE``, ``worker.stream.intake.delivery``): it keeps
  collecting the next batch while this one is processed, closes a batch when full or when the intake
  pauses, and acknowledges a batch's records only after the body returns. The body still never
  raises: faults are retried inside, poison is dead-lettered inside, and a failure of the batch as a
  whole dead-letters its records rather than acknowledging them silently.
- One batch loop (an agent with ``concurrency=1``, or one app task): throughput comes from
  batching store queries, never from concurrent tasks that could commit past a draft still in
  flight (faust #606).
- At-least-once processing; every output has a deterministic ``event_id`` and the ledger sink is
  idempotent, so a redelivered draft changes nothing downstream.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

import faust
import structlog

from worker import __version__
from worker.core import EvidenceStore, Incoming, OutRecord, PolicyBook
from worker.kafka.publisher import ProducerPublisher
from worker.runtime.broker_watch import BrokerHealth
from worker.runtime.metrics import Metrics
from worker.runtime.readiness import StoreHealth
from worker.runtime.retry import backoff_delays, half_jitter
from worker.runtime.spans import spans_for
from worker.settings import Settings
from worker.stream.faust_app import (
    FaustPartitions,
    WorkerApp,
    app_publisher,
    message_to_incoming,
    new_app,
    to_incoming,
    turn_table,
)
from worker.stream.intake.delivery import (
    ConsumerLifetime,
    DraftsChannel,
    consumer_acknowledge,
    feed_from_stream,
    stream_acknowledge,
)
from worker.stream.intake.take import Acknowledge, OverlappedTake
from worker.stream.processing.collector import BatchCollector
from worker.stream.processing.loop import DraftLoop, LoopState, send_due_controls
from worker.stream.processing.pipeline import BatchProcessor
from worker.stream.turns.deadlines import DeadlineScanner
from worker.stream.turns.table import FaustTurnStore
from worker.stream.watchdogs.recovery import watch_recovery
from worker.stream.watchdogs.slow_batch import watch_batches
from worker.stream.watchdogs.stall import OffsetProbe, watch_partitions
from worker.stream.web import wire_pages

log = structlog.get_logger("worker.app")

EvidenceFactory = Callable[[Settings], AbstractAsyncContextManager[EvidenceStore]]


def build_app(
    settings: Settings,
    *,
    evidence_factory: EvidenceFactory,
    policies: PolicyBook,
    metrics: Metrics,
    health: StoreHealth | None = None,
    broker_health: BrokerHealth | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> faust.App:
    """Compose the worker's Faust app from its settings and its adapters.

    ``health`` is what the evidence adapters report about store reachability, ``broker_health``
    what the broker watch reports about Kafka (both for ``/ready``).
    """
    app = new_app(settings)
    table = turn_table(app, settings)
    turns = FaustTurnStore(table, defer_changelog=True)

    scanner = DeadlineScanner(
        turns, retention_s=settings.turn_retention_s, topic=settings.topics.drafts
    )
    state = LoopState(started=time.monotonic())
    partitions = FaustPartitions(app, settings.topics.drafts)
    adapters = _Adapters(
        settings=settings,
        evidence_factory=evidence_factory,
        policies=policies,
        metrics=metrics,
        clock=clock,
        turns=turns,
        changelog_topic=table.changelog_topic.get_topic_name(),
    )
    _wire_agent(app, state, partitions=partitions, adapters=adapters)
    _wire_timers(app, settings, state, partitions=partitions, scanner=scanner, clock=clock)
    _wire_watchdogs(app, settings, state, metrics)
    wire_pages(
        app,
        settings,
        state,
        partitions=partitions,
        metrics=metrics,
        store_health=health or StoreHealth(),
        broker_health=broker_health,
    )
    return app


@dataclass(frozen=True)
class _Adapters:
    """What the agent needs to open its pipeline on the first batch."""

    settings: Settings
    evidence_factory: EvidenceFactory
    policies: PolicyBook
    metrics: Metrics
    clock: Callable[[], datetime]
    turns: FaustTurnStore
    changelog_topic: str

    def changelog_records(self) -> list[OutRecord]:
        """The turn table's deferred changelog records, sent with the batch's outputs."""
        return [
            OutRecord(self.changelog_topic, key, value, (), partition)
            for partition, key, value in self.turns.drain_unsent()
        ]

    async def open(
        self, resources: AsyncExitStack, publisher: ProducerPublisher, collector: BatchCollector
    ) -> tuple[BatchProcessor, OffsetProbe | None]:
        """The pipeline over the evidence adapters, and the offset probe (if the broker answers).

        ``collector`` is the loop's (:class:`DraftLoop` hands it over): the look-ahead pauses it.
        """
        evidence = await _open_evidence(resources, self.settings, self.evidence_factory)
        probe = await _open_probe(resources, self.settings)
        processor = BatchProcessor(
            settings=self.settings,
            evidence=evidence,
            turns=self.turns,
            publisher=publisher,
            policies=self.policies,
            metrics=self.metrics,
            worker_version=__version__,
            clock=self.clock,
            also_publish=self.changelog_records,
            spans=spans_for(self.settings),
            collector=collector,
        )
        resources.callback(processor.close)
        return processor, probe


def _wire_agent(
    app: WorkerApp,
    state: LoopState,
    *,
    partitions: FaustPartitions,
    adapters: _Adapters,
) -> None:
    """The intake of ``agent.drafts``, its batches into :class:`DraftLoop`."""
    wire_intake(
        app,
        adapters.settings,
        lambda take: _run_batches(app, take, state, partitions, adapters),
    )


def wire_intake(
    app: WorkerApp,
    settings: Settings,
    run: Callable[[OverlappedTake[Incoming]], AsyncIterator[None]],
) -> None:
    """The intake of ``agent.drafts`` (``GW_DRAFTS_INTAKE``): a take whose batches ``run`` handles.

    ``stream``: a Faust agent whose stream feeds the take; ``channel``: a conductor channel feeds
    it and an app task runs the batches (``worker.stream.intake.delivery``). The benchmark's floor
    (``dev/bench/floor.py``) is wired by this too, so it reads drafts exactly as the worker does.
    """

    def new_take(lifetime: Any, acknowledge: Acknowledge) -> OverlappedTake[Incoming]:
        return OverlappedTake(
            lifetime,
            settings.batch_size,
            quiet=settings.batch_quiet_s,
            max_wait=settings.batch_wait_s,
            acknowledge=acknowledge,
        )

    if settings.drafts_intake == "stream":
        drafts_topic = app.topic(
            settings.topics.drafts,
            key_type=bytes,
            value_type=bytes,
            key_serializer="raw",
            value_serializer="raw",
            partitions=settings.topic_partitions,
        )

        @app.agent(drafts_topic, concurrency=1)
        async def process_drafts(stream: Any) -> AsyncIterator[None]:
            # Feed the take before awaiting anything else: Faust hands the topic to its
            # conductor only when the agent first iterates it, and a record fetched before that
            # reaches no channel and is silently passed over. So the adapters open on the first
            # batch.
            take = new_take(stream, stream_acknowledge(stream))
            feed_from_stream(stream, take, to_incoming)
            async for _ in run(take):
                yield None

        return

    take = new_take(ConsumerLifetime(app), consumer_acknowledge(app))
    app.intake_channels = (
        DraftsChannel(
            app,
            settings.topics.drafts,
            partitions=settings.topic_partitions,
            take=take,
            convert=message_to_incoming,
        ),
    )

    @app.task  # type: ignore[untyped-decorator]
    async def take_drafts() -> None:
        async for _ in run(take):
            pass


async def _run_batches(
    app: faust.App,
    take: OverlappedTake[Incoming],
    state: LoopState,
    partitions: FaustPartitions,
    adapters: _Adapters,
) -> AsyncIterator[None]:
    """Each batch of ``take`` through :class:`DraftLoop`; yields once per batch."""
    settings = adapters.settings
    publisher = app_publisher(app)
    async with AsyncExitStack() as resources:
        loop = DraftLoop(
            state,
            partitions,
            partial(adapters.open, resources, publisher),
            adapters.metrics,
            collector=BatchCollector(enabled=settings.gc_paused_in_batch),
            look_ahead=settings.batch_look_ahead,
        )
        take.on_full = loop.next_batch_complete
        window = adapters.metrics.batch_stage_seconds.labels(stage="window")
        async for batch in take.batches():
            window.observe(take.last_wait)
            await loop.handle(batch, take)
            yield None


def _wire_timers(
    app: faust.App,
    settings: Settings,
    state: LoopState,
    *,
    partitions: FaustPartitions,
    scanner: DeadlineScanner,
    clock: Callable[[], datetime],
) -> None:
    """The deadline tick, and the signal that the tables were recovered (re-read them)."""

    @app.timer(interval=settings.deadline_scan_interval_s)  # type: ignore[untyped-decorator]
    async def scan_deadlines() -> None:
        await send_due_controls(
            state,
            owned=partitions.owned(),
            scanner=scanner,
            publisher=app_publisher(app),
            now=clock(),
        )

    @app.on_rebalance_complete.connect
    def on_recovered(_sender: Any, /, *_: Any, signal: Any, **__: Any) -> None:
        # Sent once the tables are recovered: the scanner re-reads them on its next tick.
        state.recovered = True


def _wire_watchdogs(app: faust.App, settings: Settings, state: LoopState, metrics: Metrics) -> None:
    @app.on_partitions_assigned.connect
    async def on_assigned(_sender: Any, /, *args: Any, signal: Any, **__: Any) -> None:
        # Each new assignment is one rebalance this process took part in.
        assigned = args[0] if args else ()
        metrics.rebalances.inc()
        metrics.assigned_partitions.set(
            sum(1 for tp in assigned if tp.topic == settings.topics.drafts)
        )

    @app.task  # type: ignore[untyped-decorator]
    async def watchdogs() -> None:
        # A stalled table recovery exits the process; an idle lagging partition is re-read;
        # a batch in hand too long is logged with what it awaits.
        await asyncio.gather(
            watch_recovery(app, settings),
            watch_partitions(app, settings, metrics, busy=lambda: state.busy),
            watch_batches(state, settings),
        )


async def _open_evidence(
    resources: AsyncExitStack, settings: Settings, factory: EvidenceFactory
) -> EvidenceStore:
    """Open the evidence adapters, waiting for as long as it takes.

    A batch is in hand (the adapters open on the first one): an exception here would crash the
    agent (Faust acknowledges what its agent was given when it raises, #189), so the drafts
    would be lost. Waiting instead keeps them, and the error is logged at every attempt.
    """
    delay = backoff_delays(
        settings.retry_initial_backoff_s, settings.retry_max_backoff_s, jitter=half_jitter
    )
    attempt = 0
    while True:
        try:
            return await resources.enter_async_context(factory(settings))
        except Exception as exc:  # noqa: BLE001 - see the docstring
            attempt += 1
            log.error("evidence.open_failed", error=type(exc).__name__, attempt=attempt)  # noqa: TRY400
            await asyncio.sleep(delay(attempt))


async def _open_probe(resources: AsyncExitStack, settings: Settings) -> OffsetProbe | None:
    """The offset probe, or ``None`` when the broker does not answer now (checks then skipped)."""
    try:
        return await resources.enter_async_context(OffsetProbe(settings))
    except Exception as exc:  # noqa: BLE001 - the stall watchdog still covers the gap
        log.warning("offsets.probe_unavailable", error=type(exc).__name__)
        return None
