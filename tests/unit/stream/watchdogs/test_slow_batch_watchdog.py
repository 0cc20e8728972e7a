"""The slow-batch watchdog: a batch in hand too long is logged with what every task awaits, once
per interval, and nothing else changes (the chaos suite's both-stores outage once left a batch in
hand for minutes with a silent log)."""

from __future__ import annotations

import asyncio

from structlog.testing import capture_logs

from worker.settings import Settings
from worker.stream.processing.loop import LoopState
from worker.stream.watchdogs.slow_batch import SlowBatchDetector, watch_batches


def test_an_idle_worker_or_a_quick_batch_is_never_reported() -> None:
    d = SlowBatchDetector(report_after_s=10)
    assert [d.observe(False, 0.0, t) for t in (0, 50, 100)] == [False] * 3
    assert [d.observe(True, 100.0, t) for t in (100, 105, 109.9)] == [False] * 3


def test_a_slow_batch_is_reported_once_per_interval() -> None:
    d = SlowBatchDetector(report_after_s=10)
    seen = [t for t in range(36) if d.observe(True, 0.0, float(t))]
    assert seen == [10, 20, 30]


def test_the_next_slow_batch_is_reported_afresh() -> None:
    d = SlowBatchDetector(report_after_s=10)
    assert d.observe(True, 0.0, 12.0) is True
    assert d.observe(False, 0.0, 13.0) is False  # done
    assert d.observe(True, 14.0, 23.0) is False  # a new batch, 9 s in hand
    assert d.observe(True, 14.0, 24.0) is True  # 10 s: not held back by the last report


async def test_the_watchdog_logs_the_tasks_a_stuck_batch_awaits() -> None:
    state = LoopState(started=0.0, busy=True, busy_since=0.0, batches=7)
    never = asyncio.Event()

    async def stuck_store_call() -> None:
        await never.wait()

    stuck = asyncio.create_task(stuck_store_call(), name="stuck-batch")
    now = [100.0]
    with capture_logs() as logs:
        task = asyncio.create_task(
            watch_batches(
                state, Settings(slow_batch_report_s=60), clock=lambda: now[0], interval_s=0.01
            )
        )
        await asyncio.sleep(0.1)
        now[0] = 150.0  # within the interval of the first report: no second line
        await asyncio.sleep(0.1)
        task.cancel()
        stuck.cancel()
        await asyncio.gather(task, stuck, return_exceptions=True)
    (line,) = [e for e in logs if e["event"] == "batch.slow"]
    assert line["log_level"] == "warning"
    assert line["in_hand_s"] == 100.0
    assert line["batches"] == 7
    (mine,) = [t for t in line["tasks"] if t.startswith("stuck-batch:")]
    assert "stuck_store_call" in mine
    assert "wait" in mine.split(" > ")[-2]


async def test_the_watchdog_is_silent_while_no_batch_is_in_hand() -> None:
    state = LoopState(started=0.0, busy=False, busy_since=0.0)
    with capture_logs() as logs:
        task = asyncio.create_task(
            watch_batches(
                state, Settings(slow_batch_report_s=1), clock=lambda: 1_000.0, interval_s=0.01
            )
        )
        await asyncio.sleep(0.1)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert [e for e in logs if e["event"] == "batch.slow"] == []
