"""The draft envelope (contract §2) and its dead-letter classes.

Decisions:

- Precedence: ``oversized`` (on the byte length, before any parsing); then ``malformed_envelope`` if
  the value is not a JSON object (invalid UTF-8 or JSON, a non-object, a lone surrogate escape);
  then ``unsupported_schema_version`` (missing or not the integer ``1``) *before* any other field
  check, because a later version may change those fields and must stay replayable once the worker
  knows it; then the ``malformed_envelope`` field checks in the contract's order; the record key
  comes last.
- A record without a key (``None``) differs from ``turn_id``: ``malformed_envelope`` (a keyless
  record lands on an arbitrary partition, away from its turn's state).
- Unknown envelope fields (and unknown fields of ``principal`` and retrieval entries) are ignored:
  consumers ignore fields they do not know (§1). ``produced_at`` is optional; a non-string value
  is ignored rather than dead-lettered, since nothing is decided on it.
- ``attempt`` and ``schema_version`` must be JSON integers (``true`` and ``1.0`` are not).
- Rejection messages name the rule only: no model text, no value from the record.
- ``facts`` (rule 7b) is checked after ``retrieval``: absent or null is no facts; otherwise a list
  of objects with non-empty string ``entity``, ``field``, ``tool_name`` and ``tool_call_id``, a
  ``value`` key (any JSON value, null included, but no unreadable number), an integer
  ``iteration`` >= 0 and an optional ``measured_at`` (null, or an ISO 8601 date-time with an
  offset: a naive time cannot be ordered against others). Anything else is ``malformed_envelope``.
- JSON is read by :func:`worker.core.envelope.json_text.loads_json` (its rules are there).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, NamedTuple, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

from worker.core.citations.evidence import CitationRef, EvidenceKind, Principal
from worker.core.claims.typed import Fact, FactWire
from worker.core.contract import ErrorClass
from worker.core.envelope.json_text import Unreadable, loads_json
from worker.core.outputs.validation import DraftKind

SUPPORTED_SCHEMA_VERSIONS = frozenset({1})
_KINDS = frozenset(k.value for k in DraftKind)


class EnvelopeRejection(NamedTuple):
    """A draft that cannot be processed: dead-lettered with this class and message."""

    #: ``malformed_envelope`` | ``unsupported_schema_version`` | ``oversized``
    #: | ``identity_mismatch``
    error_class: ErrorClass
    #: For the ``dlq.error.message`` header: the rule broken, never a value from the record.
    message: str


class Draft(BaseModel):
    """A parsed draft envelope."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int
    draft_id: str
    turn_id: str
    attempt: int
    tenant_id: str
    principal: Principal
    kind: DraftKind
    #: The agent output object, or the model's raw text (canonicalized by the verdict).
    output: dict[str, Any] | str
    #: ``None``: no retrieval list (binds nothing); a tuple, even empty, binds every citation.
    retrieval: tuple[CitationRef, ...] | None = None
    produced_at: str | None = None
    #: Typed values the agent's tools returned this turn (rule 7b); empty when none were sent.
    facts: tuple[Fact, ...] = ()
    #: The W3C ``traceparent`` header of the record, if any (set by the caller).
    traceparent: str | None = None

    def retrieval_set(self) -> frozenset[CitationRef] | None:
        """What ``resolve`` takes."""
        return None if self.retrieval is None else frozenset(self.retrieval)


class WireRef(BaseModel):
    kind: EvidenceKind
    id: int = Field(ge=0)


class WirePrincipal(BaseModel):
    model_config = ConfigDict(extra="allow")

    user_id: str = Field(min_length=1)
    #: Missing or null: no groups.
    groups: list[str] | None = None


class DraftEnvelopeWire(BaseModel):
    """The envelope as producers write it (documentation and JSON Schema only; the parser is
    ``parse_envelope``). Unknown fields are allowed and ignored."""

    model_config = ConfigDict(extra="allow", title="DraftEnvelope")

    schema_version: Literal[1]
    draft_id: str = Field(min_length=1)
    #: Equals the record key.
    turn_id: str = Field(min_length=1)
    #: 0 = first draft, 1 = the regeneration (informative; the worker's turn state decides).
    attempt: int = Field(ge=0)
    tenant_id: str = Field(min_length=1)
    principal: WirePrincipal
    kind: DraftKind
    #: The agent output object, or the model's raw text.
    output: dict[str, Any] | str
    #: Every evidence id the agent was shown this turn; null or absent binds nothing.
    retrieval: list[WireRef] | None = None
    produced_at: str | None = None
    #: Typed values the agent's tools returned this turn; checked against the tenant's declared
    #: claims (contract §3 rule 7b). Null or absent: none.
    facts: list[FactWire] | None = None


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


#: A retrieval item's ``kind`` (the enum's values; anything else, a non-string too, is refused).
_EVIDENCE_KINDS: dict[str, EvidenceKind] = {k.value: k for k in EvidenceKind}


def _retrieval(value: Any) -> tuple[CitationRef, ...] | EnvelopeRejection | None:
    if value is None:
        return None
    bad = EnvelopeRejection(
        ErrorClass.MALFORMED_ENVELOPE, "retrieval is neither null nor a list of {kind, id}"
    )
    if not isinstance(value, list):
        return bad
    refs: list[CitationRef] = []
    for item in value:
        if not isinstance(item, dict):
            return bad
        name, id_ = item.get("kind"), item.get("id")
        kind = _EVIDENCE_KINDS.get(name) if isinstance(name, str) else None  # lists: unhashable
        if kind is None or not _is_int(id_) or id_ < 0:
            return bad
        refs.append(_new(CitationRef, (kind, id_)))
    return tuple(refs)


def _malformed(message: str) -> EnvelopeRejection:
    return EnvelopeRejection(ErrorClass.MALFORMED_ENVELOPE, message)


#: ``tuple.__new__``: a ``Fact`` from checked parts without the NamedTuple's Python ``__new__``.
_new = tuple.__new__
_FACTS_RULE = (
    "facts is neither null nor a list of {entity, field, value, tool_name, tool_call_id,"
    " iteration, measured_at?}"
)
#: JSON scalars: a fact value of one of these types is readable without a walk.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _readable(value: Any) -> bool:
    """No number in ``value`` is one the core refused to materialise."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, Unreadable):
            return False
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return True


def _measured_at(value: Any) -> datetime | EnvelopeRejection | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is not None:
            return moment
    return _malformed(_FACTS_RULE)


def _fact_strings(*values: Any) -> bool:
    return all(type(value) is str and value for value in values)


def _facts(value: Any) -> tuple[Fact, ...] | EnvelopeRejection:
    if value is None:
        return ()
    if not isinstance(value, list):
        return _malformed(_FACTS_RULE)
    facts: list[Fact] = []
    get = dict.get
    for item in value:
        if type(item) is not dict or "value" not in item:
            return _malformed(_FACTS_RULE)
        entity, field = get(item, "entity"), get(item, "field")
        tool, call = get(item, "tool_name"), get(item, "tool_call_id")
        iteration, fact_value = get(item, "iteration"), item["value"]
        if (
            not _fact_strings(entity, field, tool, call)
            or type(iteration) is not int
            or iteration < 0
            or (type(fact_value) not in _SCALARS and not _readable(fact_value))
        ):
            return _malformed(_FACTS_RULE)
        measured_at = _measured_at(get(item, "measured_at"))
        if isinstance(measured_at, EnvelopeRejection):
            return measured_at
        facts.append(_new(Fact, (entity, field, fact_value, tool, call, iteration, measured_at)))
    return tuple(facts)


def _ids_problem(obj: dict[str, Any]) -> EnvelopeRejection | None:
    for name in ("draft_id", "turn_id", "tenant_id"):
        if not _nonempty_str(obj.get(name)):
            return _malformed(f"{name} missing or not a non-empty string")
        if "\x00" in obj[name]:
            # Postgres text cannot hold U+0000: such a tenant could never be looked up, such an
            # id never recorded in the ledger (docs/decisions.md).
            return _malformed(f"{name} contains a NUL character")
    return None


def _principal(principal: Any) -> Principal | EnvelopeRejection:
    if not isinstance(principal, dict) or not _nonempty_str(principal.get("user_id")):
        return _malformed("principal.user_id missing or not a non-empty string")
    groups = principal.get("groups")
    if groups is None:
        groups = []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        return _malformed("principal.groups present but not a list of strings")
    return Principal(user_id=principal["user_id"], groups=tuple(groups))


def parse_envelope(
    key: bytes | None, value: bytes, *, max_bytes: int, traceparent: str | None = None
) -> Draft | EnvelopeRejection:
    """Contract §2: a ``Draft``, or why the record is dead-lettered (precedence: module doc)."""
    if len(value) > max_bytes:
        return EnvelopeRejection(
            ErrorClass.OVERSIZED, f"record value larger than {max_bytes} bytes"
        )
    try:
        obj = loads_json(value)
    except (ValueError, RecursionError):
        return _malformed("record value is not UTF-8 JSON")
    if not isinstance(obj, dict):
        return _malformed("record value is not a JSON object")
    version = obj.get("schema_version")
    if not _is_int(version) or version not in SUPPORTED_SCHEMA_VERSIONS:
        return EnvelopeRejection(
            ErrorClass.UNSUPPORTED_SCHEMA_VERSION,
            "schema_version missing or not one this worker knows",
        )
    ids = _ids_problem(obj)
    if ids is not None:
        return ids
    principal = _principal(obj.get("principal"))
    if isinstance(principal, EnvelopeRejection):
        return principal
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in _KINDS:
        return _malformed("kind is not one of answer, proposal, report")
    output = obj.get("output")
    if not isinstance(output, dict | str):
        return _malformed("output missing or neither an object nor a string")
    attempt = obj.get("attempt")
    if not _is_int(attempt) or attempt < 0:
        return _malformed("attempt missing or not an integer >= 0")
    retrieval = _retrieval(obj.get("retrieval"))
    if isinstance(retrieval, EnvelopeRejection):
        return retrieval
    facts = _facts(obj.get("facts"))
    if isinstance(facts, EnvelopeRejection):
        return facts
    try:
        key_text = None if key is None else key.decode("utf-8")
    except UnicodeDecodeError:
        key_text = None
    if key_text != obj["turn_id"]:
        return _malformed("record key differs from turn_id")
    produced_at = obj.get("produced_at")
    return Draft.model_construct(
        schema_version=version,
        draft_id=obj["draft_id"],
        turn_id=obj["turn_id"],
        attempt=attempt,
        tenant_id=obj["tenant_id"],
        principal=principal,
        kind=DraftKind(kind),
        output=output,
        retrieval=retrieval,
        produced_at=produced_at if isinstance(produced_at, str) else None,
        facts=facts,
        traceparent=traceparent,
    )
