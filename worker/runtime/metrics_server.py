"""``/metrics`` and ``/health`` for a process without a Faust app: the ledger sink run alone.

The worker serves its pages from Faust's web server (``worker.stream.app``); ``grounding-worker
ledger-sink`` has no Faust app, so it serves the same two pages with a small aiohttp server on
``GW_WEB_HOST``:``GW_WEB_PORT``. Every other path is 404.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from worker import __version__

#: aiohttp refuses a charset inside content_type; the exposition format is UTF-8 by definition.
METRICS_CONTENT_TYPE = "; ".join(
    part for part in CONTENT_TYPE_LATEST.split("; ") if not part.startswith("charset=")
)


@asynccontextmanager
async def serve_metrics(registry: CollectorRegistry, host: str, port: int) -> AsyncIterator[int]:
    """Serve ``registry`` at ``/metrics`` (and a liveness ``/health``); yield the bound port."""

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(
            body=generate_latest(registry), content_type=METRICS_CONTENT_TYPE, charset="utf-8"
        )

    async def health(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "version": __version__})

    async with _serve({"/metrics": metrics, "/health": health}, host, port) as bound:
        yield bound


@asynccontextmanager
async def serve_waiting(
    host: str, port: int, reasons: Callable[[], list[str]]
) -> AsyncIterator[int]:
    """While a command waits for its services at start: ``/health`` 200 (alive, waiting) and
    ``/ready`` 503 with ``reasons()``, so a probe sees a process that waits, not a dead one."""

    async def health(_: web.Request) -> web.Response:
        return web.json_response({"status": "starting", "version": __version__})

    async def ready(_: web.Request) -> web.Response:
        return web.json_response({"ready": False, "reasons": reasons()}, status=503)

    async with _serve({"/health": health, "/ready": ready}, host, port) as bound:
        yield bound


Handler = Callable[[web.Request], Awaitable[web.Response]]


@asynccontextmanager
async def _serve(pages: dict[str, Handler], host: str, port: int) -> AsyncIterator[int]:
    """Serve ``pages`` (GET only; every other path 404) until exit; yield the bound port."""
    app = web.Application()
    for path, handler in pages.items():
        app.router.add_get(path, handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    try:
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        yield int(sockets[0].getsockname()[1]) if sockets else port
    finally:
        await runner.cleanup()
