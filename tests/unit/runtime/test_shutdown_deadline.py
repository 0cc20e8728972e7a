"""The shutdown deadline: armed once by the first stop signal, it ends the process after the
timeout with one ``shutdown.forced`` line."""

from __future__ import annotations

import threading

from structlog.testing import capture_logs

from worker.runtime.shutdown import EXIT_FORCED, ShutdownDeadline


def test_it_fires_once_after_the_timeout_with_one_line() -> None:
    exited: list[int] = []
    done = threading.Event()

    def fake_exit(code: int) -> None:
        exited.append(code)
        done.set()

    deadline = ShutdownDeadline(0.05, exit_process=fake_exit)
    with capture_logs() as logs:
        deadline.arm()
        deadline.arm()  # a second signal does not start a second countdown
        assert done.wait(5)
        threading.Event().wait(0.2)
    assert exited == [EXIT_FORCED]
    (line,) = [e for e in logs if e["event"] == "shutdown.forced"]
    assert line["setting"] == "GW_SHUTDOWN_TIMEOUT_S"
    assert line["log_level"] == "error"


def test_it_does_nothing_unless_armed() -> None:
    exited: list[int] = []
    ShutdownDeadline(0.01, exit_process=exited.append)
    threading.Event().wait(0.1)
    assert exited == []
