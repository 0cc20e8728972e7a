"""The producer client end to end: real Kafka, the real worker, the demo corpus.

An agent built on ``worker.client`` publishes drafts and awaits their verdicts over one shared
reply consumer: a grounded answer, a regenerate request answered by the agent loop, a turn that
cannot be grounded, and two turns in flight at once on one client.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from dev.harness import WorkerProcess, running
from worker.client import (
    CouldNotGround,
    DeadLettered,
    Grounded,
    GroundingClient,
    PublishTimeoutError,
    Regenerate,
    draft_envelope,
)

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

GOOD = "Checkout p95 latency rose from 180 ms to 840 ms after the deploy [OBS-1001]."
DANGLING = "Checkout p95 latency rose from 180 ms to 840 ms after the deploy [OBS-999999]."


def answer(text: str, user: str = "u-ana") -> dict[str, object]:
    return draft_envelope(
        tenant_id="acme",
        user_id=user,
        groups=["analysts"],
        kind="answer",
        output={"answer_markdown": text, "citations": []},
    )


@pytest.fixture(scope="module")
async def client(new_worker: Callable[..., WorkerProcess]) -> AsyncIterator[GroundingClient]:
    worker = new_worker("client")
    async with running(worker), GroundingClient(worker.kafka_bootstrap, topics=worker.topics) as c:
        yield c


async def test_a_grounded_draft_comes_back_grounded(client: GroundingClient) -> None:
    draft = answer(GOOD)
    verdict = await client.ask(draft, timeout_s=60)
    assert isinstance(verdict, Grounded)
    assert (verdict.turn_id, verdict.draft_id, verdict.attempt) == (
        draft["turn_id"],
        draft["draft_id"],
        0,
    )
    assert verdict.output["answer_markdown"] == GOOD
    assert [c["grounding_status"] for c in verdict.claims] == ["cited"]


async def test_the_agent_loop_regenerates_once_and_ends_grounded(client: GroundingClient) -> None:
    asked: list[Regenerate] = []

    async def agent(request: Regenerate) -> dict[str, object]:
        asked.append(request)
        return {"answer_markdown": GOOD, "citations": []}

    first = answer(DANGLING)
    final = await client.run_turn(first, agent, timeout_s=60)
    assert [r.codes for r in asked] == [["dangling_citation"]]
    assert asked[0].turn_id == first["turn_id"]
    assert isinstance(final, Grounded)
    assert final.attempt == 1
    assert final.turn_id == first["turn_id"]


async def test_a_regeneration_that_fails_again_ends_could_not_ground(
    client: GroundingClient,
) -> None:
    async def stubborn(_: Regenerate) -> dict[str, object]:
        return {"answer_markdown": DANGLING, "citations": []}

    final = await client.run_turn(answer(DANGLING), stubborn, timeout_s=60)
    assert isinstance(final, CouldNotGround)
    assert final.codes == ["dangling_citation"]


async def test_two_turns_in_flight_on_one_client_each_get_their_own_verdict(
    client: GroundingClient,
) -> None:
    good, bad = answer(GOOD), answer(DANGLING)
    first, second = await asyncio.gather(
        client.ask(good, timeout_s=60), client.ask(bad, timeout_s=60)
    )
    assert isinstance(first, Grounded)
    assert first.turn_id == good["turn_id"]
    assert isinstance(second, Regenerate)
    assert second.turn_id == bad["turn_id"]


async def test_a_timeout_too_short_to_publish_is_a_typed_publish_error(
    client: GroundingClient,
) -> None:
    """A publish waits for the broker's acknowledgement (a round trip): with no time at all it
    cannot finish, so the fault is the publish's, deterministically (1 ms sometimes sufficed)."""
    with pytest.raises(PublishTimeoutError, match=r"within 0 s"):
        await client.ask(answer(GOOD), timeout_s=0)


async def test_a_draft_the_worker_dead_letters_comes_back_as_dead_lettered(
    client: GroundingClient,
) -> None:
    """The client cannot know a turn's first reader; the worker dead-letters a regeneration by
    another user (``identity_mismatch``), and ``ask`` returns that from the dead letter's headers
    within the timeout rather than a timeout."""
    first = answer(DANGLING)
    assert isinstance(await client.ask(first, timeout_s=60), Regenerate)
    intruder = draft_envelope(
        tenant_id="acme",
        user_id="u-bob",
        groups=["analysts"],
        kind="answer",
        output={"answer_markdown": GOOD, "citations": []},
        turn_id=first["turn_id"],
        attempt=1,
    )
    verdict = await client.ask(intruder, timeout_s=60)
    assert isinstance(verdict, DeadLettered)
    assert (verdict.turn_id, verdict.draft_id) == (intruder["turn_id"], intruder["draft_id"])
    assert verdict.error_class == "identity_mismatch"
    assert verdict.replay_count == 0
    assert verdict.headers["dlq.original.topic"].endswith(b".agent.drafts")
