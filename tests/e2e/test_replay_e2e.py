"""On-call's path after a store outage, end to end: dead letters replayed into grounded answers.

The worker runs with a finite retry budget (``GW_RETRY_BUDGET=1``, short backoff), so drafts that
arrive while Postgres is stopped are dead-lettered ``infra_unavailable`` (contract §7). Postgres
comes back (always, in ``finally``), and ``grounding-worker replay`` — the real command, as a
subprocess — re-publishes them; the worker then grounds every one, and a second replay finds
nothing left to do.

Postgres is the test bed's (``TESTBED_DIR``, default this checkout): the test stops it with
``scripts/services stop postgres`` and starts it again before it returns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from dev.harness import Bus, WorkerProcess, answer, draft, replay_cli, running, unique_id

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.outage]

TURNS = 3
ACME_OUTAGE = ("--error-class", "infra_unavailable", "--tenant", "acme")
TRACEPARENT = b"00-" + b"1" * 32 + b"-" + b"2" * 16 + b"-01"


def grounded_draft(turn: str) -> dict[str, Any]:
    return draft(
        turn,
        answer(
            "Checkout p95 latency rose to 840 ms after the payments-api 2.3.0 deploy [OBS-1001].",
            citations=[{"kind": "OBS", "id": 1001}],
        ),
    )


async def wait_until_postgres_answers(bus: Bus) -> None:
    """Probe drafts until one is grounded: the worker's pool has reconnected. Probes are globex
    drafts, so a probe that is dead-lettered never matches the replays' ``--tenant acme``."""
    for _ in range(5):
        probe = unique_id("probe")
        output = answer(
            "Scanner uptime was 99.2% last week [OBS-2001].",
            citations=[{"kind": "OBS", "id": 2001}],
        )
        await bus.send(draft(probe, output, tenant_id="globex", user_id="u-gil", groups=["ops"]))
        await bus.wait_until(
            lambda p=probe: bool(bus.messages("validated", key=p) or bus.messages("dlq", key=p)),
            timeout=60,
            what="probe decided",
        )
        if bus.messages("validated", key=probe):
            return
        await asyncio.sleep(1.0)
    pytest.fail("the worker never grounded a draft after Postgres came back")


async def test_outage_dead_letters_are_replayed_into_grounded_answers(
    new_worker: Callable[..., WorkerProcess], services: Any
) -> None:
    worker = new_worker(
        "replay-e2e",
        env={
            "GW_RETRY_BUDGET": "1",
            "GW_RETRY_INITIAL_BACKOFF_S": "0.1",
            "GW_RETRY_MAX_BACKOFF_S": "0.2",
            "GW_STORE_TIMEOUT_S": "2",
        },
    )
    turns = [unique_id("outage") for _ in range(TURNS)]
    async with running(worker) as (_, bus):
        with services.stopped("postgres"):
            for turn in turns:
                await bus.send(
                    grounded_draft(turn),
                    headers=[("traceparent", TRACEPARENT)],
                )
            dead = await bus.wait_for(
                "dlq", count=TURNS, timeout=90, where=lambda r: r.key_str in turns
            )
        assert {r.header("dlq.error.class") for r in dead} == {b"infra_unavailable"}
        assert all(r.header("dlq.replay.count") == b"0" for r in dead)
        for turn in turns:
            assert not bus.messages("validated", key=turn)
            assert not bus.messages("could_not_ground", key=turn)
            assert not bus.messages("regenerate", key=turn)

        await wait_until_postgres_answers(bus)

        code, dry, _ = await replay_cli(worker, "--dry-run", *ACME_OUTAGE)
        assert code == 0
        assert dry["planned"] == TURNS
        assert dry["by_tenant"] == {"acme": TURNS}
        assert not any(bus.messages("validated", key=t) for t in turns)

        code, summary, err = await replay_cli(worker, *ACME_OUTAGE)
        assert code == 0, err
        assert summary["replayed"] == TURNS
        for turn in turns:
            got = await bus.wait_for("validated", key=turn, timeout=60)
            assert got[0].json()["status"] == "grounded"
            # The replayed draft kept its trace context, so the answer did too.
            assert got[0].header("traceparent") == TRACEPARENT

        await bus.settle(1.5)
        for turn in turns:
            assert len(bus.messages("validated", key=turn)) == 1
            assert len(bus.messages("dlq", key=turn)) == 1  # no second dead letter
        code, again, _ = await replay_cli(worker, "--tenant", "acme")
        assert code == 0
        assert again["replayed"] == 0
        assert again["skipped"]["already_replayed"] == TURNS
