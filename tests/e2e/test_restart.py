"""SIGKILL the worker in the middle of 1,000 drafts, start it again, and check the invariants.

At-least-once means duplicates of the same message are fine; what must never happen is a turn
with two different terminal event ids, or with both a grounded and a could-not-ground event, or
a turn left without an end, or a duplicate row in ``citation_ledger``.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

from dev.harness import WorkerProcess, answer, draft, running, unique_id

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

ANA = {"user_id": "u-ana", "groups": ("analysts",)}
CY = {"user_id": "u-cy", "groups": ()}


def drafts(run: str, n: int) -> list[dict[str, Any]]:
    """``n`` drafts over four kinds of turns; two-draft turns send both drafts in order."""
    out: list[dict[str, Any]] = []
    i = 0
    while len(out) < n:
        turn = f"{run}-{i:04d}"
        match i % 4:
            case 0:  # grounded
                out.append(draft(turn, answer("Latency rose [OBS-1001] [EVT-501]."), **ANA))
            case 1:  # dangling on the final attempt: could-not-ground at once
                out.append(draft(turn, answer("Latency rose [OBS-999999]."), attempt=1, **ANA))
            case 2:  # hidden document: grounded, hedged
                out.append(
                    draft(turn, answer("Latency rose [OBS-1001]. Refunds [DOC-9002]."), **CY)
                )
            case _:  # regenerate, then grounded
                out.append(draft(turn, answer("Latency rose [OBS-999999]."), **ANA))
                out.append(draft(turn, answer("Latency rose [OBS-1001]."), attempt=1, **ANA))
        i += 1
    return out[:n] if len(out) == n else out[: n - 1]


async def test_sigkill_mid_stream_keeps_one_terminal_event_per_turn(
    new_worker: Callable[..., WorkerProcess], pg: Any
) -> None:
    worker = new_worker("restart", env={"GW_BATCH_SIZE": "50"})
    run = unique_id("rs")
    batch = drafts(run, 1000)
    turns = {d["turn_id"] for d in batch}
    draft_ids = {d["draft_id"] for d in batch}
    async with running(worker) as (_, bus):
        await bus.send_many(batch[:600])
        # Kill once a few hundred drafts have been decided, while the rest are in flight.
        await bus.wait_until(lambda: len(bus.messages("ledger")) >= 250, timeout=60)
        await worker.kill()
        await bus.send_many(batch[600:])
        await worker.start()

        def ended() -> set[str]:
            done = {r.key_str for r in bus.messages("validated")}
            done |= {r.key_str for r in bus.messages("could_not_ground")}
            return {t for t in done if t is not None}

        await bus.wait_until(lambda: turns <= ended(), timeout=120, what="every turn ended")
        await bus.settle(2.0)

        terminal: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for role in ("validated", "could_not_ground"):
            for rec in bus.messages(role):
                msg = rec.json()
                terminal[msg["turn_id"]].add((role, msg["event_id"]))
        bad = {t: v for t, v in terminal.items() if len(v) != 1}
        assert not bad, list(bad.items())[:5]
        assert bus.messages("dlq") == []
        outcome = {t: next(iter(v))[0] for t, v in terminal.items()}
        for i, turn in enumerate(sorted(turns)):
            expected = "could_not_ground" if i % 4 == 1 else "validated"
            assert outcome[turn] == expected, turn
        regen = defaultdict(set)
        for rec in bus.messages("regenerate"):
            regen[rec.key_str].add(rec.json()["event_id"])
        assert all(len(ids) == 1 for ids in regen.values())

        decided = {rec.json()["draft_id"] for rec in bus.messages("ledger")}
        assert decided == draft_ids

        deadline = time.monotonic() + 60
        while True:
            stored = await pg.fetch(
                "SELECT DISTINCT draft_id FROM citation_ledger WHERE turn_id LIKE $1", f"{run}-%"
            )
            if {r["draft_id"] for r in stored} == draft_ids or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        assert {r["draft_id"] for r in stored} == draft_ids
        dupes = await pg.fetch(
            "SELECT tenant_id, turn_id, draft_id, kind, source_id, count(*) FROM citation_ledger"
            " WHERE turn_id LIKE $1 GROUP BY tenant_id, turn_id, draft_id, kind, source_id"
            " HAVING count(*) > 1",
            f"{run}-%",
        )
        assert dupes == []
