"""A store outage while drafts flow: no verdict is ever made on a fault.

Postgres is stopped through the bed's ``scripts/services`` (``TESTBED_DIR``) and always started
again in ``finally``. Two workers run through the same outage: one with the default unlimited
retry budget (its drafts wait, then end grounded), one with ``GW_RETRY_BUDGET=2`` (its drafts are
dead-lettered ``infra_unavailable``). Neither may publish a regenerate request or a
could-not-ground event for a draft that would have been grounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from dev.harness import ServiceControl, WorkerProcess, answer, draft, running, unique_id

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.outage]

FAST_RETRY = {"GW_RETRY_INITIAL_BACKOFF_S": "0.1", "GW_RETRY_MAX_BACKOFF_S": "0.5"}
GOOD = "Checkout latency rose after the deploy [OBS-1001] [EVT-501]."


async def test_postgres_outage_waits_or_dead_letters_never_decides(
    new_worker: Callable[..., WorkerProcess], services: ServiceControl
) -> None:
    patient = new_worker("patient", env=FAST_RETRY)
    bounded = new_worker("bounded", env={**FAST_RETRY, "GW_RETRY_BUDGET": "2"})
    async with running(patient) as (_, pbus), running(bounded) as (_, bbus):
        before = unique_id("t-before")
        await pbus.send(draft(before, answer(GOOD)))
        await pbus.wait_for("validated", key=before)

        waiting = [unique_id("t-wait") for _ in range(6)]
        dead = [unique_id("t-dead") for _ in range(6)]
        try:
            services.stop("postgres")
            for turn in waiting:
                await pbus.send(draft(turn, answer(GOOD)))
            metas = [await bbus.send(draft(turn, answer(GOOD))) for turn in dead]
            letters = {}
            for turn in dead:
                (letter,) = await bbus.wait_for("dlq", key=turn, timeout=60)
                letters[turn] = letter
            await asyncio.sleep(3)  # the patient worker keeps retrying meanwhile
            for turn in waiting:
                assert pbus.for_turn(turn) == {}, turn
        finally:
            services.start("postgres")

        for turn in waiting:
            answers = await pbus.wait_for("validated", key=turn, timeout=90)
            assert {a.json()["status"] for a in answers} == {"grounded"}
        await pbus.settle(1.0)
        await bbus.settle(1.0)
        for turn in waiting:
            assert set(pbus.for_turn(turn)) == {"validated", "ledger"}
        for turn, meta in zip(dead, metas, strict=True):
            letter = letters[turn]
            assert letter.header("dlq.error.class") == b"infra_unavailable"
            assert letter.header("dlq.error.message") == (
                b"evidence store unavailable after 3 attempts"
            )
            assert letter.header("dlq.original.offset") == str(meta.offset).encode()
            assert set(bbus.for_turn(turn)) == {"dlq"}, turn
        for bus in (pbus, bbus):
            assert bus.messages("regenerate") == []
            assert bus.messages("could_not_ground") == []
