"""The batch use case (``worker.core.batch``): plan, then decide, every rule of a batch in the core.

Pure: records and what the stores said go in, routes, records and turn writes come out. The
stream pipeline and ``check`` are thin shells around these two calls.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from worker.core.batch import (
    BatchPlan,
    BatchRules,
    TurnWrite,
    decide_batch,
    failed_batch,
    internal_error,
    plan_batch,
    store_gave_up,
)
from worker.core.citations.evidence import CitationRef, EvidenceKind, EvidenceRecord
from worker.core.claims.policy import PolicyBook
from worker.core.contract import DEFAULT_TOPICS, ErrorClass, Outcome, TopicRole
from worker.core.messages.records import Incoming
from worker.core.turns.control import ControlKind, control_record
from worker.core.turns.machine import TurnPhase, TurnState

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
RULES = BatchRules(topics=DEFAULT_TOPICS, retention_s=3600.0)
POLICIES = PolicyBook()
TRACEPARENT = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
SPAN = "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"
OBS1 = CitationRef(EvidenceKind.OBS, 1)
EVIDENCE = {"acme": {OBS1: EvidenceRecord(ref=OBS1, acl=None, text="Latency rose after it.")}}
GOOD = "Latency rose after it [OBS-1]."
DANGLING = "Latency rose after it [OBS-99]."
_offsets = iter(range(10**9))


def rec(
    turn: str,
    text: str,
    *,
    tenant: str = "acme",
    attempt: int = 0,
    headers: tuple[tuple[str, bytes], ...] = (),
    at: datetime = NOW,
) -> Incoming:
    envelope = {
        "schema_version": 1,
        "draft_id": f"{turn}-{attempt}",
        "turn_id": turn,
        "attempt": attempt,
        "tenant_id": tenant,
        "principal": {"user_id": "u-1", "groups": []},
        "kind": "answer",
        "output": {"answer_markdown": text},
    }
    return Incoming(
        "agent.drafts",
        0,
        next(_offsets),
        int(at.timestamp() * 1000),
        turn.encode(),
        json.dumps(envelope).encode(),
        headers,
    )


def control(kind: ControlKind, turn: str, at: datetime) -> Incoming:
    c = control_record(kind, turn, 0, at)
    return Incoming(
        "agent.drafts", 0, next(_offsets), int(at.timestamp() * 1000), c.key, c.value, c.headers
    )


def plan(*records: Incoming) -> BatchPlan:
    return plan_batch(records, POLICIES, max_bytes=4096)


def decide(p: BatchPlan, states: dict[str, TurnState] | None = None, **kw: Any) -> Any:
    return decide_batch(p, EVIDENCE, states or {}, NOW, RULES, **kw)


def regenerating(turn: str, traceparent: str | None = None) -> TurnState:
    """The state a failing first draft of ``turn`` leaves (decided through the door itself)."""
    decided = decide(plan(rec(turn, DANGLING, headers=(("traceparent", TRACEPARENT),))))
    (write,) = decided.turn_writes
    assert write.state is not None
    return write.state.model_copy(update={"traceparent": traceparent})


def test_the_plan_reads_every_record_and_names_what_to_fetch() -> None:
    p = plan(
        rec("t-1", GOOD),
        Incoming("agent.drafts", 0, 1, 0, b"t-2", b"{not json", ()),
        control(ControlKind.REGENERATION_DEADLINE, "t-3", NOW),
        rec("t-1", DANGLING, attempt=1),
        rec("t-4", "No citation at all.", tenant="globex"),
    )
    kinds = [
        "control" if r.is_control else "rejected" if r.rejection else "draft" for r in p.records
    ]
    assert kinds == ["draft", "rejected", "control", "draft", "draft"]
    assert p.records[1].rejection is not None
    assert p.records[1].rejection.error_class is ErrorClass.MALFORMED_ENVELOPE
    assert p.wanted == {"acme": frozenset({OBS1, CitationRef(EvidenceKind.OBS, 99)})}
    assert p.turn_ids == ["t-1", "t-3", "t-4"]


def test_a_turns_second_draft_sees_the_state_its_first_left_in_the_same_batch() -> None:
    decided = decide(plan(rec("t-1", DANGLING), rec("t-1", GOOD, attempt=1)))
    assert [r.outcome for r in decided.routes] == [Outcome.REGENERATE, Outcome.GROUNDED]
    phases = [w.state.phase for w in decided.turn_writes if w.state is not None]
    assert phases == [TurnPhase.REGENERATING, TurnPhase.TERMINAL]
    assert [r.topic for r in decided.records] == [
        "agent.regenerate",
        "citations.ledger",
        "answers.validated",
        "citations.ledger",
    ]
    assert {r.key for r in decided.records} == {b"t-1"}


def test_a_tenant_whose_evidence_could_not_be_had_is_dead_lettered_unless_it_cites_nothing() -> (
    None
):
    down = {"acme": (ErrorClass.INFRA_UNAVAILABLE, "evidence store unavailable after 3 attempts")}
    decided = decide(plan(rec("t-1", GOOD), rec("t-2", "Nothing cited here.")), unavailable=down)
    first, second = decided.routes
    assert first.dead_letter == down["acme"]
    (letter,) = first.records  # the dead letter: the draft's bytes on the DLQ, nothing else
    assert (letter.topic, letter.key, letter.value) == (
        DEFAULT_TOPICS[TopicRole.DLQ],
        b"t-1",
        first.incoming.value,
    )
    assert dict(letter.headers)["dlq.error.class"] == b"infra_unavailable"
    assert first.outcome is None
    assert second.dead_letter is None
    assert second.outcome is not None
    assert [w.turn_id for w in decided.turn_writes] == ["t-2"]  # the outage wrote nothing


def test_a_waiting_turn_keeps_the_drafts_valid_trace_and_its_timeout_carries_it() -> None:
    state = regenerating("t-1")
    kept = decide(plan(rec("t-1", DANGLING, headers=(("traceparent", TRACEPARENT),))))
    assert kept.turn_writes[0].state is not None
    assert kept.turn_writes[0].state.traceparent == TRACEPARENT.decode()
    bad = decide(plan(rec("t-1", DANGLING, headers=(("traceparent", b"00-zz"),))))
    assert bad.turn_writes[0].state is not None
    assert bad.turn_writes[0].state.traceparent is None

    waiting = state.model_copy(update={"traceparent": TRACEPARENT.decode()})
    late = (waiting.deadline or NOW) + timedelta(seconds=1)
    decided = decide(
        plan(control(ControlKind.REGENERATION_DEADLINE, "t-1", late)), {"t-1": waiting}
    )
    (route,) = decided.routes
    assert route.outcome is Outcome.COULD_NOT_GROUND
    (out,) = route.records
    assert out.topic == "answers.could_not_ground"
    assert out.headers == (("traceparent", TRACEPARENT),)
    assert orjson.loads(out.value)["reasons"] == [{"code": "regeneration_timeout"}]
    (write,) = decided.turn_writes
    assert write.state is not None
    assert write.state.phase is TurnPhase.TERMINAL


def test_a_deadline_tick_before_the_deadline_changes_nothing() -> None:
    state = regenerating("t-1")
    decided = decide(plan(control(ControlKind.REGENERATION_DEADLINE, "t-1", NOW)), {"t-1": state})
    (route,) = decided.routes
    assert (route.outcome, route.records, decided.turn_writes) == (None, (), ())


def test_an_expiry_forgets_only_a_finished_turn_past_its_retention() -> None:
    finished = decide(plan(rec("t-1", GOOD))).turn_writes[0].state
    assert finished is not None
    too_soon = decide(plan(control(ControlKind.EXPIRE_TURN, "t-1", NOW)), {"t-1": finished})
    assert too_soon.routes[0].outcome is None
    assert too_soon.turn_writes == ()
    later = NOW + timedelta(seconds=RULES.retention_s or 0, minutes=1)
    expired = decide(plan(control(ControlKind.EXPIRE_TURN, "t-1", later)), {"t-1": finished})
    assert expired.routes[0].outcome is Outcome.EXPIRED
    assert expired.turn_writes == (TurnWrite("t-1", 0, None),)


def test_with_spans_every_derived_record_names_the_span_and_the_turn_keeps_it() -> None:
    p = plan(rec("t-1", DANGLING, headers=(("traceparent", TRACEPARENT), ("tracestate", b"v=1"))))
    decided = decide(p, parents=[SPAN])
    assert {r.headers for r in decided.records} == {
        (("traceparent", SPAN.encode()), ("tracestate", b"v=1"))
    }
    assert decided.turn_writes[0].state is not None
    assert decided.turn_writes[0].state.traceparent == SPAN


def test_a_record_that_cannot_be_decided_is_dead_lettered_alone() -> None:
    broken = regenerating("t-1").model_copy(update={"attempts_decided": "two"})  # a bug
    decided = decide(plan(rec("t-1", GOOD, attempt=1), rec("t-2", GOOD)), {"t-1": broken})
    first, second = decided.routes
    assert first.dead_letter is not None
    assert first.dead_letter.error_class is ErrorClass.INTERNAL_ERROR
    assert first.error is not None
    assert second.outcome is Outcome.GROUNDED
    assert [w.turn_id for w in decided.turn_writes] == ["t-2"]


def test_a_turn_whose_state_could_not_be_read_has_its_records_dead_lettered() -> None:
    decided = decide(plan(rec("t-1", GOOD), rec("t-2", GOOD)), unreadable={"t-1": KeyError("t-1")})
    assert decided.routes[0].dead_letter == (ErrorClass.INTERNAL_ERROR, "internal error: KeyError")
    assert decided.routes[1].outcome is Outcome.GROUNDED


def test_every_record_is_in_the_outcome_dead_letters_in_their_place() -> None:
    """The shell publishes ``records`` as they are: the core composed the dead letters too."""
    rules = RULES._replace(worker_version="9.9.9")
    broken = rec("t-2", GOOD)._replace(value=b"not json")
    decided = decide_batch(plan(rec("t-1", GOOD), broken), EVIDENCE, {}, NOW, rules)
    first, second = decided.routes
    assert decided.records == [*first.records, *second.records]
    (letter,) = second.records
    headers = dict(letter.headers)
    assert letter.topic == DEFAULT_TOPICS[TopicRole.DLQ]
    assert headers["dlq.worker.version"] == b"9.9.9"
    assert headers["dlq.failed_at"] == str(int(NOW.timestamp() * 1000)).encode()


def test_a_batch_that_failed_as_a_whole_is_dead_lettered_record_by_record() -> None:
    batch = [rec("t-1", GOOD), rec("t-2", DANGLING)]
    routes = failed_batch(batch, "RuntimeError", NOW, RULES)
    assert [r.dead_letter for r in routes] == [internal_error("RuntimeError")] * 2
    assert [r.records[0].value for r in routes] == [r.value for r in batch]
    assert internal_error("RuntimeError").message == "internal error: RuntimeError"


def test_a_store_that_gave_up_is_infra_unavailable_and_a_tenant_asked_again_keeps_it() -> None:
    first = store_gave_up(3)
    assert first == (ErrorClass.INFRA_UNAVAILABLE, "evidence store unavailable after 3 attempts")
    assert store_gave_up(1, batch=first) == first
    assert store_gave_up(2, batch=internal_error("KeyError")) == (
        ErrorClass.INFRA_UNAVAILABLE,
        "evidence store unavailable after 2 attempts",
    )


@pytest.mark.parametrize("role", [TopicRole.VALIDATED, TopicRole.LEDGER])
def test_records_go_to_the_configured_topic_names(role: TopicRole) -> None:
    topics = {**DEFAULT_TOPICS, role: f"renamed.{role.value}"}
    decided = decide_batch(plan(rec("t-1", GOOD)), EVIDENCE, {}, NOW, RULES._replace(topics=topics))
    assert f"renamed.{role.value}" in [r.topic for r in decided.records]
