"""Typed claims (contract §3 rule 7b) end to end: the worker process with a policy file that
declares a claim, drafts in on Kafka carrying ``facts``, verdicts out.

The seed-003 case on the demo corpus: a proposal flags ``payments-db-2`` ``cleared`` while every
cited observation is real and the agent's own tool said ``review``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from dev.harness import Bus, WorkerProcess, answer, draft, running, unique_id

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

ANA = {"user_id": "u-ana", "groups": ("analysts",)}
POLICY = {
    "tenants": {
        "acme": {
            "version": "e2e-claims-1",
            "claims": [
                {
                    "answer_field": "patch.flag",
                    "entity": {"from": "patch.entity_id"},
                    "field": "flag",
                },
                {"answer_field": "confidence", "entity": "model:flagger", "field": "confidence"},
            ],
        }
    }
}
#: The settled value and the tool call that settled it: allowed in the regenerate request's
#: detail, never in a could-not-ground event.
SETTLED, SETTLING_CALL = "review", "call-settles-7"
FACTS = [
    {
        "entity": "payments-db-2",
        "field": "flag",
        "value": "watch",
        "tool_name": "db_health",
        "tool_call_id": "call-early-1",
        "iteration": 0,
        "measured_at": "2026-12-02T11:50:00Z",
    },
    {
        "entity": "payments-db-2",
        "field": "flag",
        "value": SETTLED,
        "tool_name": "db_health",
        "tool_call_id": SETTLING_CALL,
        "iteration": 1,
        "measured_at": "2026-12-02T11:58:00Z",
    },
    {
        "entity": "model:flagger",
        "field": "confidence",
        "value": 0.7,
        "tool_name": "score",
        "tool_call_id": "call-score-2",
        "iteration": 1,
    },
]


def proposal(flag: str, confidence: float | str = 0.7) -> dict[str, Any]:
    return {
        "proposal_type": "entity_flag",
        "summary": f"Flag payments-db-2 {flag}: the pool saturated [OBS-1006].",
        "grounding": {"reasoning": "Saturation peaked at 98%.", "observations": [1006]},
        "confidence": confidence,
        "gate": "Q9",
        "patch": {"entity_id": "payments-db-2", "flag": flag, "reason": "pool saturation"},
    }


def claim_draft(turn: str, flag: str, attempt: int = 0) -> dict[str, Any]:
    return draft(turn, proposal(flag), kind="proposal", attempt=attempt, facts=FACTS, **ANA)


@pytest.fixture(scope="module")
async def bus(new_worker: Callable[..., WorkerProcess]) -> AsyncIterator[Bus]:
    async with running(new_worker("claims", policy=POLICY)) as (_, bus):
        yield bus


async def test_contradiction_regenerates_and_the_fix_is_grounded_with_supported(bus: Bus) -> None:
    turn = unique_id("t-claim-fix")
    first = claim_draft(turn, "cleared")
    await bus.send(first)
    (regen,) = await bus.wait_for("regenerate", key=turn)
    request = regen.json()
    (reason,) = request["reasons"]
    assert (reason["code"], reason["path"]) == ("contradicted_claim", "patch.flag")
    assert f'"{SETTLED}"' in reason["detail"]
    assert SETTLING_CALL in reason["detail"]
    (ledger,) = await bus.wait_for("ledger", key=turn)
    assert ledger.json()["outcome"] == "regenerate"
    assert [c["disposition"] for c in ledger.json()["claim_checks"]] == [
        "contradicted",
        "supported",
    ]

    await bus.send(claim_draft(turn, SETTLED, attempt=1))
    (grounded,) = await bus.wait_for("validated", key=turn)
    answer_msg = grounded.json()
    assert answer_msg["output"]["patch"]["flag"] == SETTLED
    assert answer_msg["claim_checks"] == [
        {
            "answer_field": "patch.flag",
            "entity": "payments-db-2",
            "field": "flag",
            "disposition": "supported",
        },
        {
            "answer_field": "confidence",
            "entity": "model:flagger",
            "field": "confidence",
            "disposition": "supported",
        },
    ]
    ledgers = await bus.wait_for("ledger", key=turn, count=2)
    assert ledgers[1].json()["claim_checks"] == answer_msg["claim_checks"]
    await bus.settle(1.0)
    assert bus.messages("could_not_ground", key=turn) == []
    assert bus.messages("dlq", key=turn) == []


async def test_a_second_contradiction_could_not_ground_carries_code_and_path_only(
    bus: Bus,
) -> None:
    turn = unique_id("t-claim-twice")
    await bus.send(claim_draft(turn, "cleared"))
    await bus.wait_for("regenerate", key=turn)
    # Superseded this time: "watch" was the iteration-0 value.
    await bus.send(claim_draft(turn, "watch", attempt=1))
    (rec,) = await bus.wait_for("could_not_ground", key=turn)
    event = rec.json()
    assert event["reasons"] == [{"code": "contradicted_claim", "path": "patch.flag"}]
    assert "claim_checks" not in event
    for leak in (SETTLED.encode(), SETTLING_CALL.encode(), b"db_health", b"detail", b"watch"):
        assert leak not in rec.value, leak
    ledgers = await bus.wait_for("ledger", key=turn, count=2)
    final = ledgers[1].json()
    assert final["outcome"] == "could_not_ground"
    assert final["claim_checks"][0] == {
        "answer_field": "patch.flag",
        "entity": "payments-db-2",
        "field": "flag",
        "disposition": "contradicted",
        "superseded": True,
    }
    await bus.settle(1.0)
    assert bus.messages("validated", key=turn) == []


async def test_a_tenant_without_claims_gets_no_claim_checks(bus: Bus) -> None:
    other = unique_id("t-claim-globex")
    await bus.send(
        draft(
            other,
            answer("Scanner uptime was 99.2% [OBS-2001]."),
            tenant_id="globex",
            user_id="u-gil",
            groups=("ops",),
            facts=FACTS,
        )
    )
    (plain,) = await bus.wait_for("validated", key=other)
    assert b"claim_checks" not in plain.value
    (ledger,) = await bus.wait_for("ledger", key=other)
    assert b"claim_checks" not in ledger.value


async def test_malformed_facts_are_dead_lettered_as_malformed_envelope(bus: Bus) -> None:
    turn = unique_id("t-claim-bad-facts")
    bad = claim_draft(turn, SETTLED) | {"facts": [{"entity": "payments-db-2", "value": 1}]}
    await bus.send(bad)
    (dead,) = await bus.wait_for("dlq", key=turn)
    assert dead.header("dlq.error.class") == b"malformed_envelope"
    await bus.settle(1.0)
    assert bus.messages("regenerate", key=turn) == []
    assert bus.messages("validated", key=turn) == []
