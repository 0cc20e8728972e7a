"""Per-tenant policy: what to do with support lost to redaction, the auto-apply threshold, the
regeneration deadline and the typed claims the tenant declares (contract §3 rule 7b)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from worker.core.claims.typed import DeclaredClaim

DEFAULT_HEDGE_SENTENCE = "This statement could not be verified against sources you can access."


class LostSupportPolicy(StrEnum):
    """Contract §3.7: a unit whose support was lost only through redaction or revocation."""

    HEDGE = "hedge"
    OMIT = "omit"
    REFUSE = "refuse"


class SupportPolicy(StrEnum):
    """Contract rule 6b: what an ``unsupported`` cited unit does."""

    #: ``unsupported`` is failure ``unsupported_claim`` with the unit's path.
    ENFORCE = "enforce"
    #: ``support`` is reported on every cited claim; nothing fails on it.
    ADVISORY = "advisory"
    #: No check: published claims carry no ``support``, ledger rows ``none``.
    OFF = "off"


class TenantPolicy(BaseModel):
    """One tenant's grounding policy. ``version`` is echoed on every output."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = "default-1"
    lost_support: LostSupportPolicy = LostSupportPolicy.HEDGE
    hedge_sentence: str = DEFAULT_HEDGE_SENTENCE
    auto_apply_threshold: float = Field(default=0.9, ge=0.0, le=1.0)
    #: Seconds an agent has to answer a regenerate request.
    regeneration_deadline_s: float = Field(default=120.0, gt=0)
    #: The support check of cited units (contract rule 6b).
    support: SupportPolicy = SupportPolicy.ENFORCE
    #: Typed claims: answer field -> (entity, field) of a fact; each gets one disposition.
    claims: tuple[DeclaredClaim, ...] = ()

    @field_validator("claims")
    @classmethod
    def _distinct_claims(cls, claims: tuple[DeclaredClaim, ...]) -> tuple[DeclaredClaim, ...]:
        """A claim declared twice would be checked, and could fail, twice."""
        if len(set(claims)) != len(claims):
            raise ValueError("a claim is declared more than once")
        return claims


class PolicyBook(BaseModel):
    """Policies for every tenant, with a default for tenants not listed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    default: TenantPolicy = TenantPolicy()
    tenants: Mapping[str, TenantPolicy] = Field(default_factory=dict)

    def for_tenant(self, tenant_id: str) -> TenantPolicy:
        """The tenant's policy, or the default."""
        return self.tenants.get(tenant_id, self.default)
