"""Citation references and what a store knows about each cited id."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

#: The largest id a store can hold (Postgres bigint). A larger id is dangling without a query.
MAX_SOURCE_ID = 2**63 - 1


class EvidenceKind(StrEnum):
    """The three kinds of evidence a draft may cite."""

    OBS = "OBS"
    DOC = "DOC"
    EVT = "EVT"


class CitationRef(NamedTuple):
    """One distinct cited id: the unit of resolution, redaction and the ledger."""

    kind: EvidenceKind
    #: Non-negative; may exceed ``MAX_SOURCE_ID`` (then it is dangling without a query).
    id: int

    @property
    def label(self) -> str:
        """``OBS-99``: how a reason names a citation."""
        return f"{self.kind.value}-{self.id}"

    @property
    def token(self) -> str:
        """``[OBS-99]``: the inline form."""
        return f"[{self.kind.value}-{self.id}]"

    @property
    def queryable(self) -> bool:
        """Whether a store could hold this id at all."""
        return 0 <= self.id <= MAX_SOURCE_ID


#: The ACL of a document stored with no ``acl`` field at all: it admits nobody, so a forgotten
#: field fails closed (contract §8; ``acl: null`` is ``None``, the whole tenant). The store
#: adapters apply it when they translate a document (``worker.stores.rows``).
MISSING_ACL: tuple[str, ...] = ()


class EvidenceRecord(BaseModel):
    """What the store returned for one id of the asked tenant.

    A store returns records of the asked tenant only; an id that exists only in another tenant is
    simply absent, so the core cannot tell the two apart and never needs to.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    ref: CitationRef
    #: ``None``: every principal of the tenant may see it. A tuple admits exactly its entries
    #: (``"user:<id>"``, ``"group:<g>"``); an empty tuple admits nobody. A document stored with no
    #: ``acl`` field at all is returned as :data:`MISSING_ACL` by its adapter, so it fails closed.
    acl: tuple[str, ...] | None
    revoked_at: datetime | None = None
    #: ``summary`` for OBS/EVT, ``text`` for DOC: what a quote is checked against.
    text: str | None = None
    #: Documents only.
    title: str | None = None


class Resolution(StrEnum):
    """The first outcome that applies to a cited id (contract §3.4), in this order."""

    DANGLING = "dangling"
    REVOKED = "revoked"
    ACL_REDACTED = "acl_redacted"
    NOT_IN_RETRIEVAL = "not_in_retrieval"
    RESOLVED = "resolved"


class QuoteCheck(StrEnum):
    """How a citation's quote compares with its source text (contract §3.6)."""

    NONE = "none"
    EXACT = "exact"
    TOLERANT = "tolerant"
    MISMATCH = "mismatch"


class Principal(BaseModel):
    """Who asked: the reader whose visibility bounds every output."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str = Field(min_length=1)
    groups: tuple[str, ...] = ()

    def acl_entries(self) -> frozenset[str]:
        """The ACL entries that admit this principal."""
        return frozenset({f"user:{self.user_id}", *(f"group:{g}" for g in self.groups)})


def resolve_all(
    refs: Iterable[CitationRef],
    evidence: Mapping[CitationRef, EvidenceRecord],
    principal: Principal,
    retrieval: frozenset[CitationRef] | None,
    now: datetime,
) -> dict[CitationRef, Resolution]:
    """Rule 4 (contract §3.4): the first outcome that applies to each ref, in the order given.

    Dangling (no record of the tenant, or an id no store can hold), then revoked (``revoked_at``
    set and not in the future), then ACL-redacted (contract §8: ``None`` admits the tenant, a
    tuple admits exact, case-sensitive matches of the principal's entries), then not in the
    retrieval (``retrieval`` is ``None`` when the envelope bound nothing; an empty set binds every
    citation, so a hidden id is never reported as ``not_in_retrieval``), else resolved. One loop,
    the principal's ACL entries built once (when a record has an ACL at all).
    """
    out: dict[CitationRef, Resolution] = {}
    entries: frozenset[str] | None = None
    get = evidence.get
    dangling, revoked, redacted = Resolution.DANGLING, Resolution.REVOKED, Resolution.ACL_REDACTED
    outside, resolved = Resolution.NOT_IN_RETRIEVAL, Resolution.RESOLVED
    for ref in refs:
        record = get(ref)
        if record is None or not 0 <= ref[1] <= MAX_SOURCE_ID:
            out[ref] = dangling
            continue
        revoked_at = record.revoked_at
        if revoked_at is not None and revoked_at <= now:
            out[ref] = revoked
            continue
        acl = record.acl
        if acl is not None:
            if entries is None:
                entries = principal.acl_entries()
            if entries.isdisjoint(acl):
                out[ref] = redacted
                continue
        out[ref] = outside if retrieval is not None and ref not in retrieval else resolved
    return out


#: Resolutions whose citations are removed from every user-facing output.
HIDDEN = frozenset({Resolution.REVOKED, Resolution.ACL_REDACTED})
