"""A cheap proof that an output has its schema's shape, so pydantic need not look (contract §3.2).

``proves_valid(kind, obj)`` is ``True`` only when the pydantic model of
``worker.core.outputs.schemas`` certainly accepts ``obj``; ``False`` means "ask pydantic", which
also writes the failures. The proof is msgspec's ``convert`` into closed structs that mirror the
models (unknown fields refused, strict types, the same bounds and literals; fields in any order),
plus what msgspec does not check the way pydantic's strict mode does:

- containers: msgspec takes any sequence for a list and any mapping for an object, pydantic only
  ``list`` and ``dict``: every list and object position of the schema must be exactly a ``list`` or
  a ``dict`` (a subclass goes to pydantic, which may accept it: slower, never wrong);
- ``float`` without bounds (``base_rates[].value``) must be finite (the bounded ones are: NaN
  fails every bound);
- an int of more than 64 bits (an id's 1,000-digit limit) never reaches here: the caller passes
  only outputs orjson could write, and orjson refuses such ints;
- ``timeline[].at`` must parse with ``datetime.fromisoformat``, as the model's validator does.

``tests/unit/core/outputs/test_output_shapes.py`` checks, on random valid and invalid outputs, that
``validate_output`` gives exactly what the pydantic path gives. Why msgspec, with numbers:
``docs/decisions.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from itertools import chain
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

_Id = Annotated[int, Meta(ge=0)]
_Confidence = Annotated[float, Meta(ge=0.0, le=1.0)]
_Kind = Literal["OBS", "DOC", "EVT"]


class _Closed(Struct, forbid_unknown_fields=True, kw_only=True):
    """Every struct refuses unknown fields (inherited)."""


class _Citation(_Closed):
    kind: _Kind
    id: _Id


class _QuotedCitation(_Closed):
    kind: _Kind
    id: _Id
    quote: str | None = None


class _Claim(_Closed):
    text: str
    citations: list[_Citation] = []
    confidence: _Confidence | None = None


class _Withheld(_Closed):
    reason: str
    metric: str | None = None


class _Answer(_Closed):
    answer_markdown: str
    citations: list[_QuotedCitation] = []
    claims: list[_Claim] = []
    tool_calls_made: list[str] = []
    withheld: list[_Withheld] = []
    no_grounding: bool = False


class _Section(_Closed):
    heading: str
    body_markdown: str
    citations: list[_Citation] = []


class _TimelineEntry(_Closed):
    at: str
    text: str
    citations: list[_Citation] = []


class _BaseRate(_Closed):
    metric: str
    value: float
    sample_n: Annotated[int, Meta(ge=0)]
    interval: str | None = None


class _Report(_Closed):
    title: str
    status: str
    sections: list[_Section] = []
    timeline: list[_TimelineEntry] = []
    base_rates: list[_BaseRate] = []


class _Grounding(_Closed):
    reasoning: str
    observations: list[_Id] = []


class _CaseUpdatePatch(_Closed):
    case_id: str
    status: Literal["open", "monitoring", "escalated", "closed"] | None = None
    priority: Literal["low", "medium", "high", "critical"] | None = None
    note: str | None = None


class _ReportSectionPatch(_Closed):
    report_id: str
    heading: str
    body_markdown: str
    section_index: Annotated[int, Meta(ge=0)] | None = None


class _FieldMapping(_Closed):
    source_field: str
    target_field: str


class _SourceMappingPatch(_Closed):
    source_id: str
    entity_type: str
    mappings: Annotated[list[_FieldMapping], Meta(min_length=1)]


class _EntityFlagPatch(_Closed):
    entity_id: str
    flag: Literal["watch", "review", "cleared"]
    reason: str


class _AdjudicationPatch(_Closed):
    subject_id: str
    decision: Literal["confirm", "reject", "merge", "defer"]
    rationale: str
    merge_into: str | None = None


class _Proposal(_Closed, tag_field="proposal_type", kw_only=True):
    summary: str
    grounding: _Grounding
    confidence: _Confidence
    gate: Literal["Q8", "Q9", "Q10"]
    auto_appliable: bool = False


class _CaseUpdateProposal(_Proposal, tag="case_update", kw_only=True):
    patch: _CaseUpdatePatch


class _ReportSectionProposal(_Proposal, tag="report_section", kw_only=True):
    patch: _ReportSectionPatch


class _SourceMappingProposal(_Proposal, tag="source_mapping", kw_only=True):
    patch: _SourceMappingPatch


class _EntityFlagProposal(_Proposal, tag="entity_flag", kw_only=True):
    patch: _EntityFlagPatch


class _AdjudicationProposal(_Proposal, tag="adjudication", kw_only=True):
    patch: _AdjudicationPatch


_AnyProposal = (
    _CaseUpdateProposal
    | _ReportSectionProposal
    | _SourceMappingProposal
    | _EntityFlagProposal
    | _AdjudicationProposal
)


#: The one type a set of exact types may hold (``set(map(type, xs)) <= _ONLY_DICT``: every item
#: is exactly a dict, the types read in C rather than by a generator step per item).
_ONLY_DICT = frozenset({dict})
_ONLY_LIST = frozenset({list})


def _dicts(value: Any) -> bool:
    """Exactly a list of exactly dicts."""
    return type(value) is list and set(map(type, value)) <= _ONLY_DICT


def _cited_items(items: list[dict[str, Any]]) -> bool:
    """Each item's ``citations``, if it has one, is exactly a list of exactly dicts."""
    lists = [item["citations"] for item in items if "citations" in item]
    return set(map(type, lists)) <= _ONLY_LIST and (
        set(map(type, chain.from_iterable(lists))) <= _ONLY_DICT
    )


def _answer(obj: dict[str, Any]) -> bool:
    claims = obj.get("claims", [])
    return (
        all(_dicts(obj[key]) for key in ("citations", "claims", "withheld") if key in obj)
        and type(obj.get("tool_calls_made", [])) is list
        and _cited_items(claims)
    )


def _report(obj: dict[str, Any]) -> bool:
    sections, timeline = obj.get("sections", []), obj.get("timeline", [])
    rates = obj.get("base_rates", [])
    if not (_dicts(sections) and _dicts(timeline) and _dicts(rates)):
        return False
    if not (_cited_items(sections) and _cited_items(timeline)):
        return False
    if not all(math.isfinite(rate["value"]) for rate in rates):
        return False
    try:
        for entry in timeline:
            datetime.fromisoformat(entry["at"])
    except ValueError:
        return False
    return True


def _proposal(obj: dict[str, Any]) -> bool:
    grounding, patch = obj["grounding"], obj["patch"]
    return (
        type(grounding) is dict
        and type(patch) is dict
        and type(grounding.get("observations", [])) is list
        and ("mappings" not in patch or _dicts(patch["mappings"]))
    )


_SHAPES: dict[str, tuple[Any, Callable[[dict[str, Any]], bool]]] = {
    "answer": (_Answer, _answer),
    "report": (_Report, _report),
    "proposal": (_AnyProposal, _proposal),
}


def proves_valid(kind: str, obj: dict[str, Any]) -> bool:
    """Whether ``obj`` (a ``dict`` orjson can write) certainly passes ``kind``'s pydantic model."""
    shape = _SHAPES.get(kind)
    if shape is None:
        return False
    struct, containers = shape
    try:
        msgspec.convert(obj, struct)
    except msgspec.ValidationError:
        return False
    return containers(obj)
