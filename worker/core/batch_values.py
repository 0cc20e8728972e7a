"""The batch's values: what :func:`worker.core.batch.plan_batch` reads of each record, the rules
a batch is decided by, and what :func:`worker.core.batch.decide_batch` returns (one route per
record, the records to append, the turn table's writes)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from worker.core.citations.evidence import CitationRef
from worker.core.claims.policy import PolicyBook
from worker.core.contract import ErrorClass, Outcome, TopicRole
from worker.core.envelope.draft import EnvelopeRejection
from worker.core.grounding import Admitted, Judgement, admit_draft
from worker.core.messages.records import Incoming, OutRecord
from worker.core.turns.control import Control
from worker.core.turns.machine import TurnState

#: Why a tenant's drafts are dead-lettered: the class and the operator's message.
Unavailable = tuple[ErrorClass, str]


class BatchRules(NamedTuple):
    """What a batch is decided under (from the settings; ``check`` uses the defaults)."""

    #: The configured name of each topic the batch appends to, by role.
    topics: Mapping[TopicRole, str]
    #: How long a finished turn is kept; ``None``: forever (``check``).
    retention_s: float | None
    #: The worker's version, for a dead letter's ``dlq.worker.version`` header.
    worker_version: str = ""


class Planned(NamedTuple):
    """One record of a batch, read: exactly one of a control, a rejection, an admitted draft."""

    incoming: Incoming
    #: It carries the control header: never a draft (``control`` is ``None`` when unreadable).
    is_control: bool = False
    control: Control | None = None
    admitted: Admitted | None = None
    rejection: EnvelopeRejection | None = None
    #: The exception when the core could not read the record (then ``internal_error``).
    error: Exception | None = None

    def with_attempt(self, attempt: int, policies: PolicyBook) -> Planned:
        """The same draft as if its producer had sent ``attempt`` (``check --attempt``)."""
        if self.admitted is None:
            return self
        draft = self.admitted.draft.model_copy(update={"attempt": attempt})
        return self._replace(admitted=admit_draft(draft, policies))


class BatchPlan(NamedTuple):
    """A batch's records, read, in consumption order."""

    records: tuple[Planned, ...]

    @property
    def wanted(self) -> dict[str, frozenset[CitationRef]]:
        """The distinct ids to look up, per tenant (tenants with none left out)."""
        return wanted_of(self.records)

    @property
    def turn_ids(self) -> list[str]:
        """Every turn the batch's drafts and control records belong to, each once, in order."""
        seen: dict[str, None] = {}
        for p in self.records:
            if p.admitted is not None:
                seen[p.admitted.draft.turn_id] = None
            elif p.control is not None:
                seen[p.control.turn_id] = None
        return list(seen)


class Route(NamedTuple):
    """What one record of the batch led to."""

    planned: Planned
    #: The records to append for it, in order (a dead letter: that one record).
    records: tuple[OutRecord, ...] = ()
    #: What to count it as; ``None``: nothing (a dead letter, or a control that changed nothing).
    outcome: Outcome | None = None
    #: Dead-letter it instead: the class and the operator's message.
    dead_letter: EnvelopeRejection | None = None
    #: A decided draft's judgement (for logs, metrics, spans and ``check``'s report).
    judgement: Judgement | None = None
    #: The exception when reading or deciding it failed (it is dead-lettered ``internal_error``).
    error: Exception | None = None
    #: A control record's turn trace context (the ``traceparent`` its outputs carry).
    traceparent: str | None = None

    @property
    def incoming(self) -> Incoming:
        """The record as consumed."""
        return self.planned.incoming


class TurnWrite(NamedTuple):
    """One change of the turn table, on the partition of the record that made it."""

    turn_id: str
    partition: int
    #: The state to hold; ``None``: forget the turn.
    state: TurnState | None


class BatchOutcome(NamedTuple):
    """Everything decided about one batch."""

    routes: tuple[Route, ...]
    #: The turn table's writes, in the order they were decided.
    turn_writes: tuple[TurnWrite, ...]

    @property
    def records(self) -> list[OutRecord]:
        """Every record to append, dead letters included, in order."""
        return [r for route in self.routes for r in route.records]


def wanted_of(planned: Iterable[Planned]) -> dict[str, frozenset[CitationRef]]:
    """The distinct ids the admitted drafts among ``planned`` cite, per tenant (none: absent)."""
    wanted: dict[str, set[CitationRef]] = {}
    for p in planned:
        admitted = p.admitted
        if admitted is not None and admitted.refs:
            wanted.setdefault(admitted.tenant_id, set()).update(admitted.refs)
    return {tenant: frozenset(refs) for tenant, refs in wanted.items()}
