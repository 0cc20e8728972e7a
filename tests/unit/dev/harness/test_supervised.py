"""The harness's supervisor restarts a worker that exits 75, and only then (``supervised``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from dev.harness import WorkerProcess, supervised


class Scripted(WorkerProcess):
    """A stand-in process per start: each start runs the next exit code (or sleeps)."""

    codes: list[int | None]

    async def start(self, timeout: float = 90.0) -> dict[str, Any]:  # noqa: ASYNC109 - base's
        code = self.codes.pop(0)
        body = "import time; time.sleep(30)" if code is None else f"raise SystemExit({code})"
        self.process = subprocess.Popen(  # noqa: ASYNC220 - returns at once
            [sys.executable, "-c", body], start_new_session=True
        )
        self.starts += 1
        return {}


def scripted(tmp_path: Path, codes: list[int | None]) -> Scripted:
    worker = Scripted(kafka_bootstrap="-", postgres_dsn="-", mongo_url="-", workdir=tmp_path)
    worker.codes = codes
    return worker


async def wait_exit(worker: WorkerProcess) -> None:
    if worker.process is not None:
        await asyncio.to_thread(worker.process.wait, 10)


async def test_an_exit_75_is_started_again_until_the_worker_runs(tmp_path: Path) -> None:
    worker = scripted(tmp_path, [75, 75, None])
    await worker.start()
    async with supervised(worker, poll_s=0.02) as restarts:
        for _ in range(200):
            if worker.starts == 3:
                break
            await asyncio.sleep(0.02)
    assert (worker.starts, restarts, worker.running) == (3, [75, 75], True)
    await worker.kill()


async def test_any_other_exit_is_left_alone(tmp_path: Path) -> None:
    worker = scripted(tmp_path, [1, None])
    await worker.start()
    async with supervised(worker, poll_s=0.02) as restarts:
        await wait_exit(worker)
        await asyncio.sleep(0.2)
    assert (worker.starts, restarts, worker.process and worker.process.returncode) == (1, [], 1)
