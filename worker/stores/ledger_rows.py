"""The typed row the Postgres ledger sink writes (contract §6): metadata only, by construction.

There is deliberately no field for text, title, quote or snippet, so no caller can put one in
``citation_ledger``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from worker.core.contract import LedgerOutcome
from worker.core.evidence import EvidenceKind, QuoteCheck, Resolution


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
