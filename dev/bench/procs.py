"""Processes under test: start with an environment, watch (/proc, /health, /metrics), stop.

Every process is started in its own session and stopped by its pid (SIGTERM, then SIGKILL after a
bounded wait), so a scenario never leaves a worker behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

CLK_TCK = os.sysconf("SC_CLK_TCK")
#: The checkout: children run from here, so ``python -m dev.bench.<module>`` imports this package.
ROOT = Path(__file__).resolve().parents[2]
STOP_TIMEOUT_S = 20.0


def free_port() -> int:
    """A TCP port nobody listens on right now (on 127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proc:
    """One child process with its log file."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.popen = subprocess.Popen(
            argv,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=ROOT,  # ``python -m dev.bench.<module>`` finds this checkout's package
        )
        self.started = time.monotonic()

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def check_alive(self) -> None:
        """Raise with the log's tail when the process has died."""
        if not self.alive():
            tail = self.log_path.read_bytes()[-3000:].decode(errors="replace")
            raise RuntimeError(f"{self.name} exited with {self.popen.returncode}:\n{tail}")

    def peak_rss_mb(self) -> float | None:
        """VmHWM of the process (peak resident set), in MiB."""
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return None

    def cpu_seconds(self) -> float | None:
        """User + system CPU time the process has used so far."""
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{self.pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            return (int(fields[11]) + int(fields[12])) / CLK_TCK
        return None

    def stop(self) -> int | None:
        """SIGTERM, wait, then SIGKILL; returns the exit code."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                self.popen.wait(timeout=STOP_TIMEOUT_S)
        self._log.close()
        return self.popen.returncode


def machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + parts[4]
    total = sum(parts[:8])
    return float(total - idle), float(total)


def http_get(port: int, path: str, timeout: float = 2.0) -> bytes | None:
    """GET http://127.0.0.1:<port><path>, or None when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as resp:
            return bytes(resp.read())
    except OSError:
        return None


def health(port: int) -> dict[str, Any] | None:
    """The worker's /health document."""
    body = http_get(port, "/health")
    if body is None:
        return None
    with contextlib.suppress(ValueError):
        return dict(json.loads(body))
    return None


def scrape_by_label(port: int, name: str, label: str) -> dict[str, float]:
    """Samples of one metric from /metrics, summed by the value of ``label``; {} if no answer."""
    body = http_get(port, "/metrics", timeout=5.0)
    found: dict[str, float] = {}
    if body is None:
        return found
    marker = f'{label}="'
    for line in body.decode().splitlines():
        if not line.startswith(name + "{") or marker not in line:
            continue
        value = line.split(marker, 1)[1].split('"', 1)[0]
        with contextlib.suppress(ValueError):
            found[value] = found.get(value, 0.0) + float(line.rsplit(" ", 1)[1])
    return found


def scrape(port: int, names: tuple[str, ...]) -> dict[str, float]:
    """Sum of every sample of each named metric (labels folded) from /metrics; {} if no answer."""
    body = http_get(port, "/metrics", timeout=5.0)
    found = dict.fromkeys(names, 0.0)
    if body is None:
        return {}
    for line in body.decode().splitlines():
        if line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in found:
            with contextlib.suppress(ValueError):
                found[name] += float(line.rsplit(" ", 1)[1])
    return found


def python_argv(*args: str) -> list[str]:
    """This interpreter, unbuffered, with ``args``."""
    return [sys.executable, "-u", *args]


class CpuSampler:
    """The CPU seconds of some processes every ``interval`` s, in the background, with the wall
    time of each sample; ``between`` interpolates a process's CPU over a window of wall time.

    So a figure per draft counts the CPU a process spent while the timed drafts went through
    (start-up, imports and idle tails left out), whatever the process is.
    """

    def __init__(self, procs: dict[str, Proc], interval: float = 0.05) -> None:
        self._procs = procs
        self._interval = interval
        self.samples: dict[str, list[tuple[float, float]]] = {name: [] for name in procs}
        self._task: asyncio.Task[None] | None = None

    def sample(self) -> None:
        now = time.time()
        for name, proc in self._procs.items():
            cpu = proc.cpu_seconds()
            if cpu is not None:
                self.samples[name].append((now, cpu))

    async def _loop(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(self._interval)

    def start(self) -> CpuSampler:
        self._task = asyncio.create_task(self._loop())
        return self

    async def stop(self) -> None:
        self.sample()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def at(self, name: str, when: float) -> float | None:
        """The process's CPU seconds at wall time ``when`` (linear between two samples)."""
        pts = self.samples[name]
        if not pts or when < pts[0][0]:
            return None
        for (t0, c0), (t1, c1) in itertools.pairwise(pts):
            if t0 <= when <= t1:
                return c0 + (c1 - c0) * ((when - t0) / (t1 - t0) if t1 > t0 else 1.0)
        return pts[-1][1]

    def between(self, name: str, start: float, end: float) -> float | None:
        """CPU seconds the process used between two wall times."""
        a, b = self.at(name, start), self.at(name, end)
        return None if a is None or b is None else max(0.0, b - a)
