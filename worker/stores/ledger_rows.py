"""The typed rows the Postgres ledger sink writes (contract §6): metadata only, by construction.

There is deliberately no field for text, title, quote or snippet in either form, so no caller
can put one in ``citation_ledger``. ``LedgerRecord`` is the validated model (the reference the
sink's decoder is checked against, and what callers outside the sink build); ``LedgerRow`` is
the same row as plain values in the table's column order, which the sink decodes straight into
and the writer inserts without looking anything up per row.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from worker.core import EvidenceKind, LedgerOutcome, LedgerSupport, QuoteCheck, Resolution


class LedgerRecord(BaseModel):
    """One distinct cited (kind, id) of one decided draft."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: str = Field(min_length=1)
    turn_id: str = Field(min_length=1)
    draft_id: str = Field(min_length=1)
    #: The deciding draft's ``attempt`` (informative, echoed).
    attempt: int = Field(ge=0)
    outcome: LedgerOutcome
    policy_version: str
    #: The ledger batch's ``event_id``: a function of (tenant_id, turn_id, draft_id).
    event_id: str = Field(min_length=1)
    kind: EvidenceKind
    #: Unbounded: a dangling id may exceed a bigint, so the column is ``numeric``.
    source_id: int = Field(ge=0)
    resolution: Resolution
    quote_check: QuoteCheck = QuoteCheck.NONE
    #: Field paths where the citation occurred (``claims[0].text``, ...).
    paths: tuple[str, ...] = ()
    #: The lowest support of the checked units citing it (contract rule 6b); ``none``: unchecked.
    support: LedgerSupport = LedgerSupport.NONE


class LedgerRow(NamedTuple):
    """A ``LedgerRecord``'s values as plain ``str``/``int``/``list``, same fields, same order.

    Only ever built from a proven shape (``worker.ledger.message``) or from a ``LedgerRecord``
    (:meth:`of`), so it holds exactly what the model would.
    """

    tenant_id: str
    turn_id: str
    draft_id: str
    attempt: int
    outcome: str
    policy_version: str
    event_id: str
    kind: str
    source_id: int
    resolution: str
    quote_check: str
    paths: list[str]
    support: str = "none"

    @classmethod
    def of(cls, record: LedgerRecord) -> LedgerRow:
        """The row of a validated record."""
        return cls(
            record.tenant_id,
            record.turn_id,
            record.draft_id,
            record.attempt,
            record.outcome.value,
            record.policy_version,
            record.event_id,
            record.kind.value,
            record.source_id,
            record.resolution.value,
            record.quote_check.value,
            list(record.paths),
            record.support.value,
        )
