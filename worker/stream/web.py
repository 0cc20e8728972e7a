"""The worker's own pages on Faust's web server: ``/health``, ``/ready``, ``/metrics``, no other."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import faust
from faust.web.drivers.aiohttp import Web as AiohttpWeb
from prometheus_client import generate_latest

from worker import __version__
from worker.runtime.broker_watch import BrokerHealth
from worker.runtime.metrics import Metrics
from worker.runtime.metrics_server import METRICS_CONTENT_TYPE
from worker.runtime.readiness import StoreHealth, readiness
from worker.settings import Settings
from worker.stream.processing.loop import LoopState, Partitions


class OwnViewsWeb(AiohttpWeb):
    """Faust's aiohttp web server without any of Faust's own views.

    Faust mounts ``/table/<name>/<key>`` (any tenant's turn state), ``/router``, ``/graph``,
    statistics and an index page by default; the worker serves only the pages it adds itself
    (``/health``, ``/ready``, ``/metrics``). Every other path answers 404.
    """

    default_blueprints: ClassVar[Any] = ()
    production_blueprints: ClassVar[Any] = ()
    debug_blueprints: ClassVar[Any] = ()
    optional_blueprints: ClassVar[Any] = ()


def wire_pages(
    app: faust.App,
    settings: Settings,
    state: LoopState,
    *,
    partitions: Partitions,
    metrics: Metrics,
    store_health: StoreHealth,
    broker_health: BrokerHealth | None = None,
) -> None:
    """``/health`` (liveness), ``/ready`` (readiness) and ``/metrics``: the only pages served."""

    @app.page("/health")
    async def health_page(web: Any, request: Any) -> Any:
        # Liveness: the process and its event loop answer. Never fails on a dependency.
        return web.json(
            {
                "status": "ok",
                "version": __version__,
                "uptime_s": round(time.monotonic() - state.started, 1),
                "batches": state.batches,
                "assigned_partitions": sorted(partitions.owned()),
            }
        )

    @app.page("/ready")
    async def ready_page(web: Any, request: Any) -> Any:
        # Readiness: 200 when the worker can decide drafts now, 503 (with the reasons) when not.
        recovery: Any = app.tables.recovery  # type: ignore[attr-defined]
        answer = readiness(
            recovering=bool(
                app.rebalancing or recovery.in_recovery or not recovery.completed.is_set()
            ),
            assigned=sorted(partitions.owned()),
            stores_down_for=store_health.down_for(),
            store_unreachable_after_s=settings.ready_store_unreachable_s,
            # Once announced (logged, gauge at 0), so the page, the line and the metric agree.
            kafka_down_for=(
                broker_health.down_for()
                if broker_health is not None and broker_health.announced
                else None
            ),
            kafka_unreachable_after_s=settings.ready_kafka_unreachable_s,
        )
        return web.json(
            {"ready": answer.ready, "reasons": list(answer.reasons)},
            status=200 if answer.ready else 503,
        )

    @app.page("/metrics")
    async def metrics_page(web: Any, request: Any) -> Any:
        return web.bytes(generate_latest(metrics.registry), content_type=METRICS_CONTENT_TYPE)
