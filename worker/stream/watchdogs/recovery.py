"""Exit when Faust's table recovery stops making progress, so a supervisor restarts the worker.

After the broker restarts, faust-streaming rebalances and recovers the turn table from its
changelog; on this bed that recovery can wait forever ("No event received for active tp ... since
recovery start"): the process stays up, ``/health`` answers, and no draft is decided again. A
fresh process recovers the same table at once. So while the worker is in recovery and the recovered
offsets have not moved for ``recovery_stall_exit_s``, it logs ``recovery.stalled`` and exits with
:data:`EXIT_RECOVERY_STALLED`; outputs are acknowledged before offsets, so an exit here loses
nothing (it is the same as the SIGKILL the chaos suite deals out), and the restarted worker
decides what was pending. See docs/decisions.md.

The stall could not be reproduced at will (docs/reliability.md, scenario 3), so the exit's log line
carries what explains it afterwards: the partitions still waited on, where Faust's consumer and
aiokafka's fetcher stand for them (``state``, ``worker.stream.faust_internals.recovery_state``), and
what every task of the app's loop is awaiting (``tasks``): a delivery blocked in a channel, a
recovery step that never returned, or a fetcher that holds records nobody takes.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable, Hashable
from typing import Any

import structlog

from worker.settings import Settings
from worker.stream.faust_internals import partition_name, recovery_state

log = structlog.get_logger("worker.recovery_watchdog")

#: EX_TEMPFAIL: a temporary failure; the supervisor should start the worker again.
EXIT_RECOVERY_STALLED = 75


class RecoveryStallDetector:
    """Pure bookkeeping: has recovery been running without progress for too long?"""

    def __init__(self, exit_after_s: float) -> None:
        self._exit_after_s = exit_after_s
        self._progress: Hashable | None = None
        self._since: float | None = None

    def observe(self, in_recovery: bool, progress: Hashable, now: float) -> bool:
        """One observation; ``True`` when recovery made no progress for ``exit_after_s``."""
        if not in_recovery:
            self._progress, self._since = None, None
            return False
        if self._since is None or progress != self._progress:
            self._progress, self._since = progress, now
            return False
        return now - self._since >= self._exit_after_s

    def stalled_for(self, now: float) -> float:
        return 0.0 if self._since is None else now - self._since


def recovery_progress(recovery: Any) -> tuple[bool, Hashable]:
    """(in recovery, the offsets recovered so far) of Faust's ``app.tables.recovery``.

    An offset is ``None`` until the first changelog record of its partition arrives.
    """
    offsets = tuple(sorted((str(tp), repr(o)) for tp, o in dict(recovery.active_offsets).items()))
    return bool(recovery.in_recovery), offsets


def waiting_partitions(recovery: Any) -> list[str]:
    """The changelog partitions recovery still waits on, ``topic[partition] have X need Y``
    (Faust's own table of them, as one log field for on-call: which partition stalled, and
    how far from its end)."""
    highwaters = dict(getattr(recovery, "active_highwaters", {}) or {})
    offsets = dict(getattr(recovery, "active_offsets", {}) or {})
    return [
        f"{partition_name(tp)} have {offsets.get(tp)} need {highwaters[tp]}"
        for tp in waiting_tps(recovery)
    ]


def waiting_tps(recovery: Any) -> list[Any]:
    """The changelog partitions (Faust's ``TP``) recovery still waits on (see
    :func:`waiting_partitions`)."""
    highwaters = dict(getattr(recovery, "active_highwaters", {}) or {})
    offsets = dict(getattr(recovery, "active_offsets", {}) or {})
    return [
        tp
        for tp, need in sorted(highwaters.items(), key=lambda item: str(item[0]))
        if need is not None and (offsets.get(tp) is None or offsets[tp] < need)
    ]


def awaiting(coro: Any, limit: int = 40) -> list[str]:
    """What a coroutine is awaiting, outermost first: ``file:line function`` per coroutine down
    its ``await`` chain, then the object it finally waits on (a future, an event's waiter)."""
    chain: list[str] = []
    while coro is not None and len(chain) < limit:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            chain.append(f"<{type(coro).__name__}>")
            break
        code = frame.f_code
        chain.append(f"{_short(code.co_filename)}:{frame.f_lineno} {code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return chain


def _short(path: str) -> str:
    """A source path from its package on (``faust/tables/recovery.py``), for a readable log."""
    for root in ("site-packages/", "/worker/"):
        if root in path:
            tail = path.split(root, 1)[1]
            return tail if root == "site-packages/" else f"worker/{tail}"
    return path


def task_stacks() -> list[str]:
    """Every task of the running loop as ``name: outer > ... > inner`` (see :func:`awaiting`)."""
    stacks = []
    for task in asyncio.all_tasks():
        if task is asyncio.current_task():
            continue
        stacks.append(f"{task.get_name()}: {' > '.join(awaiting(task.get_coro()))}")
    return sorted(stacks)


def stall_report(app: Any) -> dict[str, Any]:
    """The fields of the ``recovery.stalled`` line besides the timings; a field that cannot be
    read is left out (the exit must not wait on a diagnostic)."""
    report: dict[str, Any] = {}
    recovery = app.tables.recovery
    for field, read in (
        ("waiting", lambda: waiting_partitions(recovery)),
        ("state", lambda: recovery_state(app, waiting_tps(recovery))),
        ("tasks", task_stacks),
    ):
        try:
            report[field] = read()
        except Exception as exc:  # noqa: BLE001 - see the docstring
            report[field] = f"unreadable: {type(exc).__name__}"
    return report


async def watch_recovery(
    app: Any,
    settings: Settings,
    *,
    exit_process: Callable[[int], Any] = os._exit,
    clock: Callable[[], float] = time.monotonic,
    interval_s: float = 1.0,
) -> None:
    """Run for the app's lifetime; exit the process when recovery stalls."""
    detector = RecoveryStallDetector(settings.recovery_stall_exit_s)
    while True:
        await asyncio.sleep(interval_s)
        try:
            in_recovery, progress = recovery_progress(app.tables.recovery)
        except Exception as exc:  # noqa: BLE001 - a watchdog must never be what stops the worker
            log.warning("recovery_check.failed", error=type(exc).__name__)
            continue
        now = clock()
        if detector.observe(in_recovery, progress, now):
            try:
                report = stall_report(app)
            except Exception as exc:  # noqa: BLE001 - the exit must not wait on a diagnostic
                report = {"waiting": f"unreadable: {type(exc).__name__}"}
            log.error(
                "recovery.stalled",
                stalled_s=round(detector.stalled_for(now), 1),
                exit_code=EXIT_RECOVERY_STALLED,
                **report,
            )
            sys.stderr.flush()
            exit_process(EXIT_RECOVERY_STALLED)
            return
