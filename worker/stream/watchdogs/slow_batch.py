"""Say what a batch that stays in hand too long is waiting on.

A batch waits on the evidence stores (retried while they are down, each attempt bounded by
``GW_STORE_TIMEOUT_S`` and logged as ``store.retry``) and on the broker's acknowledgements
(``broker.retry``); deciding it is pure and bounded by the draft size limit. A batch in hand for
minutes is an outage that the retry lines explain, or an await that never returns, which nothing
else would show: the consumer keeps its records in flight, ``/health`` answers, and the log is
silent.

So while a batch is in hand for ``GW_SLOW_BATCH_REPORT_S`` or longer, the worker logs one
``batch.slow`` warning per interval: how long the batch has been in hand and what every task of
the event loop is awaiting (code locations only, never a record's content). It changes nothing
else: the batch keeps waiting, and what it waits on decides what happens to it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import structlog

from worker.settings import Settings
from worker.stream.processing.loop import LoopState
from worker.stream.watchdogs.recovery import task_stacks

log = structlog.get_logger("worker.slow_batch")


class SlowBatchDetector:
    """Pure bookkeeping: is it time to report the batch in hand?"""

    def __init__(self, report_after_s: float) -> None:
        self._report_after_s = report_after_s
        #: (the batch's start, when it was last reported)
        self._reported: tuple[float, float] | None = None

    def observe(self, busy: bool, busy_since: float, now: float) -> bool:
        """One observation; ``True`` when the batch in hand is due a report."""
        if not busy or now - busy_since < self._report_after_s:
            return False
        last = self._reported
        if last is not None and last[0] == busy_since and now - last[1] < self._report_after_s:
            return False
        self._reported = (busy_since, now)
        return True


async def watch_batches(
    state: LoopState,
    settings: Settings,
    *,
    clock: Callable[[], float] = time.monotonic,
    interval_s: float = 1.0,
) -> None:
    """Run for the app's lifetime; log ``batch.slow`` for a batch in hand too long."""
    detector = SlowBatchDetector(settings.slow_batch_report_s)
    while True:
        await asyncio.sleep(interval_s)
        now = clock()
        if not detector.observe(state.busy, state.busy_since, now):
            continue
        try:
            tasks: list[str] | str = task_stacks()
        except Exception as exc:  # noqa: BLE001 - a diagnostic must never stop the watchdog
            tasks = f"unreadable: {type(exc).__name__}"
        log.warning(
            "batch.slow",
            in_hand_s=round(now - state.busy_since, 1),
            batches=state.batches,
            tasks=tasks,
        )
