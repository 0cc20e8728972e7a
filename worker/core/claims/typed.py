"""Typed claims (contract §3 rule 7b): declared answer fields against settled tool facts.

Token grounding cannot catch a false claim assembled from real values (every cited observation
exists, yet the proposal flags an entity ``cleared`` while the agent's own tool said ``review``).
A tenant declares which answer field states which fact; the agent's tools report typed facts on
the envelope; ``check_claims`` joins them. It reads only the schema-validated output object, never
prose, and never infers a claim: no declaration, no check.

Each declared claim gets exactly one disposition, the first that applies:

- ``omitted``: the output lacks the answer field;
- ``uncollected``: no fact for (entity, field), or the settling fact's value is null or
  ``"unknown"`` (incomparable: never an accusation);
- ``advisory``: the output says null or ``"unknown"`` where a value is settled (reported, not a
  failure: declining to claim is softer than claiming wrong);
- ``supported``: equal to the settling value;
- ``contradicted``: anything else, ``superseded`` when it equals an earlier fact.

Decisions (also in ``docs/decisions.md``):

- Dot paths are identifier segments (``patch.flag``), checked when the policy is loaded: every
  segment must be a field of some agent-output schema, and a path never passes through an array
  (``claims.text`` is refused: which item would it mean?). A value that is itself an array or an
  object is compared whole. At check time a path that meets anything but an object is absent.
- ``{"from": path}`` entities must be a non-empty string in the output; otherwise the claim has no
  entity to join on: ``uncollected`` (or ``omitted`` when the answer field is absent too).
- Latest settles: highest ``iteration``, then latest ``measured_at`` (a fact without one is older
  than any fact with one, so the order is total), then last in the list.
- Equality is JSON equality: numbers by value (``30`` equals ``30.0``), ``true`` is not ``1``,
  object key order is irrelevant, strings exact and case-sensitive (``"Unknown"`` is a value).
  The one leniency, at the top level only: a string that is exactly the canonical decimal form of
  a numeric settled value equals it (``"30"`` for ``30`` and for ``30.0``, ``"0.5"`` for ``0.5``;
  no exponent, sign ``+``, leading or trailing zeros). Never a number for a string, never
  ``"true"`` for ``true``.
- Every string these values carry out (entity, the settled value in a detail) has its citation
  tokens removed: a fact or an entity id could quote a source the reader may not see.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from functools import cached_property
from typing import Annotated, Any, NamedTuple

import orjson
from pydantic import BaseModel, ConfigDict, Field

from worker.core.citations.redaction import remove_all_tokens
from worker.core.contract import Disposition
from worker.core.failures import Failure, FailureCode
from worker.core.messages.models import ClaimCheckOut
from worker.core.messages.wire import wire
from worker.core.outputs.dot_paths import DotPath

#: The settled value is cut to this many code points in a regenerate request's detail.
DETAIL_VALUE_CHARS = 200
_UNKNOWN = "unknown"
_MISSING: Any = object()
_SCALARS = frozenset({str, int, float, bool, type(None)})


# --- the policy's declarations and the envelope's facts ----------------------------------------


class EntityFrom(BaseModel):
    """An entity read from the output: ``{"from": "patch.entity_id"}``."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    #: Dot path of a string field of the output that names the entity.
    from_: DotPath = Field(alias="from")


class DeclaredClaim(BaseModel):
    """One typed claim a tenant declares: this answer field states that fact of that entity."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Dot path into the schema-validated output, e.g. ``patch.flag``.
    answer_field: DotPath
    #: ``"vessel:aurora"``, or ``{"from": "patch.entity_id"}``.
    entity: Annotated[str, Field(min_length=1)] | EntityFrom
    #: The fact's field, e.g. ``flag``.
    field: Annotated[str, Field(min_length=1)]

    @cached_property
    def plan(self) -> _Plan:
        """The claim made ready to check: split paths, the literal entity as shown."""
        if isinstance(self.entity, str):
            entity, entity_path = self.entity, None
        else:
            entity, entity_path = None, tuple(self.entity.from_.split("."))
        return _Plan(
            self.answer_field,
            tuple(self.answer_field.split(".")),
            self.field,
            entity,
            None if entity is None else _shown(entity),
            entity_path,
        )


class _Plan(NamedTuple):
    answer_field: str
    path: tuple[str, ...]
    field: str
    #: A literal entity (raw, and with tokens removed); ``None`` for ``{"from": …}``.
    entity: str | None
    shown: str | None
    entity_path: tuple[str, ...] | None


class Fact(NamedTuple):
    """One typed value an agent's tool returned this turn (the envelope's ``facts[]``)."""

    entity: str
    field: str
    #: Any JSON value, null included.
    value: Any
    tool_name: str
    tool_call_id: str
    iteration: int
    measured_at: datetime | None = None


class FactWire(BaseModel):
    """A ``facts[]`` entry as producers write it (documentation and JSON Schema only; the parser
    is ``worker.core.envelope.draft.parse_envelope``). Unknown fields are ignored."""

    model_config = ConfigDict(extra="allow", title="Fact")

    entity: str = Field(min_length=1)
    field: str = Field(min_length=1)
    #: Any JSON value; null and ``"unknown"`` mean the tool could not tell.
    value: Any
    tool_name: str = Field(min_length=1)
    tool_call_id: str = Field(min_length=1)
    #: The agent loop's iteration that called the tool (higher settles).
    iteration: int = Field(ge=0)
    #: RFC 3339 with an offset; breaks ties between facts of one iteration.
    measured_at: datetime | None = None


# --- the check ---------------------------------------------------------------------------------


class ClaimCheck(NamedTuple):
    """One declared claim's disposition."""

    answer_field: str
    #: The entity joined on (tokens removed); ``None`` when ``{"from": …}`` named none.
    entity: str | None
    field: str
    disposition: Disposition
    #: ``contradicted`` and equal to an earlier (non-settling) fact.
    superseded: bool = False
    #: The settling fact, when there is one (only the regenerate request's detail names it).
    settled: Fact | None = None


def _shown(entity: str) -> str:
    """An entity as it may leave the worker: no citation token (they all start with ``[``)."""
    return remove_all_tokens(entity) if "[" in entity else entity


def _get(output: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = output
    for segment in path:
        if not isinstance(node, dict):
            return _MISSING
        node = node.get(segment, _MISSING)
        if node is _MISSING:
            return _MISSING
    return node


def canonical_decimal(number: int | float) -> str:
    """``30`` and ``30.0`` -> ``"30"``, ``0.5`` -> ``"0.5"``, ``1e21`` -> ``"1" + 21 zeros``."""
    if isinstance(number, int):
        return str(number)
    text = format(Decimal(repr(number)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


_NUMBERS = frozenset({int, float})


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, booleans apart from numbers, objects unordered.

    Values are what a JSON parser builds (exact ``dict``, ``list``, ``str``, ``int``, ``float``,
    ``bool``, ``None``), so the type decides: ``bool`` is its own type here, never an ``int``.
    """
    kind = type(a)
    if kind is type(b):
        if kind in _SCALARS:
            return bool(a == b)
        if kind is list:
            return len(a) == len(b) and all(map(json_equal, a, b))
        if kind is dict:
            return a.keys() == b.keys() and all(json_equal(v, b[k]) for k, v in a.items())
        return False
    return kind in _NUMBERS and type(b) in _NUMBERS and bool(a == b)


def claim_equals(claimed: Any, settled: Any) -> bool:
    """JSON equality plus the one leniency: ``"30"`` claims ``30`` (never the other way)."""
    if type(claimed) is str and type(settled) in _NUMBERS:
        return claimed == canonical_decimal(settled)
    return json_equal(claimed, settled)


def _facts_by_key(facts: Sequence[Fact]) -> dict[tuple[str, str], list[Fact]]:
    """The facts of each (entity, field), in list order."""
    by_key: dict[tuple[str, str], list[Fact]] = {}
    for fact in facts:
        key = (fact.entity, fact.field)
        found = by_key.get(key)
        if found is None:
            by_key[key] = [fact]
        else:
            found.append(fact)
    return by_key


def settling_fact(candidates: Sequence[Fact]) -> Fact:
    """The latest: highest ``iteration``, then latest ``measured_at`` (none is older than any),
    then last in the list (``>=`` lets a later equal one win)."""
    settled = candidates[0]
    best = (settled.iteration, settled.measured_at is not None, settled.measured_at)
    for fact in candidates[1:]:
        # Tuples compare element by element: two ``None`` times are equal, never ordered, and a
        # ``None`` never meets a datetime because the flag before it differs.
        rank = (fact.iteration, fact.measured_at is not None, fact.measured_at)
        if rank >= best:
            settled, best = fact, rank
    return settled


#: ``tuple.__new__``: a ``ClaimCheck`` from its parts without the NamedTuple's Python ``__new__``.
_new = tuple.__new__


def _compare(head: tuple[str, str | None, str], claimed: Any, candidates: list[Fact]) -> ClaimCheck:
    """The dispositions after ``omitted``, given the facts of the claim's (entity, field)."""
    settled = candidates[0] if len(candidates) == 1 else settling_fact(candidates)
    value = settled.value
    if value is None or value == _UNKNOWN:
        return _new(ClaimCheck, (*head, Disposition.UNCOLLECTED, False, None))
    if claimed is None or claimed == _UNKNOWN:
        return _new(ClaimCheck, (*head, Disposition.ADVISORY, False, settled))
    if claim_equals(claimed, value):
        return _new(ClaimCheck, (*head, Disposition.SUPPORTED, False, settled))
    superseded = any(claim_equals(claimed, f.value) for f in candidates if f is not settled)
    return _new(ClaimCheck, (*head, Disposition.CONTRADICTED, superseded, settled))


def check_claims(
    claims: Sequence[DeclaredClaim], facts: Sequence[Fact], output: Mapping[str, Any]
) -> tuple[ClaimCheck, ...]:
    """Rule 7b: one ``ClaimCheck`` per declared claim, in declared order. Pure; total."""
    if not claims:
        return ()
    by_key: dict[tuple[str, str], list[Fact]] | None = None
    named: dict[tuple[str, ...], tuple[str | None, str | None]] = {}
    out: list[ClaimCheck] = []
    for claim in claims:
        answer_field, path, field, entity, shown, entity_path = claim.plan
        if entity_path is not None:
            found = named.get(entity_path)
            if found is None:
                value = _get(output, entity_path)
                name = value if isinstance(value, str) and value else None
                found = named[entity_path] = (name, None if name is None else _shown(name))
            entity, shown = found
        claimed = _get(output, path)
        head = (answer_field, shown, field)
        if claimed is _MISSING:
            out.append(_new(ClaimCheck, (*head, Disposition.OMITTED, False, None)))
            continue
        if entity is not None:
            if by_key is None:
                by_key = _facts_by_key(facts)
            candidates = by_key.get((entity, field))
            if candidates:
                out.append(_compare(head, claimed, candidates))
                continue
        out.append(_new(ClaimCheck, (*head, Disposition.UNCOLLECTED, False, None)))
    return tuple(out)


# --- what the checks become --------------------------------------------------------------------


def _render(value: Any) -> str:
    try:
        text = orjson.dumps(value).decode("utf-8")
    except TypeError:  # an integer beyond 64 bits
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = remove_all_tokens(text)
    return text if len(text) <= DETAIL_VALUE_CHARS else text[:DETAIL_VALUE_CHARS] + "…"


def contradiction_detail(check: ClaimCheck) -> str:
    """For the regenerate request only: the settled value (the agent's own tool output)."""
    fact = check.settled
    if fact is None:  # pragma: no cover - a contradiction always has a settling fact
        return "contradicts the settled fact"
    earlier = "equals an earlier fact, but " if check.superseded else ""
    return (
        f"{earlier}the latest fact for {check.entity} {remove_all_tokens(check.field)} is "
        f"{_render(fact.value)} ({remove_all_tokens(fact.tool_name)}, call "
        f"{remove_all_tokens(fact.tool_call_id)}, iteration {fact.iteration})"
    )


def contradictions(checks: Sequence[ClaimCheck]) -> list[Failure]:
    """``contradicted_claim`` failures, path the answer field, in declared order."""
    return [
        Failure(
            code=FailureCode.CONTRADICTED_CLAIM,
            path=c.answer_field,
            detail=contradiction_detail(c),
        )
        for c in checks
        if c.disposition is Disposition.CONTRADICTED
    ]


def claim_checks_wire(checks: Sequence[ClaimCheck]) -> list[dict[str, Any]]:
    """``ClaimCheckOut`` dumps (``entity`` and ``superseded`` omitted when unset)."""
    return wire(ClaimCheckOut, checks)
