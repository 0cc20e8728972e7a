"""Processes of the test bed: run a tool, start a daemon in its own session, find and stop it.

A daemon leads a process group of its own, so stopping it stops whatever it started; zombies
count as gone. Everything is read from ``/proc`` and signals, with no third-party library.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from dev.testbed.layout import START_TIMEOUT_S, STOP_TIMEOUT_S, ServiceError, say


def run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a command to completion; on failure raise with its output, which is otherwise hidden."""
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise ServiceError(
            f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
        )
    return proc.stdout


def require_tool(tool: str, package: str) -> None:
    if shutil.which(tool) is None:
        raise ServiceError(f"`{tool}` is not on PATH: install it (Debian package `{package}`)")


def spawn(cmd: list[str], log: Path, *, cwd: Path, env: dict[str, str] | None = None) -> int:
    """Start a daemon in a session of its own, output to `log`; return its pid (= its pgid)."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return proc.pid


def wait_until(what: str, check: Callable[[], bool], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
    raise ServiceError(f"{what} did not become ready within {timeout:.0f}s; end of {log}:\n{tail}")


def fail_fast(name: str, log: Path) -> bool:
    """For a readiness check: raise at once when the daemon died during start-up."""
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
    raise ServiceError(f"{name} exited during start-up; end of {log}:\n{tail}")


def read_pid(path: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text().split()[0])
    return None


def read_stat(proc: Path) -> list[str]:
    """Fields of /proc/PID/stat after the command name: state, ppid, pgrp, ..."""
    return (proc / "stat").read_text().rsplit(")", 1)[1].split()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purposes.
    with contextlib.suppress(OSError):
        return read_stat(Path(f"/proc/{pid}"))[0] != "Z"
    return True


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Only zombies left counts as gone.
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = read_stat(proc)
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def children(pid: int) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            if proc.name.isdigit() and int(read_stat(proc)[1]) == pid:
                found.append(int(proc.name))
    return found


def kill_group(pgid: int, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT_S) -> None:
    """Signal a whole process group, wait for it to go, and SIGKILL whatever is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)
    deadline = time.monotonic() + timeout
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if group_alive(pgid):
        say(f"process group {pgid} ignored signal {sig}; killing it")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
    if group_alive(pgid):
        raise ServiceError(f"process group {pgid} survived SIGKILL")


def await_daemon(name: str, pid: int, home: Path, log: Path, ready: Callable[[], bool]) -> None:
    """Record ``pid`` in ``home/pid``, then wait (``START_TIMEOUT_S``) until ``ready()``; fail
    at once, with the log's end, when the daemon dies first."""
    (home / "pid").write_text(f"{pid}\n")
    wait_until(
        name, lambda: (pid_alive(pid) or fail_fast(name, log)) and ready(), log, START_TIMEOUT_S
    )


def running_daemon(home: Path, ready: Callable[[], bool]) -> int | None:
    """The pid in ``home/pid`` when that process is alive and ``ready()``, else ``None``."""
    pid = read_pid(home / "pid")
    if pid and pid_alive(pid) and ready():
        return pid
    return None


def stop_daemon(home: Path) -> None:
    """Stop the process group recorded in ``home/pid`` (if alive) and forget it."""
    pid = read_pid(home / "pid")
    if pid and group_alive(pid):
        kill_group(pid)
    (home / "pid").unlink(missing_ok=True)
