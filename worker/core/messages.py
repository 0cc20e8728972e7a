"""The worker's output messages (contract §3 grounded answer, §4, §5, §6) and their serializer.

Decisions recorded here:

- ``to_json_bytes`` is the one serializer: UTF-8 JSON, keys sorted, no whitespace, and an optional
  field that is ``None`` is *omitted* (never written as ``null``). Inside an agent output dict
  (``output``, ``previous_output``) a ``null`` the agent wrote is kept as is.
- orjson cannot write integers beyond 64 bits. A dangling id may be that large and may survive in a
  ``previous_output``; such a message falls back to the standard library encoder with the same
  settings (sorted keys, compact separators, UTF-8), so the same input still yields the same bytes.
- Ledger ``source_id`` is a decimal *string*: ids may exceed 64 bits (dangling ones), the Postgres
  column is ``numeric``, and a JSON number that large is lossy in most consumers.
- Reasons are capped at ``MAX_REASONS`` (50); past that ``reasons_truncated: true`` is present,
  otherwise the field is absent.
- Could-not-ground reasons carry ``code`` and ``path`` only. The event also echoes the deciding
  draft's ``attempt`` (contract §3.8 "outputs echo the deciding draft's attempt"; an added optional
  field, which §1 allows).
- Timestamps are RFC 3339 UTC with millisecond precision and a ``Z``; a naive datetime is a bug.
- The models are the schema of the wire (``scripts/gen_schemas.py``) and what tools build; the
  hot path does not instantiate them. The verdict keeps claims, citations and ledger rows as plain
  tuples (``ClaimValue``, ``SourceValue``, ``LedgerValue``: the models' fields, the same names)
  and ``message_bytes`` writes a message from its field values directly: the bytes
  ``to_json_bytes`` writes for the model (tested), without ~50 model instances per draft.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, NamedTuple, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field

from worker.core.claim_checks import ClaimCheckOut
from worker.core.contract import LedgerOutcome
from worker.core.evidence import CitationRef, EvidenceKind, Principal, QuoteCheck, Resolution
from worker.core.failures import Failure, FailureCode
from worker.core.outputs import DraftKind

SCHEMA_VERSION = 1
_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseModel)
MAX_REASONS = 50
_setattr = object.__setattr__
#: Per model class: its field names in declaration order, and the defaults of optional fields.
_LAYOUT: dict[type[BaseModel], tuple[tuple[str, ...], dict[str, Any], frozenset[str]]] = {}
_SORTED = orjson.OPT_SORT_KEYS


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CitationKey(_Message):
    """A visible citation of a claim: kind and id only."""

    kind: EvidenceKind
    id: int = Field(ge=0)


class GroundingStatus(StrEnum):
    """Status of a claim in a published answer (omitted units are simply absent)."""

    CITED = "cited"
    HEDGED = "hedged"


class ClaimOut(_Message):
    """One claim unit of a grounded answer, after redaction."""

    text: str
    citations: tuple[CitationKey, ...]
    grounding_status: GroundingStatus


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


class LedgerRow(_Message):
    """One distinct cited (kind, id): metadata only, never text, title, quote or snippet."""

    kind: EvidenceKind
    #: Decimal string: the id may exceed 64 bits.
    source_id: str = Field(pattern=r"^[0-9]+$")
    resolution: Resolution
    quote_check: QuoteCheck
    paths: tuple[str, ...]


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


def _layout(cls: type[BaseModel]) -> tuple[tuple[str, ...], dict[str, Any], frozenset[str]]:
    layout = _LAYOUT.get(cls)
    if layout is None:
        fields = cls.model_fields
        defaults = {n: f.get_default() for n, f in fields.items() if not f.is_required()}
        layout = _LAYOUT[cls] = (tuple(fields), defaults, frozenset(fields))
    return layout


def trusted(cls: type[_M], /, **values: Any) -> _M:
    """``cls.model_construct(**values)`` for values the core built and checked itself, cheaper.

    Same instance as ``model_construct`` for these plain models (no aliases, no post-init, no
    private attributes): fields in declaration order, defaults filled in, ``model_fields_set`` the
    names given. pydantic's version re-derives all of that per call, which made it the largest
    single cost of a report with hundreds of citations.
    """
    names, defaults, _ = _layout(cls)
    model = cls.__new__(cls)
    _setattr(model, "__dict__", {n: values[n] if n in values else defaults[n] for n in names})
    _setattr(model, "__pydantic_fields_set__", set(values))
    _setattr(model, "__pydantic_extra__", None)
    _setattr(model, "__pydantic_private__", None)
    return model


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
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def to_json_bytes(model: BaseModel) -> bytes:
    """The canonical bytes of a message: sorted keys, compact, ``None`` optionals omitted."""
    # Python mode, not JSON mode: orjson writes the str enums and tuples itself, the same bytes,
    # without pydantic's per-enum ``.value`` round trip (a third of the cost of a message).
    return dumps(model.model_dump(exclude_none=True))


def dumps(data: Any) -> bytes:
    """The canonical bytes of a message's plain data (its ``model_dump(exclude_none=True)``)."""
    try:
        return orjson.dumps(data, option=_SORTED)
    except TypeError:
        # An integer beyond 64 bits (a dangling id in a previous output): same layout, stdlib.
        return json.dumps(
            data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode("utf-8")


# --- plain values and direct serialization (see the module docstring) ---------------------------


class ClaimValue(NamedTuple):
    """A ``ClaimOut``'s fields; ``citations`` are the refs (a ``CitationKey`` is kind and id)."""

    text: str
    citations: tuple[CitationRef, ...]
    grounding_status: GroundingStatus


class SourceValue(NamedTuple):
    """A ``CitationOut``'s fields."""

    kind: EvidenceKind
    id: int
    title: str | None
    quote: str | None
    quote_check: QuoteCheck


class LedgerValue(NamedTuple):
    """A ``LedgerRow``'s fields."""

    kind: EvidenceKind
    source_id: str
    resolution: Resolution
    quote_check: QuoteCheck
    paths: tuple[str, ...]


def message_bytes(cls: type[BaseModel], /, **values: Any) -> bytes:
    """``to_json_bytes(trusted(cls, **values))`` without the model, for values in wire form.

    Nested values must already be what ``model_dump(exclude_none=True)`` makes of them (the
    ``*_wire`` helpers below); optional fields left out take their defaults, ``None`` is omitted.
    """
    names, defaults, known = _layout(cls)
    if not values.keys() <= known:
        raise TypeError(f"unknown fields for {cls.__name__}: {sorted(values.keys() - known)}")
    data: dict[str, Any] = {}
    for name in names:
        value = values[name] if name in values else defaults[name]
        if value is not None:
            data[name] = value
    return dumps(data)


def claims_wire(claims: Sequence[ClaimValue]) -> list[dict[str, Any]]:
    """``ClaimOut`` dumps of ``claims``."""
    keys: dict[CitationRef, dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for text, refs, status in claims:
        cited: list[dict[str, Any]] = []
        for ref in refs:
            key = keys.get(ref)
            if key is None:
                key = keys[ref] = {"kind": ref[0], "id": ref[1]}
            cited.append(key)
        out.append({"text": text, "citations": cited, "grounding_status": status})
    return out


def sources_wire(sources: Sequence[SourceValue]) -> list[dict[str, Any]]:
    """``CitationOut`` dumps of ``sources`` (``title`` and ``quote`` omitted when ``None``)."""
    out: list[dict[str, Any]] = []
    for kind, ident, title, quote, check in sources:
        item: dict[str, Any] = {"kind": kind, "id": ident, "quote_check": check}
        if title is not None:
            item["title"] = title
        if quote is not None:
            item["quote"] = quote
        out.append(item)
    return out


def ledger_wire(rows: Sequence[LedgerValue]) -> list[dict[str, Any]]:
    """``LedgerRow`` dumps of ``rows`` (no optional field)."""
    return [
        {"kind": k, "source_id": s, "resolution": r, "quote_check": q, "paths": p}
        for k, s, r, q, p in rows
    ]


def failure_wire(failure: Failure) -> dict[str, Any]:
    """``Failure`` dump: its fields that are not ``None``."""
    return {k: v for k, v in failure.__dict__.items() if v is not None}


def reason_wire(code: FailureCode, path: str | None) -> dict[str, Any]:
    """``ReasonOut`` dump."""
    return {"code": code} if path is None else {"code": code, "path": path}


def principal_wire(principal: Principal) -> dict[str, Any]:
    """``Principal`` dump."""
    return {"user_id": principal.user_id, "groups": principal.groups}
