"""The turn state machine (contract §3.8): one pure transition per decided record.

The batch (``worker.core.batch``) keeps a ``TurnState`` per ``turn_id`` (no state = *open*) and
calls ``decide`` for a draft or ``on_deadline`` for a regeneration-deadline tick; the table holds
``Decision.state`` and ``Decision.outbound``'s messages are published in order.

Decisions:

- ``Decision.state`` is what the table must hold afterwards; when nothing changes it is the very
  state passed in (``outcome`` ``unchanged`` or ``dead_letter``).
- Messages are recorded in the state as their exact JSON text, so a redelivery re-publishes the
  same bytes (at-least-once): the regenerate request and its ledger batch while regenerating; the
  terminal event always, plus the deciding draft's ledger batch when that draft is redelivered.
  A draft that is not decided (a later draft of a terminal turn) writes no ledger batch.
- Identity (tenant, user, set of groups) is checked against the turn's first draft before
  anything else, in every phase: a mismatch is dead-lettered ``identity_mismatch``, state kept.
- Messages echo the turn's ``policy_version`` (recorded from its first draft), the deciding draft's
  ``attempt`` and ``kind``. ``attempts`` on could-not-ground counts decided drafts.
- Could-not-ground reasons are deduplicated on (code, path) before the cap of 50: without
  ``citation`` they would only repeat.
- The regeneration timeout writes no ledger batch (no draft was decided); the could-not-ground
  event names the failed draft, its attempt, ``attempts: 1``. A tick for a turn that timed out is
  answered by re-publishing that event. A tick before the deadline, or for another phase, changes
  nothing.
- ``claim_checks`` (rule 7b) rides on the grounded answer and the ledger batch only when the
  tenant declares claims; the regenerate request names a contradiction's settled value in its
  reason's ``detail``; the could-not-ground event keeps code and path, as for every reason.
- ``expired`` applies to terminal turns only; a regenerating turn ends through its deadline.
  ``decide`` does not look at retention: the caller drops an expired state first.
- Which turns need a tick is kept apart, in :class:`worker.core.turns.deadline_index.DeadlineIndex`,
  built from the phase rules below (``regeneration_deadline``, ``ended_at``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from worker.core.claims.policy import TenantPolicy
from worker.core.contract import ErrorClass, LedgerOutcome, Outcome, TopicRole
from worker.core.envelope.draft import Draft, EnvelopeRejection
from worker.core.failures import Failure, FailureCode
from worker.core.messages.models import (
    CouldNotGround,
    GroundedAnswer,
    LedgerBatch,
    RegenerateRequest,
    cap_reasons,
    rfc3339,
)
from worker.core.messages.wire import message_bytes
from worker.core.outputs.validation import DraftKind
from worker.core.turns.ids import ledger_event_id, regenerate_event_id, terminal_event_id
from worker.core.verdict import Evaluation, Prepared


class TurnPhase(StrEnum):
    """Where a turn stands (no state at all means *open*)."""

    REGENERATING = "regenerating"
    TERMINAL = "terminal"


class TurnState(BaseModel):
    """What the worker remembers about one turn."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    phase: TurnPhase
    turn_id: str
    tenant_id: str
    user_id: str
    #: Sorted, distinct.
    groups: tuple[str, ...]
    policy_version: str
    first_draft_id: str
    first_attempt: int
    kind: DraftKind
    #: The draft whose failure caused the regeneration.
    regenerate_draft_id: str | None = None
    #: Exact JSON text of the regenerate request and of that draft's ledger batch.
    regenerate_request: str | None = None
    regenerate_ledger: str | None = None
    deadline: datetime | None = None
    #: The draft that ended the turn (``None`` when it timed out).
    deciding_draft_id: str | None = None
    #: Exact JSON text of the terminal event, its topic, and the deciding draft's ledger batch.
    terminal_event: str | None = None
    terminal_topic: TopicRole | None = None
    terminal_ledger: str | None = None
    attempts_decided: int = 0
    ended_at: datetime | None = None
    #: The W3C ``traceparent`` of the draft that asked for the regeneration (set by the batch,
    #: ``worker.core.batch``; valid or absent): a timeout's could-not-ground event carries it.
    traceparent: str | None = None


class Message(NamedTuple):
    """One message a transition publishes: what it is for and its exact bytes. Not yet a record:
    the batch (``worker.core.batch``) makes it one, keyed by the turn, with the draft's trace
    headers, on the role's configured topic."""

    topic: TopicRole
    value: bytes


class Decision(NamedTuple):
    """The result of one transition."""

    #: The state to hold afterwards (the same object when unchanged); ``None``: no state.
    state: TurnState | None
    outbound: tuple[Message, ...]
    #: ``identity_mismatch``: dead-letter the draft.
    dead_letter: EnvelopeRejection | None
    outcome: Outcome


def _groups(groups: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(set(groups)))


def _ledger(
    prepared: Prepared,
    ev: Evaluation,
    outcome: LedgerOutcome,
    version: str,
) -> bytes:
    d = prepared.draft
    return message_bytes(
        LedgerBatch,
        event_id=ledger_event_id(d.tenant_id, d.turn_id, d.draft_id),
        turn_id=d.turn_id,
        draft_id=d.draft_id,
        attempt=d.attempt,
        tenant_id=d.tenant_id,
        outcome=outcome,
        policy_version=version,
        rows=ev.ledger_rows,
        claim_checks=ev.claim_checks or None,
    )


def _one_per_code_and_path(ev: Evaluation) -> list[Failure]:
    """The failures to report as ``ReasonOut`` (code and path), deduplicated on (code, path)."""
    seen: dict[tuple[str, str | None], Failure] = {}
    for f in ev.failures:
        seen.setdefault((f.code, f.path), f)
    return list(seen.values())


#: The reasons of a regeneration timeout.
_TIMED_OUT = (Failure(code=FailureCode.REGENERATION_TIMEOUT),)


def _out(topic: TopicRole, text: str | None) -> tuple[Message, ...]:
    return () if text is None else (Message(topic, text.encode("utf-8")),)


def _terminal(
    base: TurnState,
    prepared: Prepared,
    ev: Evaluation,
    now: datetime,
) -> Decision:
    d = prepared.draft
    attempts = base.attempts_decided + 1
    # The fields the terminal event has whatever the outcome.
    common = {
        "event_id": terminal_event_id(base.tenant_id, d.turn_id),
        "turn_id": d.turn_id,
        "draft_id": d.draft_id,
        "attempt": d.attempt,
        "tenant_id": base.tenant_id,
        "user_id": base.user_id,
        "kind": d.kind,
        "policy_version": base.policy_version,
    }
    if ev.grounded and ev.redacted_output is not None:
        outcome, topic, route = LedgerOutcome.GROUNDED, TopicRole.VALIDATED, Outcome.GROUNDED
        event = message_bytes(
            GroundedAnswer,
            **common,
            output=ev.redacted_output,
            claims=ev.claims,
            citations=ev.citations,
            validated_at=rfc3339(now),
            claim_checks=ev.claim_checks or None,
        )
    else:
        outcome, topic = LedgerOutcome.COULD_NOT_GROUND, TopicRole.COULD_NOT_GROUND
        route = Outcome.COULD_NOT_GROUND
        reasons, truncated = cap_reasons(_one_per_code_and_path(ev))
        event = message_bytes(
            CouldNotGround,
            **common,
            attempts=attempts,
            reasons=reasons,
            reasons_truncated=truncated,
            at=rfc3339(now),
        )
    ledger = _ledger(prepared, ev, outcome, base.policy_version)
    state = base.model_copy(
        update={
            "phase": TurnPhase.TERMINAL,
            "deciding_draft_id": d.draft_id,
            "terminal_event": event.decode("utf-8"),
            "terminal_topic": topic,
            "terminal_ledger": ledger.decode("utf-8"),
            "attempts_decided": attempts,
            "ended_at": now,
        }
    )
    outbound = (Message(topic, event), Message(TopicRole.LEDGER, ledger))
    return Decision(state, outbound, None, route)


def _regenerate(
    base: TurnState, prepared: Prepared, ev: Evaluation, policy: TenantPolicy, now: datetime
) -> Decision:
    d = prepared.draft
    deadline = now + timedelta(seconds=policy.regeneration_deadline_s)
    reasons, truncated = cap_reasons(ev.failures)
    request = message_bytes(
        RegenerateRequest,
        event_id=regenerate_event_id(base.tenant_id, d.turn_id),
        turn_id=d.turn_id,
        draft_id=d.draft_id,
        tenant_id=base.tenant_id,
        principal=d.principal,
        kind=d.kind,
        reasons=reasons,
        reasons_truncated=truncated,
        previous_output=ev.redacted_output,
        policy_version=base.policy_version,
        deadline=rfc3339(deadline),
    )
    ledger = _ledger(prepared, ev, LedgerOutcome.REGENERATE, base.policy_version)
    state = base.model_copy(
        update={
            "phase": TurnPhase.REGENERATING,
            "regenerate_draft_id": d.draft_id,
            "regenerate_request": request.decode("utf-8"),
            "regenerate_ledger": ledger.decode("utf-8"),
            "deadline": deadline,
            "attempts_decided": base.attempts_decided + 1,
        }
    )
    outbound = (Message(TopicRole.REGENERATE, request), Message(TopicRole.LEDGER, ledger))
    return Decision(state, outbound, None, Outcome.REGENERATE)


def _opened(
    draft: Draft, policy_version: str, first_draft_id: str, first_attempt: int
) -> TurnState:
    """A turn's state as its first draft (``first_draft_id``) opens it: identity, policy, kind."""
    return TurnState(
        phase=TurnPhase.REGENERATING,
        turn_id=draft.turn_id,
        tenant_id=draft.tenant_id,
        user_id=draft.principal.user_id,
        groups=_groups(draft.principal.groups),
        policy_version=policy_version,
        first_draft_id=first_draft_id,
        first_attempt=first_attempt,
        kind=draft.kind,
    )


def awaiting_regeneration(draft: Draft, policy_version: str, failed_draft_id: str) -> TurnState:
    """The state of ``draft``'s turn once an earlier draft of it (``failed_draft_id``, attempt 0,
    same identity) asked for a regeneration: what ``check --after-regeneration`` decides in."""
    return _opened(draft, policy_version, failed_draft_id, 0).model_copy(
        update={"regenerate_draft_id": failed_draft_id}
    )


def _same_identity(state: TurnState, prepared: Prepared) -> bool:
    d = prepared.draft
    return (
        d.tenant_id == state.tenant_id
        and d.principal.user_id == state.user_id
        and _groups(d.principal.groups) == state.groups
    )


def decide(  # noqa: PLR0917 -- the agreed call shape of the worker loop
    state: TurnState | None,
    prepared: Prepared,
    evaluation: Evaluation,
    policy: TenantPolicy,
    now: datetime,
    worker_version: str = "",
) -> Decision:
    """Contract §3.8 for one draft. ``worker_version`` is accepted for older callers; nothing
    published depends on it, so redeliveries across versions stay byte-identical."""
    del worker_version
    d = prepared.draft
    if state is None:
        # Its phase is replaced below; a base is never stored as is.
        base = _opened(d, policy.version, d.draft_id, d.attempt)
        if evaluation.grounded or evaluation.no_grounding or evaluation.refused or d.attempt >= 1:
            return _terminal(base, prepared, evaluation, now)
        return _regenerate(base, prepared, evaluation, policy, now)
    if not _same_identity(state, prepared):
        rejection = EnvelopeRejection(
            ErrorClass.IDENTITY_MISMATCH,
            "tenant, user or groups differ from the turn's first draft",
        )
        return Decision(state, (), rejection, Outcome.DEAD_LETTER)
    if state.phase is TurnPhase.TERMINAL:
        outbound = _out(state.terminal_topic or TopicRole.VALIDATED, state.terminal_event)
        if d.draft_id == state.deciding_draft_id:
            outbound += _out(TopicRole.LEDGER, state.terminal_ledger)
        elif d.draft_id == state.regenerate_draft_id:
            # The turn's failed draft again, after the turn ended (a crash between its outputs
            # and its offset): its own ledger batch, which the crash may have lost; never its
            # regenerate request, since the turn is over.
            outbound += _out(TopicRole.LEDGER, state.regenerate_ledger)
        return Decision(state, outbound, None, Outcome.UNCHANGED)
    if d.draft_id == state.regenerate_draft_id:
        outbound = _out(TopicRole.REGENERATE, state.regenerate_request) + _out(
            TopicRole.LEDGER, state.regenerate_ledger
        )
        return Decision(state, outbound, None, Outcome.UNCHANGED)
    return _terminal(state, prepared, evaluation, now)


def on_deadline(
    state: TurnState | None, turn_id: str, tick_time: datetime, now: datetime
) -> Decision:
    """A regeneration-deadline tick: ``regeneration_timeout`` once the deadline has passed."""
    if state is None:
        return Decision(None, (), None, Outcome.UNCHANGED)
    if state.phase is TurnPhase.TERMINAL:
        if state.deciding_draft_id is None:  # it timed out: the tick may be a redelivery
            return Decision(
                state,
                _out(TopicRole.COULD_NOT_GROUND, state.terminal_event),
                None,
                Outcome.UNCHANGED,
            )
        return Decision(state, (), None, Outcome.UNCHANGED)
    if state.deadline is None or tick_time < state.deadline:
        return Decision(state, (), None, Outcome.UNCHANGED)
    event = message_bytes(
        CouldNotGround,
        event_id=terminal_event_id(state.tenant_id, turn_id),
        turn_id=turn_id,
        draft_id=state.regenerate_draft_id or state.first_draft_id,
        attempt=state.first_attempt,
        tenant_id=state.tenant_id,
        user_id=state.user_id,
        kind=state.kind,
        attempts=state.attempts_decided,
        reasons=_TIMED_OUT,
        policy_version=state.policy_version,
        at=rfc3339(now),
    ).decode("utf-8")
    new = state.model_copy(
        update={
            "phase": TurnPhase.TERMINAL,
            "terminal_event": event,
            "terminal_topic": TopicRole.COULD_NOT_GROUND,
            "ended_at": now,
        }
    )
    return Decision(new, _out(TopicRole.COULD_NOT_GROUND, event), None, Outcome.COULD_NOT_GROUND)


def expired(state: TurnState, now: datetime, retention_s: float) -> bool:
    """A terminal turn past its retention: treat it as no state (a later draft opens afresh)."""
    end = ended_at(state)
    return end is not None and now - end > timedelta(seconds=retention_s)


def regeneration_deadline(state: TurnState) -> datetime | None:
    """When a turn waiting for its regeneration times out; ``None`` for any other turn."""
    return state.deadline if state.phase is TurnPhase.REGENERATING else None


def ended_at(state: TurnState) -> datetime | None:
    """When a finished turn ended (its retention counts from there); ``None`` for any other."""
    return state.ended_at if state.phase is TurnPhase.TERMINAL else None
