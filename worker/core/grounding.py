"""One draft inside the batch use case, pure: parse → prepare → (resolve) → expired → evaluate →
decide.

The batch's front door (``worker.core.batch``), which the worker and the ``check`` tool both call,
walks every draft through exactly these functions, so they cannot disagree on a verdict.

The evidence look-up between prepare and evaluate is IO, and the worker makes one store call for a
whole batch across its tenants; so a draft's part is two pure steps around it:

1. :func:`admit` (or :func:`admit_draft` for an already parsed draft): the envelope read, the
   tenant's policy chosen, the output prepared (rules 1-3, claim units). An :class:`Admitted`
   draft names what it needs looked up (:attr:`Admitted.tenant_id`, :attr:`Admitted.refs`).
2. :func:`judge`: given that tenant's records the store returned and the turn's stored state,
   drops a state past its retention, evaluates (rules 4-7) and decides (§3.8). The
   :class:`Judgement` holds all of it, with the resolutions and unit statuses the ``check``
   report shows (computed when asked: the worker never reads them).

Faults are the caller's: a store that could not be asked is retried by the shell, and a draft of
a tenant whose evidence could not be had is dead-lettered by the batch; it never reaches
:func:`judge`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import NamedTuple

from worker.core.citations.evidence import CitationRef, EvidenceRecord, Resolution
from worker.core.claims.policy import PolicyBook, TenantPolicy
from worker.core.claims.status import UnitStatus, unit_status
from worker.core.claims.support import SourceIndex
from worker.core.claims.units import ClaimUnit
from worker.core.contract import Outcome
from worker.core.envelope.draft import Draft, EnvelopeRejection, parse_envelope
from worker.core.turns.machine import Decision, TurnState, decide, expired
from worker.core.verdict import Evaluation, Prepared, evaluate, prepare


class Admitted(NamedTuple):
    """A parsed draft, its tenant's policy, and its output prepared for resolution."""

    draft: Draft
    policy: TenantPolicy
    prepared: Prepared

    @property
    def tenant_id(self) -> str:
        """Whose evidence the draft cites."""
        return self.draft.tenant_id

    @property
    def refs(self) -> frozenset[CitationRef]:
        """The distinct ids to look up for :attr:`tenant_id` (empty: nothing to ask a store)."""
        return self.prepared.refs_to_resolve


class Judgement(NamedTuple):
    """Everything decided about one draft."""

    admitted: Admitted
    #: The turn's state the decision started from: ``None`` when open or past its retention.
    before: TurnState | None
    evaluation: Evaluation
    decision: Decision

    @property
    def outcome(self) -> Outcome:
        """grounded | regenerate | could_not_ground | unchanged | dead_letter."""
        return self.decision.outcome

    @property
    def dead_letter(self) -> EnvelopeRejection | None:
        """Why the draft is dead-lettered instead (``identity_mismatch``), or ``None``."""
        return self.decision.dead_letter

    @property
    def failure_codes(self) -> list[str]:
        """The distinct failure codes found, sorted (for logs and metrics: never a citation)."""
        return [code.value for code in sorted({f.code for f in self.evaluation.failures})]

    @property
    def resolutions(self) -> dict[CitationRef, Resolution]:
        """Every distinct cited id and how it resolved (hidden ones included: never publish)."""
        return dict(self.evaluation.resolutions)

    @property
    def unit_statuses(self) -> list[tuple[ClaimUnit, UnitStatus]]:
        """Every claim unit of the output with its status (contract §3.7), in output order."""
        resolutions = self.resolutions
        lost = self.admitted.policy.lost_support
        return [(u, unit_status(u, resolutions, lost)) for u in self.admitted.prepared.units]


def admit_draft(draft: Draft, policies: PolicyBook) -> Admitted:
    """Prepare a parsed draft under its tenant's policy (everything that needs no store)."""
    policy = policies.for_tenant(draft.tenant_id)
    return Admitted(draft, policy, prepare(draft, policy))


def admit(
    key: bytes | None, value: bytes, *, max_bytes: int, policies: PolicyBook
) -> Admitted | EnvelopeRejection:
    """Read one ``agent.drafts`` record (§2) and prepare it; or why it is dead-lettered."""
    parsed = parse_envelope(key, value, max_bytes=max_bytes)
    if isinstance(parsed, EnvelopeRejection):
        return parsed
    return admit_draft(parsed, policies)


def judge(
    admitted: Admitted,
    state: TurnState | None,
    evidence: Mapping[CitationRef, EvidenceRecord],
    now: datetime,
    *,
    retention_s: float | None,
    sources: SourceIndex | None = None,
) -> Judgement:
    """Decide one admitted draft.

    ``state`` is the turn's stored state (``None``: open); ``evidence`` the records the store
    returned for the draft's tenant among :attr:`Admitted.refs`; ``retention_s`` how long a
    finished turn is kept (``None``: forever); ``sources`` the batch's memo of source texts read
    for the support check (rule 6b; one per draft when ``None``).
    """
    if state is not None and retention_s is not None and expired(state, now, retention_s):
        state = None
    prepared, policy = admitted.prepared, admitted.policy
    evaluation = evaluate(prepared, evidence, policy, now, sources)
    return Judgement(admitted, state, evaluation, decide(state, prepared, evaluation, policy, now))
