"""Regeneration deadlines end to end: a 3-second deadline for tenant acme.

The worker's timer appends a control record at the deadline; the agent decides the timeout when
it reaches it, after every draft appended before it (docs/decisions.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import pytest

from dev.harness import Bus, WorkerProcess, answer, draft, running, unique_id

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

DEADLINE_S = 3.0
POLICY = {"tenants": {"acme": {"version": "e2e-deadline-1", "regeneration_deadline_s": DEADLINE_S}}}
ANA = {"user_id": "u-ana", "groups": ("analysts",)}
FAILING = answer("Latency rose after the deploy [OBS-999999].")
GOOD = answer("Latency rose after the deploy [OBS-1001].")


@pytest.fixture(scope="module")
async def wb(new_worker: Callable[..., WorkerProcess]) -> AsyncIterator[tuple[WorkerProcess, Bus]]:
    async with running(new_worker("deadlines", policy=POLICY)) as pair:
        yield pair


def _parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


async def test_regeneration_times_out_once(wb: tuple[WorkerProcess, Bus]) -> None:
    _, bus = wb
    turn = unique_id("t-timeout")
    first = draft(turn, FAILING, **ANA)
    sent_at = datetime.now(UTC)
    await bus.send(first)
    (regen,) = await bus.wait_for("regenerate", key=turn)
    req = regen.json()
    assert req["policy_version"] == "e2e-deadline-1"
    deadline = _parse(req["deadline"])
    assert sent_at < deadline <= datetime.now(UTC) + timedelta(seconds=DEADLINE_S + 1)

    (rec,) = await bus.wait_for("could_not_ground", key=turn, timeout=DEADLINE_S + 20)
    assert datetime.now(UTC) >= deadline
    msg = rec.json()
    assert msg["reasons"] == [{"code": "regeneration_timeout"}]
    assert (msg["draft_id"], msg["attempts"], msg["policy_version"]) == (
        first["draft_id"],
        1,
        "e2e-deadline-1",
    )
    # Past the scanner's resend period: still exactly one terminal event.
    await asyncio.sleep(6)
    assert len(bus.messages("could_not_ground", key=turn)) == 1

    # A late regeneration changes nothing; at most the same terminal event again.
    await bus.send(draft(turn, GOOD, attempt=1, **ANA))
    await asyncio.sleep(2)
    await bus.settle(1.0)
    assert bus.messages("validated", key=turn) == []
    assert {r.json()["event_id"] for r in bus.messages("could_not_ground", key=turn)} == {
        msg["event_id"]
    }
    assert len(bus.messages("regenerate", key=turn)) == 1
    # The timeout decided no draft: only the first draft's ledger batch.
    assert [b.json()["outcome"] for b in bus.messages("ledger", key=turn)] == ["regenerate"]


async def test_a_timeout_carries_the_turns_traceparent(wb: tuple[WorkerProcess, Bus]) -> None:
    """The deadline's control record has no trace; the could-not-ground event takes the turn's."""
    worker, bus = wb
    turn = unique_id("t-timeout-trace")
    trace = b"00-5bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    await bus.send(draft(turn, FAILING, **ANA), headers=[("traceparent", trace)])
    (regen,) = await bus.wait_for("regenerate", key=turn)
    assert regen.header("traceparent") == trace
    (rec,) = await bus.wait_for("could_not_ground", key=turn, timeout=DEADLINE_S + 20)
    assert rec.json()["reasons"] == [{"code": "regeneration_timeout"}]
    assert rec.header_dict() == {"traceparent": trace}
    timed_out = await worker.wait_for_log("turn.timed_out", turn_id=turn)
    assert timed_out["trace_id"] == "5bf92f3577b34da6a3ce929d0e0e4736"
    assert timed_out["span_id"] == "00f067aa0ba902b7"


async def test_regeneration_in_time_is_not_timed_out(wb: tuple[WorkerProcess, Bus]) -> None:
    _, bus = wb
    turn = unique_id("t-intime")
    await bus.send(draft(turn, FAILING, **ANA))
    await bus.wait_for("regenerate", key=turn)
    await bus.send(draft(turn, GOOD, attempt=1, **ANA))
    (ok,) = await bus.wait_for("validated", key=turn)
    assert ok.json()["attempt"] == 1
    await asyncio.sleep(DEADLINE_S + 2)
    await bus.settle(1.0)
    assert bus.messages("could_not_ground", key=turn) == []


async def test_a_paused_worker_never_times_out_early(wb: tuple[WorkerProcess, Bus]) -> None:
    """The regeneration is appended while the worker is down and decided only after the deadline
    passed: it was appended first, so it wins over the timeout."""
    worker, bus = wb
    turn = unique_id("t-paused")
    await bus.send(draft(turn, FAILING, **ANA))
    (regen,) = await bus.wait_for("regenerate", key=turn)
    deadline = _parse(regen.json()["deadline"])
    await worker.stop()
    try:
        await bus.send(draft(turn, GOOD, attempt=1, **ANA))
        left = (deadline - datetime.now(UTC)).total_seconds()
        await asyncio.sleep(max(0.0, left) + 1.5)
    finally:
        await worker.start()
    await bus.wait_for("validated", key=turn, timeout=30)
    await asyncio.sleep(2)
    await bus.settle(1.0)
    # A redelivery after the restart may publish the same answer again (same event id).
    answers = [r.json() for r in bus.messages("validated", key=turn)]
    assert {(a["event_id"], a["attempt"]) for a in answers} == {(answers[0]["event_id"], 1)}
    assert bus.messages("could_not_ground", key=turn) == []


async def test_a_deadline_survives_a_crash(wb: tuple[WorkerProcess, Bus]) -> None:
    """The regenerating state comes back from the table's changelog after SIGKILL, and the new
    process times the turn out; a redelivered first draft re-publishes the same request."""
    worker, bus = wb
    turn = unique_id("t-crash")
    first = draft(turn, FAILING, **ANA)
    await bus.send(first)
    (regen,) = await bus.wait_for("regenerate", key=turn)
    await asyncio.sleep(1.5)  # past the commit interval, so the restart does not redeliver
    await worker.kill()
    await worker.start()
    # The first draft again (a producer retry): the recovered state answers with the same request.
    await bus.send(first)
    rec = (await bus.wait_for("could_not_ground", key=turn, timeout=DEADLINE_S + 30))[0]
    assert rec.json()["reasons"] == [{"code": "regeneration_timeout"}]
    await bus.settle(1.0)
    # Redelivered after the restart at most as the same event.
    assert {r.value for r in bus.messages("could_not_ground", key=turn)} == {rec.value}
    assert {r.json()["event_id"] for r in bus.messages("regenerate", key=turn)} == {
        regen.json()["event_id"]
    }
    assert {r.value for r in bus.messages("regenerate", key=turn)} == {regen.value}
    assert bus.messages("validated", key=turn) == []
