"""The turn state machine of contract §3.8."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from fixtures import (
    ALICE,
    BOB,
    NOW,
    POLICY,
    good_answer,
    make_draft,
    message,
    run,
    topics,
    verdict,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import Principal
from worker.core.claims.policy import TenantPolicy
from worker.core.turns.ids import terminal_event_id
from worker.core.turns.machine import TurnPhase, TurnState, decide, expired, on_deadline


def failing() -> dict[str, Any]:
    out = good_answer()
    out["answer_markdown"] += " Unknown [EVT-6]."
    return out


def test_open_grounded_is_terminal() -> None:
    d = run(make_draft(good_answer()))
    assert d.outcome == "grounded"
    assert d.state is not None
    assert d.state.phase is TurnPhase.TERMINAL
    assert d.state.attempts_decided == 1
    assert d.dead_letter is None
    assert topics(d) == ["validated", "ledger"]


def test_open_failure_attempt_0_regenerates() -> None:
    d = run(make_draft(failing()))
    assert d.outcome == "regenerate"
    assert topics(d) == ["regenerate", "ledger"]
    req = message(d, "regenerate")
    assert req["attempt"] == 1
    assert req["draft_id"] == "d-1"
    assert req["principal"] == {"user_id": "alice", "groups": ["analysts"]}
    assert req["deadline"] == "2026-12-02T12:02:00.000Z"
    assert req["reasons"] == [
        {
            "code": "dangling_citation",
            "path": "answer_markdown",
            "citation": "EVT-6",
            "detail": "no such source for this tenant",
        }
    ]
    assert message(d, "ledger")["outcome"] == "regenerate"
    assert d.state is not None
    assert d.state.phase is TurnPhase.REGENERATING
    assert d.state.deadline == NOW + timedelta(seconds=120)


def test_open_failure_attempt_1_is_could_not_ground() -> None:
    d = run(make_draft(failing(), attempt=1))
    assert d.outcome == "could_not_ground"
    cng = message(d, "could_not_ground")
    assert cng["attempts"] == 1
    assert cng["attempt"] == 1
    assert cng["reasons"] == [{"code": "dangling_citation", "path": "answer_markdown"}]
    assert cng["event_id"] == terminal_event_id("acme", "t-1")


def regenerating() -> TurnState:
    d = run(make_draft(failing()))
    assert d.state is not None
    return d.state


def test_second_draft_grounded() -> None:
    d = run(make_draft(good_answer(), draft_id="d-2", attempt=0), regenerating())
    assert d.outcome == "grounded"
    msg = message(d, "validated")
    assert (msg["draft_id"], msg["attempt"]) == ("d-2", 0)
    assert msg["event_id"] == terminal_event_id("acme", "t-1")
    assert message(d, "ledger")["draft_id"] == "d-2"
    assert d.state is not None
    assert d.state.attempts_decided == 2


def test_second_draft_failure_is_final() -> None:
    d = run(make_draft(failing(), draft_id="d-2", attempt=1), regenerating())
    assert d.outcome == "could_not_ground"
    cng = message(d, "could_not_ground")
    assert cng["attempts"] == 2
    assert cng["draft_id"] == "d-2"


def test_redelivered_failed_draft_republishes_the_same_request() -> None:
    first = run(make_draft(failing()))
    assert first.state is not None
    again = run(make_draft(failing()), first.state, now=NOW + timedelta(seconds=30))
    assert again.outcome == "unchanged"
    assert again.state is first.state
    assert again.outbound == first.outbound


def test_terminal_republishes_recorded_event() -> None:
    first = run(make_draft(good_answer()))
    assert first.state is not None
    later = NOW + timedelta(hours=1)
    other = run(make_draft(failing(), draft_id="d-9"), first.state, now=later)
    assert other.outcome == "unchanged"
    assert other.outbound == first.outbound[:1]
    same = run(make_draft(good_answer()), first.state, now=later)
    assert same.outbound == first.outbound


def test_the_failed_draft_redelivered_after_the_turn_ended_republishes_its_own_ledger() -> None:
    """Found by the SIGKILL e2e test: a crash after the turn's terminal state reached the
    changelog but before the failed draft's ledger batch reached the broker lost that batch for
    good. The failed draft, redelivered, now re-publishes it (never its regenerate request: the
    turn is over), beside the terminal event any draft of the turn gets."""
    first = run(make_draft(failing()))
    assert first.state is not None
    second = run(make_draft(good_answer(), draft_id="d-2"), first.state)
    assert second.state is not None
    again = run(make_draft(failing()), second.state, now=NOW + timedelta(seconds=30))
    assert again.outcome == "unchanged"
    assert topics(again) == ["validated", "ledger"]
    assert again.outbound[0] == second.outbound[0]  # the terminal event, same bytes
    assert again.outbound[1] == first.outbound[1]  # the failed draft's own ledger, same bytes
    assert message(again, "ledger")["draft_id"] == "d-1"


def test_identity_mismatch_is_dead_lettered() -> None:
    state = regenerating()
    for kw in (
        {"principal": BOB},
        {"principal": Principal(user_id="alice", groups=("analysts", "ops"))},
        {"tenant": "globex"},
    ):
        d = run(make_draft(good_answer(), draft_id="d-2", **kw), state)
        assert d.outcome == "dead_letter"
        assert d.dead_letter is not None
        assert d.dead_letter.error_class == "identity_mismatch"
        assert d.state is state
        assert d.outbound == ()


def test_group_order_and_duplicates_are_the_same_identity() -> None:
    state = run(make_draft(failing(), principal=Principal(user_id="u", groups=("a", "b")))).state
    same = Principal(user_id="u", groups=("b", "a", "b"))
    d = run(make_draft(good_answer(), draft_id="d-2", principal=same), state)
    assert d.outcome == "grounded"


def test_turn_keeps_first_policy_version() -> None:
    state = regenerating()
    d = run(make_draft(good_answer(), draft_id="d-2"), state, policy=TenantPolicy(version="p-8"))
    assert message(d, "validated")["policy_version"] == "p-7"
    assert message(d, "ledger")["policy_version"] == "p-7"


def test_deadline_timeout() -> None:
    state = regenerating()
    assert state.deadline is not None
    early = on_deadline(state, "t-1", state.deadline - timedelta(seconds=1), NOW)
    assert early.outcome == "unchanged"
    assert early.outbound == ()
    done = on_deadline(state, "t-1", state.deadline, state.deadline + timedelta(seconds=2))
    assert done.outcome == "could_not_ground"
    assert topics(done) == ["could_not_ground"]  # no draft decided: no ledger batch
    cng = message(done, "could_not_ground")
    assert cng["reasons"] == [{"code": "regeneration_timeout"}]
    assert (cng["draft_id"], cng["attempts"], cng["attempt"]) == ("d-1", 1, 0)
    assert cng["event_id"] == terminal_event_id("acme", "t-1")
    assert done.state is not None
    assert done.state.phase is TurnPhase.TERMINAL
    again = on_deadline(done.state, "t-1", state.deadline, NOW + timedelta(hours=1))
    assert again.outbound == done.outbound
    assert on_deadline(None, "t-1", NOW, NOW).outbound == ()
    late = run(make_draft(good_answer(), draft_id="d-2"), done.state)
    assert late.outcome == "unchanged"
    assert late.outbound == done.outbound


def test_deadline_tick_on_terminal_decided_turn_does_nothing() -> None:
    state = run(make_draft(good_answer())).state
    assert state is not None
    assert on_deadline(state, "t-1", NOW + timedelta(days=1), NOW).outbound == ()


def test_expired() -> None:
    state = run(make_draft(good_answer())).state
    assert state is not None
    assert not expired(state, NOW + timedelta(days=7), 7 * 86400)
    assert expired(state, NOW + timedelta(days=7, seconds=1), 7 * 86400)
    assert not expired(regenerating(), NOW + timedelta(days=30), 7 * 86400)


def test_reasons_are_capped_at_50() -> None:
    text = " ".join(f"Fact {i} [OBS-{900000 + i}]." for i in range(60))
    d = run(make_draft({"answer_markdown": text}))
    req = message(d, "regenerate")
    assert len(req["reasons"]) == 50
    assert req["reasons_truncated"] is True
    d2 = run(make_draft({"answer_markdown": text}, attempt=1))
    cng = message(d2, "could_not_ground")
    assert len(cng["reasons"]) == 1  # (code, path) pairs are deduplicated
    assert "reasons_truncated" not in cng
    many = {
        "answer_markdown": "Fine [OBS-50412].",
        "claims": [{"text": f"c{i}"} for i in range(60)],
    }
    cng = message(run(make_draft(many, attempt=1)), "could_not_ground")
    assert len(cng["reasons"]) == 50
    assert cng["reasons_truncated"] is True
    assert set(cng["reasons"][0]) == {"code", "path"}


def test_state_round_trips_through_json() -> None:
    state = regenerating()
    assert TurnState.model_validate_json(state.model_dump_json()) == state
    assert TurnState.model_validate(json.loads(state.model_dump_json())) == state


def test_terminal_ids_agree_across_outcomes() -> None:
    grounded = message(run(make_draft(good_answer())), "validated")
    failed = message(run(make_draft(failing(), attempt=1)), "could_not_ground")
    assert grounded["event_id"] == failed["event_id"]


@settings(max_examples=40, deadline=None)
@given(
    attempt=st.integers(0, 2),
    broken=st.booleans(),
    hidden=st.booleans(),
    second=st.booleans(),
)
def test_decide_is_deterministic(attempt: int, broken: bool, hidden: bool, second: bool) -> None:
    out = failing() if broken else good_answer()
    if hidden:
        out["answer_markdown"] += " Sealed [DOC-4242]."
    draft = make_draft(out, attempt=attempt, draft_id="d-2" if second else "d-1")
    state = regenerating() if second else None
    p1, e1 = verdict(draft)
    p2, e2 = verdict(make_draft(out, attempt=attempt, draft_id="d-2" if second else "d-1"))
    a = decide(state, p1, e1, POLICY, NOW, "v1")
    b = decide(state, p2, e2, POLICY, NOW, "v2")
    assert a.outbound == b.outbound
    assert a.state == b.state
    assert ALICE.user_id == draft.principal.user_id
