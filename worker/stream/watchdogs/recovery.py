"""Exit when Faust's table recovery stops making progress, so a supervisor restarts the worker.

After the broker restarts, faust-streaming rebalances and recovers the turn table from its
changelog; on this bed that recovery can wait forever ("No event received for active tp ... since
recovery start"): the process stays up, ``/health`` answers, and no draft is decided again. A
fresh process recovers the same table at once. So while the worker is in recovery and the recovered
offsets have not moved for ``recovery_stall_exit_s``, it logs ``recovery.stalled`` and exits with
:data:`EXIT_RECOVERY_STALLED`; outputs are acknowledged before offsets, so an exit here loses
nothing (it is the same as the SIGKILL the chaos suite deals out), and the restarted worker
decides what was pending. See docs/decisions.md.
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
    waiting = []
    for tp, need in sorted(highwaters.items(), key=lambda item: str(item[0])):
        have = offsets.get(tp)
        if need is None or (have is not None and have >= need):
            continue
        name = f"{tp.topic}[{tp.partition}]" if hasattr(tp, "partition") else str(tp)
        waiting.append(f"{name} have {have} need {need}")
    return waiting


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
                waiting = waiting_partitions(app.tables.recovery)
            except Exception:  # noqa: BLE001 - the exit must not wait on a diagnostic
                waiting = []
            log.error(
                "recovery.stalled",
                stalled_s=round(detector.stalled_for(now), 1),
                waiting=waiting,
                exit_code=EXIT_RECOVERY_STALLED,
            )
            sys.stderr.flush()
            exit_process(EXIT_RECOVERY_STALLED)
            return
