"""The worker's output messages (contract §3 grounded answer, §4, §5, §6), one model each.

Each message is defined once, here, as a pydantic model: its fields, their order and defaults,
its JSON Schema (``scripts/gen_schemas.py``) and, derived from it by ``worker.core.messages.wire``,
its
bytes. The hot path never instantiates a model: ``wire.message_bytes`` writes a message from
field values, the verdict's parts already in their wire form (``wire.WireParts``).

Decisions recorded here:

- The one serializer is ``worker.core.messages.wire``: UTF-8 JSON, keys sorted, no whitespace, and
an
  optional field that is ``None`` is *omitted* (never written as ``null``). Inside an agent output
  dict (``output``, ``previous_output``) a ``null`` the agent wrote is kept as is.
- Ledger ``source_id`` is a decimal *string*: ids may exceed 64 bits (dangling ones), the Postgres
  column is ``numeric``, and a JSON number that large is lossy in most consumers.
- Reasons are capped at ``MAX_REASONS`` (50); past that ``reasons_truncated: true`` is present,
  otherwise the field is absent.
- Could-not-ground reasons carry ``code`` and ``path`` only. The event also echoes the deciding
  draft's ``attempt`` (contract §3.8 "outputs echo the deciding draft's attempt"; an added optional
  field, which §1 allows).
- Timestamps are RFC 3339 UTC with millisecond precision and a ``Z``; a naive datetime is a bug.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from worker.core.citations.evidence import EvidenceKind, Principal, QuoteCheck, Resolution
from worker.core.contract import Disposition, LedgerOutcome, SupportLevel
from worker.core.failures import Failure, FailureCode
from worker.core.outputs.validation import DraftKind

_T = TypeVar("_T")
MAX_REASONS = 50


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CitationKey(_Message):
    """A visible citation of a claim: kind and id only."""

    kind: EvidenceKind
    id: int = Field(ge=0)


class ClaimCheckOut(BaseModel):
    """``claim_checks[]`` of a grounded answer and a ledger batch: one per declared claim."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer_field: str
    #: Absent when the claim takes its entity from the output and the output names none.
    entity: str | None = None
    field: str
    disposition: Disposition
    superseded: Literal[True] | None = None


class GroundingStatus(StrEnum):
    """Status of a claim in a published answer (omitted units are simply absent)."""

    CITED = "cited"
    HEDGED = "hedged"


class ClaimOut(_Message):
    """One claim unit of a grounded answer, after redaction."""

    text: str
    citations: tuple[CitationKey, ...]
    grounding_status: GroundingStatus
    #: A cited unit's support by its visible sources (contract rule 6b); absent for a hedged unit
    #: and under a tenant policy ``support: off``.
    support: SupportLevel | None = None


class CitationOut(_Message):
    """One distinct visible citation: ``title`` for documents only; the agent's quote if any."""

    kind: EvidenceKind
    id: int = Field(ge=0)
    title: str | None = None
    quote: str | None = None
    quote_check: QuoteCheck = QuoteCheck.NONE


class GroundedAnswer(_Message):
    """``answers.validated`` (contract §3)."""

    schema_version: Literal[1] = 1
    event_id: str
    status: Literal["grounded"] = "grounded"
    turn_id: str
    draft_id: str
    attempt: int = Field(ge=0)
    tenant_id: str
    user_id: str
    kind: DraftKind
    #: The agent output after redaction.
    output: dict[str, Any]
    claims: tuple[ClaimOut, ...]
    citations: tuple[CitationOut, ...]
    policy_version: str
    validated_at: str
    #: One per claim the tenant declares (rule 7b); absent when it declares none.
    claim_checks: tuple[ClaimCheckOut, ...] | None = None


class RegenerateRequest(_Message):
    """``agent.regenerate`` (contract §4): ask the producer for exactly one new attempt."""

    schema_version: Literal[1] = 1
    event_id: str
    turn_id: str
    #: The failed draft.
    draft_id: str
    tenant_id: str
    principal: Principal
    kind: DraftKind
    attempt: Literal[1] = 1
    reasons: tuple[Failure, ...]
    reasons_truncated: Literal[True] | None = None
    #: The failed output after redaction; absent when it could not be parsed or validated.
    previous_output: dict[str, Any] | None = None
    policy_version: str
    deadline: str


class ReasonOut(_Message):
    """A could-not-ground reason: code and path only (model text may paraphrase a hidden source)."""

    code: FailureCode
    path: str | None = None


class CouldNotGround(_Message):
    """``answers.could_not_ground`` (contract §5)."""

    schema_version: Literal[1] = 1
    event_id: str
    status: Literal["could_not_ground"] = "could_not_ground"
    turn_id: str
    draft_id: str
    #: The deciding draft's attempt (added optional field, see module docstring).
    attempt: int | None = Field(default=None, ge=0)
    tenant_id: str
    user_id: str
    kind: DraftKind
    #: How many drafts were decided.
    attempts: int = Field(ge=0)
    reasons: tuple[ReasonOut, ...]
    reasons_truncated: Literal[True] | None = None
    policy_version: str
    at: str


class LedgerSupport(StrEnum):
    """A ledger row's support: the lowest of the checked units citing it (contract §6)."""

    SUPPORTED = "supported"
    WEAK = "weak"
    UNSUPPORTED = "unsupported"
    UNCHECKED = "unchecked"
    #: No unit citing it was checked (hedged, failed, omitted, or the check is off).
    NONE = "none"


class LedgerRow(_Message):
    """One distinct cited (kind, id): metadata only, never text, title, quote or snippet."""

    kind: EvidenceKind
    #: Decimal string: the id may exceed 64 bits.
    source_id: str = Field(pattern=r"^[0-9]+$")
    resolution: Resolution
    quote_check: QuoteCheck
    paths: tuple[str, ...]
    support: LedgerSupport = LedgerSupport.NONE


class LedgerBatch(_Message):
    """``citations.ledger`` (contract §6): one per decided draft."""

    schema_version: Literal[1] = 1
    event_id: str
    turn_id: str
    draft_id: str
    attempt: int = Field(ge=0)
    tenant_id: str
    outcome: LedgerOutcome
    policy_version: str
    rows: tuple[LedgerRow, ...]
    #: One per claim the tenant declares (rule 7b); absent when it declares none or the output
    #: could not be validated (nothing typed to check).
    claim_checks: tuple[ClaimCheckOut, ...] | None = None


def cap_reasons(reasons: Sequence[_T]) -> tuple[tuple[_T, ...], Literal[True] | None]:
    """At most ``MAX_REASONS`` reasons, and the ``reasons_truncated`` flag."""
    if len(reasons) > MAX_REASONS:
        return tuple(reasons[:MAX_REASONS]), True
    return tuple(reasons), None


def rfc3339(moment: datetime) -> str:
    """``2026-12-02T12:00:00.000Z``: UTC, millisecond precision."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime: the core only takes timezone-aware times")
    utc = moment.astimezone(UTC)
    if utc.year >= 1000:  # ``isoformat`` (~3 x faster) writes these exactly as below, plus "+00:00"
        return utc.isoformat(timespec="milliseconds")[:-6] + "Z"
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
