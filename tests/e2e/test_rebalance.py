"""Two rebalances while drafts flow, under each drafts intake (``GW_DRAFTS_INTAKE``).

A second worker joins the group in the middle of a burst, then the first leaves (SIGTERM) in
the middle of the next: each time partitions move with records buffered, in hand and acknowledged
around them. At-least-once allows duplicates of one message; what must never happen is a turn
with two different terminal event ids, a draft left undecided, or a dead letter.
"""

from __future__ import annotations

import asyncio
import signal
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dev.harness import Bus, WorkerProcess, answer, draft, running, unique_id

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

ANA = {"user_id": "u-ana", "groups": ("analysts",)}


def drafts(run: str, turns: int) -> list[dict[str, Any]]:
    """Grounded turns, and regenerate-then-grounded turns (two drafts in order)."""
    out: list[dict[str, Any]] = []
    for i in range(turns):
        turn = f"{run}-{i:04d}"
        if i % 2:
            out.append(draft(turn, answer("Latency rose [OBS-999999]."), **ANA))
            out.append(draft(turn, answer("Latency rose [OBS-1001]."), attempt=1, **ANA))
        else:
            out.append(draft(turn, answer("Latency rose [OBS-1001] [EVT-501]."), **ANA))
    return out


class Joining(WorkerProcess):
    """A worker joining a group that already runs: started once it owns some partitions."""

    def healthy(self, health: dict[str, Any]) -> bool:
        return bool(health.get("assigned_partitions"))


def ended(bus: Bus) -> set[str]:
    done = {r.key_str for r in bus.messages("validated")}
    return {t for t in done if t is not None}


@pytest.mark.parametrize("intake", ["stream", "channel"])
async def test_a_worker_joining_then_one_leaving_mid_stream_decides_every_draft_once(
    new_worker: Callable[..., WorkerProcess], intake: str, tmp_path: Path
) -> None:
    env = {"GW_BATCH_SIZE": "50", "GW_DRAFTS_INTAKE": intake}
    first = new_worker(f"rebalance-{intake}", partitions=4, env=env)
    second = Joining(
        kafka_bootstrap=first.kafka_bootstrap,
        postgres_dsn=first.postgres_dsn,
        mongo_url=first.mongo_url,
        workdir=tmp_path / "joining",
        app_id=first.app_id,
        partitions=4,
        env=env,
    )
    run = unique_id("rb")
    batch = drafts(run, 900)
    turns = {d["turn_id"] for d in batch}
    draft_ids = {d["draft_id"] for d in batch}
    async with running(first) as (_, bus):
        try:
            await bus.send_many(batch[:600])
            await bus.wait_until(lambda: len(bus.messages("ledger")) >= 100, timeout=60)
            sending = asyncio.ensure_future(bus.send_many(batch[600:1000]))
            await second.start()  # joins: the partitions are split while drafts flow
            await sending
            await bus.wait_until(lambda: len(bus.messages("ledger")) >= 700, timeout=120)
            sending = asyncio.ensure_future(bus.send_many(batch[1000:]))
            # Leaves: its partitions move back while drafts flow. A clean exit: Faust's stop waits
            # for every record taken to be acknowledged, so the take must still hand them out.
            assert await first.stop() != -signal.SIGKILL
            await sending
            await bus.wait_until(lambda: turns <= ended(bus), timeout=120, what="every turn")
            await bus.settle(2.0)
        finally:
            await second.stop()

        terminal: dict[str, set[str]] = defaultdict(set)
        for rec in bus.messages("validated"):
            msg = rec.json()
            terminal[msg["turn_id"]].add(msg["event_id"])
        assert {t: ids for t, ids in terminal.items() if len(ids) != 1} == {}
        assert set(terminal) == turns
        assert bus.messages("could_not_ground") == []
        assert bus.messages("dlq") == []
        assert {rec.json()["draft_id"] for rec in bus.messages("ledger")} == draft_ids
