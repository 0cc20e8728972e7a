"""The per-draft use case (``worker.core.grounding``) and the turns' deadline index."""

from __future__ import annotations

from datetime import timedelta

from fixtures import (
    DOC_SEALED,
    NOW,
    OBS_ENTER,
    POLICY,
    TENANT,
    encode,
    envelope,
    good_answer,
    lookup,
    run,
)

from worker.core.citations.evidence import Resolution
from worker.core.claims.policy import PolicyBook
from worker.core.claims.status import UnitStatus
from worker.core.contract import ErrorClass, Outcome
from worker.core.envelope.draft import EnvelopeRejection
from worker.core.grounding import Admitted, admit, judge
from worker.core.turns.deadline_index import DeadlineIndex
from worker.core.turns.machine import TurnPhase, TurnState

BOOK = PolicyBook(default=POLICY)


def admitted(output: object, **kw: object) -> Admitted:
    env = envelope(output, **kw)  # type: ignore[arg-type]
    result = admit(env["turn_id"].encode(), encode(env), max_bytes=1 << 20, policies=BOOK)
    assert isinstance(result, Admitted), result
    return result


def hedged_answer() -> dict[str, object]:
    out = good_answer()
    out["answer_markdown"] += " The corridor was closed [DOC-4242]."
    return out


def test_admit_names_what_to_look_up_and_judge_decides_as_the_turn_machine() -> None:
    a = admitted(hedged_answer())
    assert a.tenant_id == TENANT
    assert OBS_ENTER in a.refs
    assert DOC_SEALED in a.refs
    j = judge(a, None, lookup(a.tenant_id, a.refs), NOW, retention_s=None)
    assert j.outcome is Outcome.GROUNDED
    assert j.dead_letter is None
    assert j.before is None
    # The same bytes as the state machine fed by hand.
    assert j.decision.outbound == run(a.draft).outbound


def test_a_judgement_holds_resolutions_and_unit_statuses() -> None:
    a = admitted(hedged_answer())
    j = judge(a, None, lookup(a.tenant_id, a.refs), NOW, retention_s=None)
    assert j.resolutions[DOC_SEALED] is Resolution.ACL_REDACTED
    assert j.resolutions[OBS_ENTER] is Resolution.RESOLVED
    statuses = [s for _, s in j.unit_statuses]
    assert [u for u, _ in j.unit_statuses] == list(a.prepared.units)
    assert UnitStatus.HEDGED in statuses
    assert UnitStatus.CITED in statuses


def test_an_unreadable_record_is_a_typed_rejection() -> None:
    result = admit(b"t", b"not json", max_bytes=1 << 20, policies=BOOK)
    assert isinstance(result, EnvelopeRejection)
    assert result.error_class is ErrorClass.MALFORMED_ENVELOPE


def test_judge_drops_a_finished_turn_past_its_retention() -> None:
    a = admitted(good_answer())
    first = judge(a, None, lookup(a.tenant_id, a.refs), NOW, retention_s=60)
    ended = first.decision.state
    assert ended is not None
    assert ended.phase is TurnPhase.TERMINAL
    later = NOW + timedelta(seconds=61)
    again = judge(a, ended, lookup(a.tenant_id, a.refs), later, retention_s=60)
    assert again.before is None
    assert again.outcome is Outcome.GROUNDED
    kept = judge(a, ended, lookup(a.tenant_id, a.refs), later, retention_s=None)
    assert kept.before is ended
    assert kept.outcome is Outcome.UNCHANGED


def test_identity_mismatch_is_dead_lettered_with_its_class() -> None:
    a = admitted(good_answer())
    state = judge(a, None, lookup(a.tenant_id, a.refs), NOW, retention_s=None).decision.state
    other = admitted(good_answer(), draft_id="d-2", tenant="globex")
    j = judge(other, state, {}, NOW, retention_s=None)
    assert j.outcome is Outcome.DEAD_LETTER
    assert j.dead_letter is not None
    assert j.dead_letter.error_class is ErrorClass.IDENTITY_MISMATCH


def _state(phase: TurnPhase, **fields: object) -> TurnState:
    return TurnState(
        phase=phase,
        turn_id="t",
        tenant_id=TENANT,
        user_id="u",
        groups=(),
        policy_version="p",
        first_draft_id="d",
        first_attempt=0,
        kind="answer",
        **fields,
    )


def test_the_deadline_index_follows_each_turns_phase() -> None:
    index = DeadlineIndex()
    index.note("t-1", 2, _state(TurnPhase.REGENERATING, deadline=NOW))
    index.note("t-2", 3, _state(TurnPhase.REGENERATING, deadline=NOW + timedelta(seconds=1)))
    assert index.overdue(NOW, {2, 3}) == [("t-1", 2, NOW)]
    assert index.overdue(NOW, {3}) == []
    index.note("t-1", 2, _state(TurnPhase.TERMINAL, ended_at=NOW))
    assert index.overdue(NOW + timedelta(days=1), {2}) == []
    assert index.past_retention(NOW + timedelta(seconds=10), {2}, 10) == []
    assert index.past_retention(NOW + timedelta(seconds=11), {2}, 10) == [("t-1", 2)]
    index.forget("t-1")
    assert index.past_retention(NOW + timedelta(days=9), {2}, 10) == []
    index.rebuild([("t-3", 0, _state(TurnPhase.TERMINAL, ended_at=NOW))])
    assert index.waiting == {}
    assert index.ended == {"t-3": (NOW, 0)}
