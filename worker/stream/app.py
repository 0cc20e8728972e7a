"""The Faust application: one agent on ``agent.drafts``, a deadline timer, health and metrics.

The agent is a thin loop (decode the batch, hand it to :class:`BatchProcessor`, let Faust ack).
Faust specifics that shape it (see STYLE.md):

- ``take_events(n, within=...)`` acks the whole batch even when the body raises, so the body never
  raises: faults are retried inside, poison is dead-lettered inside, and a failure of the batch as
  a whole dead-letters its records rather than acknowledging them silently.
- One agent instance (``concurrency=1``): throughput comes from batching store queries, never from
  concurrent tasks that could commit past a draft still in flight (faust #606).
- At-least-once processing; every output has a deterministic ``event_id`` and the ledger sink is
  idempotent, so a redelivered draft changes nothing downstream.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from datetime import UTC, datetime
from typing import Any

import faust
import structlog
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from worker import __version__
from worker.core.policy import PolicyBook
from worker.core.ports import EvidenceStore
from worker.metrics import Metrics
from worker.settings import Settings
from worker.stream.deadlines import DeadlineScanner
from worker.stream.dlq import ErrorClass, dead_letter
from worker.stream.offsets import OffsetGuard
from worker.stream.pipeline import BatchProcessor
from worker.stream.publisher import ProducerPublisher
from worker.stream.records import Incoming, normalize_headers
from worker.stream.recovery_watchdog import watch_recovery
from worker.stream.retry import backoff_delays, half_jitter
from worker.stream.stall_watchdog import OffsetProbe, watch_partitions
from worker.stream.topic_specs import FRAMING_BYTES
from worker.stream.turn_table import FaustTurnStore

log = structlog.get_logger("worker.app")

EvidenceFactory = Callable[[Settings], AbstractAsyncContextManager[EvidenceStore]]

#: Prometheus' text format. aiohttp takes the charset apart (it refuses one inside content_type),
#: and the exposition format is UTF-8 by definition.
METRICS_CONTENT_TYPE = "; ".join(
    part for part in CONTENT_TYPE_LATEST.split("; ") if not part.startswith("charset=")
)

#: How often the deadline scanner also looks for finished turns past their retention.
EXPIRY_CHECK_EVERY_S = 30.0


def to_incoming(event: Any) -> Incoming:
    """A Faust event as a plain value, with the record's own bytes (never re-serialised)."""
    msg = event.message
    return Incoming(
        topic=msg.topic,
        partition=msg.partition,
        offset=msg.offset,
        timestamp_ms=int(msg.timestamp * 1000),
        key=msg.key,
        value=msg.value if msg.value is not None else b"",
        headers=normalize_headers(msg.headers),
    )


def build_app(
    settings: Settings,
    *,
    evidence_factory: EvidenceFactory,
    policies: PolicyBook,
    metrics: Metrics,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> faust.App:
    """Compose the worker's Faust app from its settings and its adapters."""
    inbound_max = 2 * settings.max_draft_bytes + FRAMING_BYTES
    app = faust.App(
        settings.app_id,
        broker=f"kafka://{settings.kafka_bootstrap_servers}",
        store="memory://",
        autodiscover=False,
        processing_guarantee="at_least_once",
        topic_partitions=settings.topic_partitions,
        topic_replication_factor=settings.topic_replication_factor,
        table_standby_replicas=0,
        consumer_auto_offset_reset="earliest",
        consumer_max_fetch_size=inbound_max,
        producer_max_request_size=4 * settings.max_draft_bytes + FRAMING_BYTES,
        producer_acks=-1,
        broker_commit_interval=1.0,
        broker_session_timeout=settings.broker_session_timeout_s,
        web_enabled=True,
        web_port=settings.web_port,
        web_bind=settings.web_host,
        datadir=str(settings.data_dir),
    )
    drafts_topic = app.topic(
        settings.topics.drafts,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=settings.topic_partitions,
    )
    # key_type/value_type as well as the schema: Faust derives the changelog topic's serializers
    # from the types and writes them over the schema's (json for None), and recovery then fails
    # to decode the raw changelog records and never finishes.
    table = app.Table(
        "turns",
        default=None,
        key_type=bytes,
        value_type=bytes,
        schema=faust.Schema(
            key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw"
        ),
        partitions=settings.topic_partitions,
    )
    turns = FaustTurnStore(table)
    scanner = DeadlineScanner(turns, retention_s=settings.turn_retention_s)
    state: dict[str, Any] = {"started": time.monotonic(), "batches": 0}

    @app.agent(drafts_topic, concurrency=1)
    async def process_drafts(stream: Any) -> AsyncIterator[None]:
        # Iterate the stream before awaiting anything else: Faust hands the topic to its
        # conductor only when the agent first iterates it, and a record fetched before that
        # reaches no channel and is silently passed over. So the adapters open on the first batch.
        publisher = ProducerPublisher(app.producer)
        guard = OffsetGuard()
        async with AsyncExitStack() as resources:
            processor: BatchProcessor | None = None
            probe: OffsetProbe | None = None
            async for events in stream.take_events(
                settings.batch_size, within=settings.batch_wait_s
            ):
                state["busy"] = True
                if processor is None:
                    evidence = await _open_evidence(resources, settings, evidence_factory)
                    probe = await _open_probe(resources, settings)
                    processor = BatchProcessor(
                        settings=settings,
                        evidence=evidence,
                        turns=turns,
                        publisher=publisher,
                        policies=policies,
                        metrics=metrics,
                        worker_version=__version__,
                        clock=clock,
                    )
                try:
                    batch = await _in_order(
                        app, settings, guard=guard, probe=probe, state=state, events=events
                    )
                except Exception as exc:  # noqa: BLE001 - never lose the batch in hand over it
                    log.warning("offsets.guard_failed", error=type(exc).__name__)
                    batch = [to_incoming(e) for e in events]
                try:
                    await processor.process(batch)
                except Exception as exc:  # noqa: BLE001 - the batch failed as a whole: never ack it silently
                    log.error("batch.failed", error=type(exc).__name__, records=len(batch))  # noqa: TRY400
                    await _dead_letter_batch(publisher, settings, batch, type(exc).__name__)
                state["busy"] = False
                state["batches"] += 1
                _update_lag(app, settings, metrics, batch)
                yield None

    @app.timer(interval=settings.deadline_scan_interval_s)  # type: ignore[untyped-decorator]
    async def scan_deadlines() -> None:
        await _send_due_controls(app, settings, scanner, state, clock())

    @app.on_rebalance_complete.connect
    def on_recovered(_sender: Any, /, *_: Any, signal: Any, **__: Any) -> None:
        # Sent once the tables are recovered: the scanner re-reads them on its next tick.
        state["recovered"] = True

    @app.task  # type: ignore[untyped-decorator]
    async def exit_on_stalled_recovery() -> None:
        await watch_recovery(app, settings)

    @app.task  # type: ignore[untyped-decorator]
    async def watch_for_stalls() -> None:
        await watch_partitions(app, settings, metrics, busy=lambda: bool(state.get("busy")))

    @app.page("/health")
    async def health(web: Any, request: Any) -> Any:
        return web.json(
            {
                "status": "ok",
                "version": __version__,
                "uptime_s": round(time.monotonic() - state["started"], 1),
                "batches": state["batches"],
                "assigned_partitions": sorted(
                    tp.partition
                    for tp in app.assignor.assigned_actives()
                    if tp.topic == settings.topics.drafts
                ),
            }
        )

    @app.page("/metrics")
    async def metrics_page(web: Any, request: Any) -> Any:
        return web.bytes(generate_latest(metrics.registry), content_type=METRICS_CONTENT_TYPE)

    return app


async def _send_due_controls(
    app: faust.App,
    settings: Settings,
    scanner: DeadlineScanner,
    state: dict[str, Any],
    now: datetime,
) -> None:
    """Append the control records due now for the partitions this process owns."""
    owned = {
        tp.partition for tp in app.assignor.assigned_actives() if tp.topic == settings.topics.drafts
    }
    if not owned:
        return
    rebuild = state.pop("recovered", False) or owned != state.get("owned")
    state["owned"] = owned
    expire = time.monotonic() - state.get("last_expiry", 0.0) >= EXPIRY_CHECK_EVERY_S
    if expire:
        state["last_expiry"] = time.monotonic()
    publisher = ProducerPublisher(app.producer)
    for rec in scanner.due(now, owned, rebuild=rebuild, expire=expire):
        try:
            ack = await publisher.send(
                settings.topics.drafts, rec.key, rec.value, rec.headers, rec.partition
            )
            await ack
        except Exception as exc:  # noqa: BLE001 - the next tick sends it again
            log.warning("deadline.send_failed", error=type(exc).__name__)


async def _open_evidence(
    resources: AsyncExitStack, settings: Settings, factory: EvidenceFactory
) -> EvidenceStore:
    """Open the evidence adapters, waiting for as long as it takes.

    A batch is in hand (the adapters open on the first one): an exception here would leave
    ``take_events``, which acknowledges the batch, so the drafts would be lost. Waiting instead
    keeps them, and the error is logged at every attempt.
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


async def _in_order(
    app: faust.App,
    settings: Settings,
    *,
    guard: OffsetGuard,
    probe: OffsetProbe | None,
    state: dict[str, Any],
    events: Any,
) -> list[Incoming]:
    """The records of a batch that may be decided now, in partition order (see ``offsets``)."""
    batch = [to_incoming(e) for e in events]
    generation = app.consumer_generation_id
    if state.get("generation") != generation:
        # A rebalance: Faust resumed every partition from its committed offset.
        guard.reset()
        state["generation"] = generation
    unknown = guard.unknown(batch)
    if unknown and probe is not None:
        try:
            guard.start(await probe.starts(unknown))
        except Exception as exc:  # noqa: BLE001 - without it, the stall watchdog still re-reads
            log.warning("offsets.probe_failed", error=type(exc).__name__)
    admitted, seeks = guard.admit(batch)
    for partition, offset in seeks.items():
        log.warning("partition.gap", partition=partition, expected=offset)
        await app.consumer.seek(faust.types.TP(settings.topics.drafts, partition), offset)
    return admitted


async def _dead_letter_batch(
    publisher: ProducerPublisher, settings: Settings, batch: list[Incoming], error: str
) -> None:
    now_ms = int(time.time() * 1000)
    for rec in batch:
        letter = dead_letter(
            rec,
            ErrorClass.INTERNAL_ERROR,
            f"internal error: {error}",
            failed_at_ms=now_ms,
            worker_version=__version__,
        )
        while True:
            try:
                await (
                    await publisher.send(
                        settings.topics.dlq, letter.key, letter.value, letter.headers
                    )
                )
                break
            except Exception as exc:  # noqa: BLE001 - hold the batch until it is dead-lettered
                log.warning("dlq.retry", error=type(exc).__name__)
                await asyncio.sleep(1.0)


def _update_lag(
    app: faust.App, settings: Settings, metrics: Metrics, batch: list[Incoming]
) -> None:
    last: dict[int, int] = {}
    for rec in batch:
        last[rec.partition] = max(last.get(rec.partition, -1), rec.offset)
    for partition, offset in last.items():
        with contextlib.suppress(Exception):  # lag is best-effort telemetry
            tp = faust.types.TP(settings.topics.drafts, partition)
            high = app.consumer.highwater(tp)
            if high is not None:
                metrics.consumer_lag.labels(partition=str(partition)).set(max(0, high - offset - 1))
