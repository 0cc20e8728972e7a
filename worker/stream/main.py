"""``grounding-worker run``: the composition root of the worker process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import faust
import structlog

from worker import __version__
from worker.core import PolicyBook
from worker.kafka.topics_admin import create_topics
from worker.ledger.main import run_sink
from worker.runtime.broker_watch import BrokerHealth, announce, watch_broker
from worker.runtime.event_loop import use_event_loop, use_thread_switch_interval
from worker.runtime.logs import configure_logging
from worker.runtime.metrics import Metrics
from worker.runtime.readiness import StoreHealth
from worker.runtime.shutdown import ShutdownDeadline
from worker.runtime.spans import spans_for
from worker.settings import Settings
from worker.stores.evidence import open_evidence
from worker.stream.app import build_app

log = structlog.get_logger("worker.main")


def load_policies(path: Path | None) -> PolicyBook:
    """The per-tenant policy book from its JSON file, or the default policy for everyone."""
    if path is None:
        return PolicyBook()
    return PolicyBook.model_validate_json(path.read_bytes())


class _BoundedStopWorker(faust.Worker):
    """Faust's worker whose stop signals also arm the shutdown deadline
    (``worker/runtime/shutdown.py``)."""

    def __init__(self, deadline: ShutdownDeadline, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def _on_sigterm(self) -> None:
        self._deadline.arm()
        super()._on_sigterm()

    def _on_sigint(self) -> None:
        self._deadline.arm()
        super()._on_sigint()


def run_worker(settings: Settings) -> None:
    """Create the topics if needed, then run the Faust worker and the ledger sink until stopped."""
    configure_logging(settings.log_level, json=settings.log_json)
    use_event_loop(settings.event_loop)
    use_thread_switch_interval(settings.thread_switch_interval_s)
    policies = load_policies(settings.policy_file)
    spans_for(settings)  # with GW_OTEL_ENABLED: the SDK is there, or the start ends here
    asyncio.run(create_topics(settings))
    metrics = Metrics()
    health = StoreHealth()
    broker = BrokerHealth(settings.ready_kafka_unreachable_s)
    app = build_app(
        settings,
        evidence_factory=lambda s: open_evidence(s, metrics=metrics, health=health),
        policies=policies,
        metrics=metrics,
        health=health,
        broker_health=broker,
    )

    @app.task  # type: ignore[untyped-decorator]
    async def broker_watch() -> None:
        await watch_broker(settings, broker, announce(settings, metrics.kafka_reachable.set))

    if settings.run_ledger_sink:

        @app.task  # type: ignore[untyped-decorator]
        async def ledger_sink() -> None:
            await run_sink(settings, metrics)

    log.info(
        "worker.starting",
        version=__version__,
        event_loop=settings.event_loop,
        app_id=settings.app_id,
        drafts=settings.topics.drafts,
        partitions=settings.topic_partitions,
        drafts_intake=settings.drafts_intake,
    )
    # configure_logging owns the handlers: Faust must neither replace them nor redirect stdout.
    worker = _BoundedStopWorker(
        ShutdownDeadline(settings.shutdown_timeout_s),
        app,
        loglevel=settings.log_level.upper(),
        quiet=True,
        override_logging=False,
        redirect_stdouts=False,
    )
    worker.spinner = None  # Faust's terminal spinner writes escape codes to stdout
    worker.execute_from_commandline()
