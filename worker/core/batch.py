"""The batch use case, pure: one front door for the worker and for ``check``.

A batch of ``agent.drafts`` records is decided in two pure steps around its IO:

1. :func:`plan_batch` reads every record: a control record (``worker.core.turns.control``), a record
   to dead-letter (the envelope's rejection), or a draft admitted by ``worker.core.grounding``.
   The :class:`BatchPlan` names what the shell must read: the ids to look up per tenant
   (:attr:`BatchPlan.wanted`) and the turns whose state the batch needs
   (:attr:`BatchPlan.turn_ids`).
2. :func:`decide_batch` takes what the shell read (evidence by tenant, the tenants whose
   evidence could not be had, the turns' stored states) and decides every record in order: a
   turn's second draft sees the state its first draft left. It returns one :class:`Route` per
   record, every record to append (in order, dead letters included), and the turn table's writes
   (in order).

Between and after them the shell only does IO: fetch, store the turn writes, publish
(``worker.stream.processing.pipeline``); ``check`` (``worker.tools.check``) calls the same two on a
batch of one. Every rule of the batch is here:

- A draft of a tenant whose evidence could not be had is dead-lettered with the class the shell
  reported, as the core names it: :func:`store_gave_up` past a finite retry budget
  (``infra_unavailable``), :func:`internal_error` for a poison fault of that tenant's fetch; a
  draft that cites nothing needs no store and is decided.
- A control record is decided like a draft, in its turn's order: ``expire_turn`` forgets a
  finished turn past its retention; ``regeneration_deadline`` ends a regeneration past its
  deadline with ``regeneration_timeout``. An unreadable control record is ignored.
- A turn waiting for its regeneration keeps the trace context of the draft that asked for it
  (the worker's span when spans are on, else the draft's ``traceparent``; only a W3C-valid one):
  the control record that may end it carries no trace, and its could-not-ground event takes the
  kept one. With spans on, every record derived from a draft names the draft's span as its parent
  (``traceparent``); dead letters keep the draft's own headers.
- An exception while deciding one record is that record's poison: it is dead-lettered
  ``internal_error`` (its state untouched), and the batch goes on; so is every record of a batch
  that failed as a whole (:func:`failed_batch`).
- A dead letter is a record like the others, in its route's place (contract §7, composed by
  ``worker.core.envelope.dead_letter``: the original bytes, ``dlq.*`` headers, failed at ``now``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from worker.core.batch_values import (
    BatchOutcome,
    BatchPlan,
    BatchRules,
    Planned,
    Route,
    TurnWrite,
    Unavailable,
)
from worker.core.citations.evidence import CitationRef, EvidenceRecord
from worker.core.claims.policy import PolicyBook
from worker.core.claims.support import SourceIndex
from worker.core.contract import ErrorClass, Outcome, TopicRole
from worker.core.envelope.dead_letter import dead_letter
from worker.core.envelope.draft import EnvelopeRejection
from worker.core.grounding import Admitted, admit, judge
from worker.core.messages.records import Headers, Incoming, OutRecord, trace_headers
from worker.core.messages.tracecontext import parse_traceparent, with_parent
from worker.core.turns.control import ControlKind, is_control, parse_control
from worker.core.turns.machine import Decision, TurnPhase, TurnState, expired, on_deadline


def plan_record(rec: Incoming, policies: PolicyBook, *, max_bytes: int) -> Planned:
    """Read one record (pure; a record the core cannot read is a planned ``internal_error``)."""
    try:
        if is_control(rec):
            return Planned(rec, is_control=True, control=parse_control(rec))
        admitted = admit(rec.key, rec.value, max_bytes=max_bytes, policies=policies)
    except Exception as exc:  # noqa: BLE001 - a record the core cannot read is poison
        return Planned(rec, rejection=_internal_error(exc), error=exc)
    if isinstance(admitted, EnvelopeRejection):
        return Planned(rec, rejection=admitted)
    return Planned(rec, admitted=admitted)


def plan_batch(records: Iterable[Incoming], policies: PolicyBook, *, max_bytes: int) -> BatchPlan:
    """Read every record of a batch (step 1)."""
    return BatchPlan(tuple(plan_record(rec, policies, max_bytes=max_bytes) for rec in records))


def decide_batch(
    plan: BatchPlan,
    evidence: Mapping[str, Mapping[CitationRef, EvidenceRecord]],
    states: Mapping[str, TurnState],
    now: datetime,
    rules: BatchRules,
    *,
    unavailable: Mapping[str, Unavailable] | None = None,
    unreadable: Mapping[str, Exception] | None = None,
    parents: Sequence[str | None] | None = None,
) -> BatchOutcome:
    """Decide every record of ``plan`` in order (step 2).

    ``evidence``: the records the stores returned, by tenant; ``states``: the stored state of
    the plan's turns (a turn absent is open); ``unavailable``: the tenants whose evidence could
    not be had; ``unreadable``: turns whose stored state could not be read, with the error
    (their records are dead-lettered ``internal_error``); ``parents``: with spans on, the
    ``traceparent`` of each record's span (``None`` for a control record or an invalid span).
    """
    deciding = _Deciding(evidence, dict(states), now, rules, unavailable or {})
    unreadable = unreadable or {}
    routes: list[Route] = []
    for position, planned in enumerate(plan.records):
        turn = _turn_of(planned)
        if turn is not None and turn in unreadable:
            routes.append(_lettered(_failed(planned, unreadable[turn]), now, rules))
            continue
        parent = parents[position] if parents is not None else None
        try:
            route = deciding.route(planned, parent, spans=parents is not None)
        except Exception as exc:  # noqa: BLE001 - any bug on one record is that record's poison
            routes.append(_lettered(_failed(planned, exc), now, rules))
        else:
            routes.append(_lettered(route, now, rules))
            deciding.commit()
        deciding.pending = None
    return BatchOutcome(tuple(routes), tuple(deciding.writes))


def failed_batch(
    records: Iterable[Incoming], error: str, now: datetime, rules: BatchRules
) -> tuple[Route, ...]:
    """Every record of a batch that failed as a whole, dead-lettered ``internal_error`` naming
    the exception's class ``error`` (contract §7: any other exception is deterministic)."""
    rejection = internal_error(error)
    return tuple(
        _lettered(Route(Planned(rec), dead_letter=rejection), now, rules) for rec in records
    )


def internal_error(error: str) -> EnvelopeRejection:
    """How a record is dead-lettered after a fault that is not the infrastructure's: the class
    ``internal_error``, the message naming the exception's class ``error`` only."""
    return EnvelopeRejection(ErrorClass.INTERNAL_ERROR, f"internal error: {error}")


def store_gave_up(attempts: int, *, batch: Unavailable | None = None) -> Unavailable:
    """How the drafts of a tenant whose store stayed unavailable past a finite retry budget are
    dead-lettered: ``infra_unavailable``, after ``attempts`` store calls (contract §7).

    ``batch``: the failure of the batch's call this tenant was asked again after, alone; when
    that call had already spent the budget, the tenant keeps its failure (and count).
    """
    if batch is not None and batch[0] is ErrorClass.INFRA_UNAVAILABLE:
        return batch
    return (ErrorClass.INFRA_UNAVAILABLE, f"evidence store unavailable after {attempts} attempts")


def _lettered(route: Route, now: datetime, rules: BatchRules) -> Route:
    """``route`` with its dead letter's record, if it is one (failed at ``now``)."""
    rejection = route.dead_letter
    if rejection is None:
        return route
    letter = dead_letter(
        route.planned.incoming,
        rejection.error_class,
        rejection.message,
        failed_at_ms=int(now.timestamp() * 1000),
        worker_version=rules.worker_version,
        topic=rules.topics[TopicRole.DLQ],
    )
    return route._replace(records=(letter,))


def _turn_of(planned: Planned) -> str | None:
    if planned.admitted is not None:
        return planned.admitted.draft.turn_id
    return planned.control.turn_id if planned.control is not None else None


def _internal_error(exc: Exception) -> EnvelopeRejection:
    return internal_error(type(exc).__name__)


def _failed(planned: Planned, exc: Exception) -> Route:
    return Route(planned, dead_letter=_internal_error(exc), error=exc)


def _utc_from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000.0, tz=UTC)


class _Deciding:
    """One batch being decided: the turns' states as the records decided so far left them."""

    def __init__(
        self,
        evidence: Mapping[str, Mapping[CitationRef, EvidenceRecord]],
        states: dict[str, TurnState],
        now: datetime,
        rules: BatchRules,
        unavailable: Mapping[str, Unavailable],
    ) -> None:
        self.evidence = evidence
        self.states = states
        self.now = now
        self.rules = rules
        self.unavailable = unavailable
        self.writes: list[TurnWrite] = []
        #: The write of the record being decided, applied only once it is decided.
        self.pending: TurnWrite | None = None
        self.sources = SourceIndex()  # the batch's source texts, read once for every draft
        self.topics = rules.topics

    def route(self, planned: Planned, parent: str | None, *, spans: bool) -> Route:
        if planned.is_control:
            return self._control(planned)
        if planned.rejection is not None:
            return Route(planned, dead_letter=planned.rejection, error=planned.error)
        admitted = planned.admitted
        if admitted is None:
            raise TypeError("a planned record is a control, a rejection or an admitted draft")
        return self._draft(planned, admitted, parent, spans=spans)

    def _draft(
        self, planned: Planned, admitted: Admitted, parent: str | None, *, spans: bool
    ) -> Route:
        rec = planned.incoming
        tenant, draft = admitted.tenant_id, admitted.draft
        if tenant in self.unavailable and admitted.refs:
            return Route(planned, dead_letter=EnvelopeRejection(*self.unavailable[tenant]))
        judgement = judge(
            admitted,
            self.states.get(draft.turn_id),
            self.evidence.get(tenant, {}),
            self.now,
            retention_s=self.rules.retention_s,
            sources=self.sources,
        )
        if judgement.dead_letter is not None:
            return Route(planned, dead_letter=judgement.dead_letter, judgement=judgement)
        # The trace a waiting turn keeps: the worker's span's with spans on, else the draft's.
        trace = parent if spans else rec.header("traceparent")
        decision = _keep_trace_while_waiting(judgement.decision, judgement.before, trace)
        self._store(draft.turn_id, rec.partition, judgement.before, decision)
        headers = trace_headers(rec)
        if spans and parent is not None:
            headers = with_parent(headers, parent)
        records = self._records(decision, draft.turn_id, headers)
        return Route(
            planned, records, decision.outcome, judgement=judgement._replace(decision=decision)
        )

    def _control(self, planned: Planned) -> Route:
        control = planned.control
        if control is None:
            return Route(planned)  # unknown or unreadable: ignored
        rec = planned.incoming
        state = self.states.get(control.turn_id)
        tick = _utc_from_ms(rec.timestamp_ms)
        if control.kind is ControlKind.EXPIRE_TURN:
            retention = self.rules.retention_s
            if state is not None and retention is not None and expired(state, tick, retention):
                self._write(TurnWrite(control.turn_id, rec.partition, None))
                return Route(planned, outcome=Outcome.EXPIRED)
            return Route(planned)
        decision = on_deadline(state, control.turn_id, tick, self.now)
        self._store(control.turn_id, rec.partition, state, decision)
        # The control record carries no trace: the turn's own (kept in its state) goes out.
        traceparent = state.traceparent if state is not None else None
        headers: Headers = (("traceparent", traceparent.encode("ascii")),) if traceparent else ()
        records = self._records(decision, control.turn_id, headers)
        outcome = decision.outcome if records else None
        return Route(planned, records, outcome, traceparent=traceparent)

    def _records(self, decision: Decision, turn_id: str, headers: Headers) -> tuple[OutRecord, ...]:
        key = turn_id.encode("utf-8")
        topics = self.topics
        return tuple(OutRecord(topics[m.topic], key, m.value, headers) for m in decision.outbound)

    def _store(
        self, turn_id: str, partition: int, before: TurnState | None, decision: Decision
    ) -> None:
        if decision.state is not None and decision.state != before:
            self._write(TurnWrite(turn_id, partition, decision.state))

    def _write(self, write: TurnWrite) -> None:
        """Note the record's write (one at most); :meth:`commit` applies it once it is decided."""
        self.pending = write

    def commit(self) -> None:
        """Apply the write of the record just decided: the next records see its state."""
        write = self.pending
        if write is None:
            return
        self.writes.append(write)
        if write.state is None:
            self.states.pop(write.turn_id, None)
        else:
            self.states[write.turn_id] = write.state


def _keep_trace_while_waiting(
    decision: Decision, before: TurnState | None, traceparent: bytes | str | None
) -> Decision:
    """Keep the draft's trace context in a turn that now waits for its regeneration.

    A deadline may end that turn later, from a control record that carries no trace: its
    could-not-ground event then takes this one. Only a W3C-valid ``traceparent`` is kept.
    """
    state = decision.state
    if state is None or state is before or state.phase is not TurnPhase.REGENERATING:
        return decision
    ctx = parse_traceparent(traceparent)
    if ctx is None or state.traceparent == ctx.traceparent:
        return decision
    return decision._replace(state=state.model_copy(update={"traceparent": ctx.traceparent}))
