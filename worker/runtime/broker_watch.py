"""Is the broker reachable? One metadata round trip every few seconds, one log line per change.

A running worker's own clients retry a lost broker for ever and say so only in aiokafka's error
lines (rate-limited in :mod:`worker.runtime.logs`). This watch asks the cluster for its metadata
every :func:`probe_interval` seconds with its own client; once every probe has failed for
``GW_READY_KAFKA_UNREACHABLE_S`` it logs ``kafka.unreachable`` once, sets
``grounding_kafka_reachable`` to 0 and ``/ready`` answers 503; the first probe that answers
again logs ``kafka.recovered`` (with the outage's length) and undoes both. :class:`BrokerHealth`
is the bookkeeping, a pure function of the probe results and the clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Literal

import structlog
from aiokafka.client import AIOKafkaClient

from worker.kafka.access import client_security
from worker.settings import Settings

log = structlog.get_logger("worker.kafka")

Change = Literal["unreachable", "recovered"]


class BrokerHealth:
    """Since when every probe of the broker has failed, and whether that was announced."""

    def __init__(self, after_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._after_s = after_s
        self._clock = clock
        self._down_since: float | None = None
        self.announced = False

    def down_for(self) -> float | None:
        """Seconds every probe has failed, or ``None`` while the broker answers."""
        return None if self._down_since is None else self._clock() - self._down_since

    def unreachable(self) -> bool:
        """Failing for at least the threshold: ``/ready`` says no."""
        down = self.down_for()
        return down is not None and down >= self._after_s

    def observe(self, ok: bool) -> Change | None:
        """Record one probe; return the change to announce, if this probe made one."""
        if ok:
            self._down_since = None
            if self.announced:
                self.announced = False
                return "recovered"
            return None
        if self._down_since is None:
            self._down_since = self._clock()
        if not self.announced and self.unreachable():
            self.announced = True
            return "unreachable"
        return None


def probe_interval(after_s: float) -> float:
    """Probe often enough to notice within a third of the threshold, at most every 5 s."""
    return max(0.5, min(5.0, after_s / 3))


async def watch_broker(
    settings: Settings,
    health: BrokerHealth,
    on_change: Callable[[Change, float], None],
) -> None:
    """Probe the broker until cancelled; ``on_change`` hears each change and the outage's length
    so far (for ``unreachable``: the threshold's worth; for ``recovered``: the whole outage)."""
    interval = probe_interval(settings.ready_kafka_unreachable_s)
    client = AIOKafkaClient(
        bootstrap_servers=settings.kafka_bootstrap_servers,
        request_timeout_ms=int(max(interval, 1.0) * 1000),
        client_id=f"{settings.app_id}-broker-watch",
        **client_security(settings),
    )
    # Not up now: the loop below counts it as a failed probe.
    with contextlib.suppress(Exception):
        await client.bootstrap()
    try:
        while True:
            started = time.monotonic()
            down_before = health.down_for()
            try:
                await asyncio.wait_for(client.fetch_all_metadata(), interval)
                ok = True
            except Exception:  # noqa: BLE001 - any failure to answer is "unreachable"
                ok = False
            change = health.observe(ok)
            if change == "recovered":
                on_change(change, down_before or 0.0)
            elif change == "unreachable":
                on_change(change, health.down_for() or 0.0)
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))
    finally:
        await client.close()


def announce(
    settings: Settings, set_reachable: Callable[[bool], None]
) -> Callable[[Change, float], None]:
    """The ``on_change`` of the running worker: one log line and the gauge."""

    def on_change(change: Change, seconds: float) -> None:
        set_reachable(change == "recovered")
        fields = {
            "bootstrap": settings.kafka_bootstrap_servers,
            "setting": "GW_KAFKA_BOOTSTRAP_SERVERS",
        }
        if change == "unreachable":
            log.error("kafka.unreachable", down_s=round(seconds, 1), **fields)
        else:
            log.warning("kafka.recovered", down_s=round(seconds, 1), **fields)

    return on_change
