"""The ledger sink's composition root: its consumer, its Postgres writer, and the loop.

``run_sink`` is what both the worker process (``GW_RUN_LEDGER_SINK=true``) and
``grounding-worker ledger-sink`` run; ``run_ledger_sink`` is the latter's whole process.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Any

import structlog
from aiokafka import AIOKafkaConsumer

from worker.kafka.access import client_security
from worker.ledger.sink import LedgerSink
from worker.runtime.event_loop import use_event_loop
from worker.runtime.logs import configure_logging
from worker.runtime.metrics import Metrics
from worker.runtime.metrics_server import serve_metrics
from worker.settings import Settings
from worker.stores.ledger import PostgresLedger

log = structlog.get_logger("worker.main")


def ledger_consumer(settings: Settings) -> Any:
    """A consumer of ``citations.ledger`` in the sink's own group (not started yet).

    Nothing is committed automatically: the sink commits offsets only after their rows are written.
    """
    return AIOKafkaConsumer(
        settings.topics.ledger,
        bootstrap_servers=settings.kafka_bootstrap_servers,
        **client_security(settings),
        group_id=f"{settings.app_id}-ledger-sink",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=4 * settings.max_draft_bytes + 65536,
    )


async def run_sink(
    settings: Settings,
    metrics: Metrics,
    *,
    on_ready: Callable[[LedgerSink], None] | None = None,
) -> None:
    """Run the sink until it is stopped; ``on_ready`` gets it before its consumer starts."""
    async with PostgresLedger.connect(settings) as writer:
        consumer = ledger_consumer(settings)
        sink = LedgerSink(settings, writer, metrics, consumer)
        if on_ready is not None:
            on_ready(sink)
        await consumer.start()
        try:
            await sink.run()
        finally:
            await consumer.stop()


def run_ledger_sink(settings: Settings) -> None:
    """Run the ledger sink alone until interrupted (SIGINT or SIGTERM)."""
    configure_logging(settings.log_level, json=settings.log_json)
    use_event_loop(settings.event_loop)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        metrics = Metrics()
        async with serve_metrics(metrics.registry, settings.web_host, settings.web_port) as port:

            def on_ready(sink: LedgerSink) -> None:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.add_signal_handler(sig, sink.stop)
                log.info("ledger_sink.starting", topic=settings.topics.ledger, metrics_port=port)

            await run_sink(settings, metrics, on_ready=on_ready)
            log.info("ledger_sink.stopped")

    asyncio.run(main())
