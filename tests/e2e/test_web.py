"""The worker's web port: only /health, /ready and /metrics answer; /ready means it.

Faust mounts table, router, graph and statistics views by default; ``/table/turns/<key>`` would
serve any tenant's turn state to whoever reaches the port. The worker serves none of them.
"""

# Waits take a plain `timeout=` (seconds), as in the harness.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from dev.harness import Bus, WorkerProcess, answer, draft, free_port, unique_id
from worker import __version__

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

#: Paths Faust would serve with its default views, and a few that nothing serves.
FAUST_VIEWS = (
    "/",
    "/table/",
    "/table/turns/",
    "/table/turns/some-turn/",
    "/router/",
    "/router/turns/some-turn/",
    "/graph/",
    "/stats/",
    "/assignment/",
    "/performance/",
    "/health/extra",
    "/metricsx",
    "/favicon.ico",
)


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


async def get(worker: WorkerProcess, path: str) -> tuple[int, bytes]:
    return await asyncio.to_thread(_get, f"http://127.0.0.1:{worker.web_port}{path}")


async def wait_ready(worker: WorkerProcess, *, want: bool, timeout: float = 60.0) -> Any:
    """Poll /ready until it says ``want``; return its document."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        status, body = await get(worker, "/ready")
        last = (status, body)
        doc = json.loads(body)
        if doc["ready"] is want:
            assert status == (200 if want else 503)
            return doc
        await asyncio.sleep(0.25)
    raise TimeoutError(f"/ready never said {want}: last {last!r}\n{worker.log_tail()}")


async def test_only_health_ready_and_metrics_answer(
    new_worker: Callable[..., WorkerProcess],
) -> None:
    async with new_worker("web") as worker:
        doc = await wait_ready(worker, want=True)
        assert doc == {"ready": True, "reasons": []}
        status, body = await get(worker, "/health")
        assert status == 200
        assert b'"status":"ok"' in body.replace(b" ", b"")
        status, body = await get(worker, "/metrics")
        assert status == 200
        assert b"grounding_drafts_total" in body
        for path in FAUST_VIEWS:
            status, body = await get(worker, path)
            assert status == 404, f"{path} answered {status}: {body[:200]!r}"
            assert b"turns" not in body


async def test_ready_turns_false_while_a_store_is_unreachable(
    new_worker: Callable[..., WorkerProcess],
) -> None:
    """MongoDB at a port nothing listens on: after the threshold, /ready is 503 naming mongo.

    /health stays 200 all along (liveness must not restart a worker for a store outage).
    """
    dead_mongo = f"mongodb://127.0.0.1:{free_port()}/"
    worker = new_worker(
        "web-store-down",
        env={"MONGO_URL": dead_mongo, "GW_READY_STORE_UNREACHABLE_S": "1"},
    )
    async with worker:
        await wait_ready(worker, want=True)
        async with Bus(worker.kafka_bootstrap, worker.topics) as bus:
            turn = unique_id("t-ready")
            meta = await bus.send(draft(turn, answer("Refunds rose [DOC-9001].")))
            doc = await wait_ready(worker, want=False, timeout=60)
            assert doc["ready"] is False
            assert doc["reasons"] == [r for r in doc["reasons"] if r.startswith("store mongo")]
            assert doc["reasons"], doc
            status, _ = await get(worker, "/health")
            assert status == 200

            # Stuck on that draft: the lag read from the broker's end offsets keeps growing.
            more = [draft(turn, answer(f"Refunds rose [DOC-9001]. Again {i}.")) for i in range(5)]
            await bus.send_many(more)
            lag = await wait_lag(worker, at_least=6)
            assert lag[meta.partition] == 6  # the stuck draft and the five behind it


async def wait_lag(
    worker: WorkerProcess, *, at_least: int, timeout: float = 30.0
) -> dict[int, float]:
    """Poll /metrics until some partition's grounding_consumer_lag reaches ``at_least``."""
    deadline = time.monotonic() + timeout
    lags: dict[int, float] = {}
    while time.monotonic() < deadline:
        lags = consumer_lag(await worker.metrics())
        if lags and max(lags.values()) >= at_least:
            return lags
        await asyncio.sleep(0.5)
    raise TimeoutError(f"lag never reached {at_least}: {lags}")


def consumer_lag(text: str) -> dict[int, float]:
    found = re.findall(
        r'^grounding_consumer_lag\{partition="(\d+)",topic="[^"]+"\} (\S+)$', text, re.M
    )
    return {int(p): float(v) for p, v in found}


async def test_metrics_of_a_real_worker(new_worker: Callable[..., WorkerProcess]) -> None:
    """Process and GC collectors, build info, per-store latency, lag per owned partition, and no
    ``_created`` series."""
    async with new_worker("web-metrics") as worker:
        async with Bus(worker.kafka_bootstrap, worker.topics) as bus:
            turn = unique_id("t-metrics")
            text = "Latency rose [OBS-1001]. The runbook pages the payments on-call [DOC-9001]."
            await bus.send(draft(turn, answer(text)))
            await bus.wait_for("validated", key=turn)
        lags = await wait_lag_settled(worker)
        text = await worker.metrics()
    assert lags == dict.fromkeys(range(worker.partitions), 0.0)
    for sample in (
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        'python_gc_collections_total{generation="0"}',
        'grounding_store_fetch_seconds_count{store="postgres"}',
        'grounding_store_fetch_seconds_count{store="mongo"}',
    ):
        assert re.search(rf"^{re.escape(sample)} \d", text, re.M), sample
    (build,) = re.findall(r"^grounding_build_info\{(.*)\} 1\.0$", text, re.M)
    assert f'version="{__version__}"' in build
    assert "_created" not in text


async def wait_lag_settled(worker: WorkerProcess, timeout: float = 30.0) -> dict[int, float]:
    """The lag once every owned partition reports 0 (committed up to the end)."""
    deadline = time.monotonic() + timeout
    lags: dict[int, float] = {}
    while time.monotonic() < deadline:
        lags = consumer_lag(await worker.metrics())
        if len(lags) == worker.partitions and not any(lags.values()):
            return lags
        await asyncio.sleep(0.5)
    return lags
