"""A stop that ends within its time: after SIGTERM the process exits by ``GW_SHUTDOWN_TIMEOUT_S``.

Faust stops by letting the batch in hand finish (``stream_wait_empty``), which is right while the
stores answer: its outputs are published and its offsets committed. A batch waiting for a store
that does not answer never finishes (an outage is retried, never turned into a verdict), so the
stop used to wait until the kubelet's SIGKILL. Once SIGTERM (or SIGINT) has been received, a
timer thread of its own (the event loop may be the one waiting) ends the process after the
timeout with one ``shutdown.forced`` line. Nothing is lost: the waiting batch was neither
published nor committed, so the partitions' next owner reads it again, as after a SIGKILL (the
chaos suite's kill scenario shows the turn table and outputs survive that).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

import structlog

log = structlog.get_logger("worker.shutdown")

#: Exit code of a forced stop: the stop was asked for, so it is no failure for a supervisor.
EXIT_FORCED = 0


class ShutdownDeadline:
    """Arms once, on the first stop signal; fires ``exit`` after ``timeout_s`` unless the process
    has ended first (the timer thread is a daemon)."""

    def __init__(
        self,
        timeout_s: float,
        *,
        exit_process: Callable[[int], object] = os._exit,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._timeout_s = timeout_s
        self._exit = exit_process
        self._clock = clock
        self._timer: threading.Timer | None = None
        self._armed_at = 0.0

    def arm(self) -> None:
        """Start the countdown (a second signal does not restart it)."""
        if self._timer is not None:
            return
        self._armed_at = self._clock()
        self._timer = threading.Timer(self._timeout_s, self.fire)
        self._timer.daemon = True
        self._timer.start()

    def fire(self) -> None:
        """The stop did not finish in time: say so in one line, then end the process."""
        log.error(
            "shutdown.forced",
            waited_s=round(self._clock() - self._armed_at, 1),
            setting="GW_SHUTDOWN_TIMEOUT_S",
            reason="a batch still waits (a store down?); it was not committed, the partitions' "
            "next owner decides it again",
        )
        logging.shutdown()  # flush the line before the process goes
        self._exit(EXIT_FORCED)
