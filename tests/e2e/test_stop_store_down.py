"""SIGTERM while a store is down: the worker ends within ``GW_SHUTDOWN_TIMEOUT_S`` and nothing is
lost.

The first worker's PostgreSQL is a port nothing listens on (what a client sees of a stopped
server; the shared bed's server is never touched), so its batch retries the store for ever. It is
sent SIGTERM mid-retry and must exit within the timeout with one ``shutdown.forced`` line and no
verdict for the draft. A second worker of the same group, with the real stores, then decides the
draft: it was never committed, so nothing was lost.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Callable

import pytest

from dev.harness import Bus, WorkerProcess, answer, draft, free_port, running, unique_id

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

SHUTDOWN_TIMEOUT_S = 5.0


async def test_sigterm_with_a_store_down_ends_in_time_and_the_next_owner_decides_the_draft(
    new_worker: Callable[..., WorkerProcess],
) -> None:
    app_id = unique_id("stop-store-down")
    dead_pg = f"postgresql://gw:pw@127.0.0.1:{free_port()}/grounding"
    first = new_worker(
        "stop-first",
        app_id=app_id,
        partitions=1,
        env={
            "POSTGRES_DSN": dead_pg,
            "GW_SHUTDOWN_TIMEOUT_S": str(SHUTDOWN_TIMEOUT_S),
            "GW_STORE_TIMEOUT_S": "1",
            "GW_RUN_LEDGER_SINK": "false",
        },
    )
    turn = unique_id("t")
    envelope = draft(turn, answer("Checkout p95 latency rose to 840 ms [OBS-1001]."))
    await first.start()
    try:
        async with Bus(first.kafka_bootstrap, first.topics) as bus:
            await bus.send(envelope)
            await first.wait_for_log("store.retry", timeout=60)
            assert first.process is not None
            first.process.send_signal(signal.SIGTERM)
            stopped = time.monotonic()
            code = await asyncio.to_thread(first.process.wait, 40)
            took = time.monotonic() - stopped
            await asyncio.sleep(1.0)
            assert bus.for_turn(turn) == {}, "no verdict while the store was down"
    except subprocess.TimeoutExpired:
        await first.kill()
        raise AssertionError("the worker did not end within 40 s of SIGTERM") from None
    assert code == 0
    assert took < SHUTDOWN_TIMEOUT_S + 10
    forced = await first.wait_for_log("shutdown.forced", timeout=1)
    assert forced["setting"] == "GW_SHUTDOWN_TIMEOUT_S"
    assert forced["level"] == "error"

    second = new_worker("stop-second", app_id=app_id, partitions=1)
    async with running(second) as (_, bus):
        (verdict,) = await bus.wait_for("validated", key=turn, timeout=90)
        assert verdict.json()["draft_id"] == envelope["draft_id"]
