"""The worker's web port: only /health, /ready and /metrics answer; /ready means it.

Faust mounts table, router, graph and statistics views by default; ``/table/turns/<key>`` would
serve any tenant's turn state to whoever reaches the port. The worker serves none of them.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from harness import Bus, WorkerProcess, answer, draft, free_port, unique_id

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


async def wait_ready(worker: WorkerProcess, *, want: bool, timeout: float = 60.0) -> Any:  # noqa: ASYNC109
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
            await bus.send(draft(turn, answer("Refunds rose [DOC-9001].")))
            doc = await wait_ready(worker, want=False, timeout=60)
        assert doc["ready"] is False
        assert doc["reasons"] == [r for r in doc["reasons"] if r.startswith("store mongo")]
        assert doc["reasons"], doc
        status, _ = await get(worker, "/health")
        assert status == 200
