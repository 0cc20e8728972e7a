"""The three agent-output schemas (seed 000) and their validation (contract §3.2).

Models are closed (``extra="forbid"``: a field the validator does not traverse could carry an
unchecked citation) and strict (no ``"1"`` -> 1, no ``true`` as an integer, no NaN/Infinity).

Decisions:

- Analyst answer: ``answer_markdown`` is required; ``citations``, ``claims``, ``tool_calls_made``,
  ``withheld`` and ``no_grounding`` are optional with empty/false defaults.
- Report draft: ``title`` and ``status`` are required (an agent must affirm ``"DRAFT"``; a missing
  status is ``schema_invalid``, a string other than ``DRAFT`` is ``published_status``);
  ``sections``, ``timeline`` and ``base_rates`` default to empty.
- Proposal: every field but ``auto_appliable`` (default false) is required.
- A structured citation is ``{kind, id}``; ``quote`` is allowed only in the top-level
  ``citations[]`` of an answer (where the seed shows it); elsewhere it is an unknown field.
  ``grounding.observations`` is the one list of bare ids (OBS). An id has at most 1,000 digits.
- ``timeline[].at`` must parse as an ISO 8601 date-time.
- Patch shapes, a discriminated union on ``proposal_type`` (all closed; free text is a string,
  and every string of an output is scanned for citation tokens; no free-form dict keys, which
  would escape that scan; no structured citation arrays, whose path the extractor does not walk):

  ================  ==============================================================================
  case_update       ``{case_id: str, status?: open|monitoring|escalated|closed,
                    priority?: low|medium|high|critical, note?: str}``
  report_section    ``{report_id: str, section_index?: int>=0 (absent = append), heading: str,
                    body_markdown: str}``
  source_mapping    ``{source_id: str, entity_type: str,
                    mappings: [{source_field: str, target_field: str}] (at least one)}``
  entity_flag       ``{entity_id: str, flag: watch|review|cleared, reason: str}``
  adjudication      ``{subject_id: str, decision: confirm|reject|merge|defer, rationale: str,
                    merge_into?: str}``
  ================  ==============================================================================

- ``validate_output`` returns the agent's *own* dict (validated, not a normalized dump), so the
  published output looks like what the agent sent minus redactions; the model is kept alongside.
- Nesting is checked on the raw object first, iteratively (the output object is level 1, a
  container at level 65 fails), so deep input cannot exhaust the stack.
- More than 1,000 distinct citations is counted by the verdict after extraction (it has the
  distinct set anyway); see ``worker.core.verdict``.
- Paths use the contract's style (``timeline[2].text``). A key the agent invented appears in a
  path only if it is a plain identifier of at most 64 characters, else as ``<field>``: paths reach
  the could-not-ground event, which must carry no model text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, NamedTuple

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from worker.core.failures import Failure, FailureCode
from worker.core.lookalikes import json_may_hold

MAX_DEPTH = 64
#: Ids of 1,001 digits or more are ``schema_invalid``.
ID_LIMIT = 10**1000


class DraftKind(StrEnum):
    """The three agent outputs a draft may carry."""

    ANSWER = "answer"
    PROPOSAL = "proposal"
    REPORT = "report"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)


def _id_digits(value: int) -> int:
    if value >= ID_LIMIT:
        raise ValueError("an id has at most 1,000 digits")
    return value


def _iso8601(value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("not an ISO 8601 date-time") from None
    return value


SourceId = Annotated[int, Field(ge=0), AfterValidator(_id_digits)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
Kind = Literal["OBS", "DOC", "EVT"]


class Citation(_Strict):
    """A structured citation ``{kind, id}``; a bare number is never one."""

    kind: Kind
    id: SourceId


class QuotedCitation(Citation):
    """A top-level ``citations[]`` entry of an answer: may carry the quoted source words."""

    quote: str | None = None


class Claim(_Strict):
    """``claims[]`` of an analyst answer."""

    text: str
    citations: list[Citation] = []
    confidence: Confidence | None = None


class Withheld(_Strict):
    """Something the agent deliberately left out, and why."""

    reason: str
    metric: str | None = None


class AnalystAnswer(_Strict):
    """Analyst answer (seed 000)."""

    answer_markdown: str
    citations: list[QuotedCitation] = []
    claims: list[Claim] = []
    tool_calls_made: list[str] = []
    withheld: list[Withheld] = []
    no_grounding: bool = False


class Section(_Strict):
    """A report section."""

    heading: str
    body_markdown: str
    citations: list[Citation] = []


class TimelineEntry(_Strict):
    """A report timeline entry."""

    at: Annotated[str, AfterValidator(_iso8601)]
    text: str
    citations: list[Citation] = []


class BaseRate(_Strict):
    """A base rate quoted by a report."""

    metric: str
    value: float
    sample_n: Annotated[int, Field(ge=0)]
    interval: str | None = None


class ReportDraft(_Strict):
    """After-action / report draft (seed 000). ``status`` is checked after the schema."""

    title: str
    sections: list[Section] = []
    timeline: list[TimelineEntry] = []
    base_rates: list[BaseRate] = []
    status: str


class Grounding(_Strict):
    """A proposal's support: reasoning text and bare OBS ids."""

    reasoning: str
    observations: list[SourceId] = []


class CaseUpdatePatch(_Strict):
    """Change a case's status, priority, or add a note."""

    case_id: str
    status: Literal["open", "monitoring", "escalated", "closed"] | None = None
    priority: Literal["low", "medium", "high", "critical"] | None = None
    note: str | None = None


class ReportSectionPatch(_Strict):
    """Insert (or replace, with ``section_index``) one section of a report."""

    report_id: str
    section_index: Annotated[int, Field(ge=0)] | None = None
    heading: str
    body_markdown: str


class FieldMapping(_Strict):
    """One source field mapped onto one entity field."""

    source_field: str
    target_field: str


class SourceMappingPatch(_Strict):
    """Map a source's fields onto an entity type."""

    source_id: str
    entity_type: str
    mappings: Annotated[list[FieldMapping], Field(min_length=1)]


class EntityFlagPatch(_Strict):
    """Flag an entity."""

    entity_id: str
    flag: Literal["watch", "review", "cleared"]
    reason: str


class AdjudicationPatch(_Strict):
    """Adjudicate a subject (merge needs ``merge_into``)."""

    subject_id: str
    decision: Literal["confirm", "reject", "merge", "defer"]
    rationale: str
    merge_into: str | None = None


class _ProposalBase(_Strict):
    summary: str
    grounding: Grounding
    confidence: Confidence
    gate: Literal["Q8", "Q9", "Q10"]
    auto_appliable: bool = False


class CaseUpdateProposal(_ProposalBase):
    """``proposal_type: case_update``."""

    proposal_type: Literal["case_update"]
    patch: CaseUpdatePatch


class ReportSectionProposal(_ProposalBase):
    """``proposal_type: report_section``."""

    proposal_type: Literal["report_section"]
    patch: ReportSectionPatch


class SourceMappingProposal(_ProposalBase):
    """``proposal_type: source_mapping``."""

    proposal_type: Literal["source_mapping"]
    patch: SourceMappingPatch


class EntityFlagProposal(_ProposalBase):
    """``proposal_type: entity_flag``."""

    proposal_type: Literal["entity_flag"]
    patch: EntityFlagPatch


class AdjudicationProposal(_ProposalBase):
    """``proposal_type: adjudication``."""

    proposal_type: Literal["adjudication"]
    patch: AdjudicationPatch


Proposal = Annotated[
    CaseUpdateProposal
    | ReportSectionProposal
    | SourceMappingProposal
    | EntityFlagProposal
    | AdjudicationProposal,
    Field(discriminator="proposal_type"),
]

PROPOSAL_TYPES = frozenset(
    {"case_update", "report_section", "source_mapping", "entity_flag", "adjudication"}
)

_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    DraftKind.ANSWER: TypeAdapter(AnalystAnswer),
    DraftKind.PROPOSAL: TypeAdapter(Proposal),
    DraftKind.REPORT: TypeAdapter(ReportDraft),
}

#: kind -> top-level field names (the canonicalizer's wrapper-key rule).
SCHEMA_FIELDS: Mapping[str, frozenset[str]] = {
    DraftKind.ANSWER.value: frozenset(AnalystAnswer.model_fields),
    DraftKind.PROPOSAL.value: frozenset(CaseUpdateProposal.model_fields),
    DraftKind.REPORT.value: frozenset(ReportDraft.model_fields),
}


class ValidatedOutput(NamedTuple):
    """A structurally valid output: the agent's own dict, its model, and rule-2 findings
    that do not stop the verdict (``published_status``, ``auto_apply_not_allowed``)."""

    kind: str
    value: dict[str, Any]
    model: BaseModel
    failures: tuple[Failure, ...]
    #: Some string holds a run of more than 1,000 digits (a possible overlong citation id).
    long_digit_run: bool = False
    #: Some string may hold a citation look-alike (``worker.core.lookalikes``); ``False`` is sure.
    maybe_lookalike: bool = True


#: The shortest token with an id of over 1,000 digits: ``[OBS-`` + 1,001 digits + ``]``.
_OVERLONG_TOKEN = 1007
#: 1,001 digits starting a digit run (the look-behind keeps the search linear).
_DIGIT_RUN = re.compile(r"(?<![0-9])[0-9]{1001}")
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_ZERO_RUN = b"0" * 1001


def _schema_keys() -> frozenset[str]:
    """Every field name of every agent-output model (and the proposal-type tags)."""
    names: set[str] = set(PROPOSAL_TYPES)
    todo: list[type[BaseModel]] = [_Strict]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        for name, info in cls.model_fields.items():
            names.add(info.alias or name)
    return frozenset(names)


_SCHEMA_KEYS = _schema_keys()


def key_label(key: object) -> str:
    """A dict key as it may appear in a path: a field name of the schemas, else ``<field>``.

    A key the agent invented is model text (``Falcon_priced_4_2B``): paths reach the
    could-not-ground event, which carries codes and paths only.
    """
    if isinstance(key, str) and key in _SCHEMA_KEYS:
        return key
    return "<field>"


def format_path(loc: tuple[int | str, ...]) -> str:
    """``("timeline", 2, "text")`` -> ``timeline[2].text``."""
    out: list[str] = []
    for part in loc:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            label = key_label(part)
            out.append(f".{label}" if out else label)
    return "".join(out)


def depth_failure(obj: Any, limit: int = MAX_DEPTH) -> Failure | None:
    """The first container nested deeper than ``limit`` (``obj`` is level 1), iteratively."""
    return _scan(obj, limit)[0]


def _scan(obj: Any, limit: int = MAX_DEPTH) -> tuple[Failure | None, bool]:
    """``depth_failure``, and whether some string holds a run of over 1,000 digits (which an
    overlong citation id needs), in one iterative walk."""
    longest = False
    stack: list[tuple[Any, int, tuple[int | str, ...]]] = [(obj, 1, ())]
    while stack:
        node, level, loc = stack.pop()
        if level > limit:
            failure = Failure(
                code=FailureCode.SCHEMA_INVALID,
                path=format_path(loc) or None,
                detail=f"nesting deeper than {limit} levels",
            )
            return failure, longest
        items: Any = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(child, str):
                if len(child) >= _OVERLONG_TOKEN and _DIGIT_RUN.search(child):
                    longest = True
            elif isinstance(child, dict | list):
                stack.append((child, level + 1, (*loc, key)))
    return None, longest


def _schema_failures(kind: str, error: ValidationError) -> list[Failure]:
    failures: list[Failure] = []
    seen: set[str] = set()
    for err in error.errors(include_url=False, include_input=False, include_context=False):
        loc = tuple(err["loc"])
        if kind == DraftKind.PROPOSAL and loc and loc[0] in PROPOSAL_TYPES:
            loc = loc[1:]  # the discriminated union inserts the tag
        if err["type"] in {"union_tag_invalid", "union_tag_not_found"}:
            # pydantic's message would echo the agent's tag: model text stays out of reasons
            loc = ("proposal_type",)
            err["msg"] = "proposal_type must be one of " + ", ".join(sorted(PROPOSAL_TYPES))
        path = format_path(loc)
        if path in seen:
            continue
        seen.add(path)
        detail = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        failures.append(Failure(code=FailureCode.SCHEMA_INVALID, path=path or None, detail=detail))
    return failures


def _semantic_failures(kind: str, obj: dict[str, Any], threshold: float) -> list[Failure]:
    """``published_status`` and ``auto_apply_not_allowed``, read from well-typed raw values."""
    failures: list[Failure] = []
    if kind == DraftKind.REPORT:
        status = obj.get("status")
        if isinstance(status, str) and status != "DRAFT":
            failures.append(
                Failure(
                    code=FailureCode.PUBLISHED_STATUS,
                    path="status",
                    detail="an agent output is always status DRAFT",
                )
            )
    elif kind == DraftKind.PROPOSAL and obj.get("auto_appliable") is True:
        gate = obj.get("gate")
        confidence = obj.get("confidence")
        low = (
            isinstance(confidence, int | float)
            and not isinstance(confidence, bool)
            and confidence < threshold
        )
        if (isinstance(gate, str) and gate != "Q10") or low:
            failures.append(
                Failure(
                    code=FailureCode.AUTO_APPLY_NOT_ALLOWED,
                    path="auto_appliable",
                    detail=f"auto-apply needs gate Q10 and confidence >= {threshold}",
                )
            )
    return failures


def validate_output(
    kind: str, obj: Any, *, auto_apply_threshold: float = 0.9
) -> ValidatedOutput | list[Failure]:
    """Contract §3.2 for one output. A list means the output is structurally invalid.

    Order: nesting depth (raw, before anything else), then the schema (unknown fields, types,
    bare-number citations, ranges), then ``published_status`` and ``auto_apply_not_allowed``.
    """
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        return [Failure(code=FailureCode.SCHEMA_INVALID, detail="unknown output kind")]
    if not isinstance(obj, dict):
        return [Failure(code=FailureCode.SCHEMA_INVALID, detail="the output is not an object")]
    semantic = _semantic_failures(kind, obj, auto_apply_threshold)
    # The schemas nest at most a few levels (test_outputs checks it), so an output the schema
    # accepts is never too deep: the depth walk is only needed to tell which failure comes first
    # when the schema rejects it. pydantic goes no deeper than the schema, so deep input is safe.
    try:
        model = adapter.validate_python(obj)
    except ValidationError as exc:
        deep, _ = _scan(obj)
        if deep is not None:
            return [deep]
        return _schema_failures(kind, exc) + semantic
    try:
        text: bytes | None = orjson.dumps(obj)
    except TypeError:
        text = None
    return ValidatedOutput(
        kind=kind,
        value=obj,
        model=model,
        failures=tuple(semantic),
        long_digit_run=_long_digit_run(obj, text),
        maybe_lookalike=text is None or json_may_hold(text),
    )


def _long_digit_run(obj: dict[str, Any], text: bytes | None) -> bool:
    """``_scan(obj)[1]`` for a schema-valid output, mostly without walking it.

    In the output's JSON text every digit run of a string appears as is, and a number has at most
    20 digits (orjson writes 64-bit integers and floats only), so no run of 1,001 digits there
    means none in any string; otherwise (or if orjson cannot write it) the walk decides. The run is
    looked for as ``0`` * 1,001 once every digit is made a ``0`` (two C passes; a pattern search
    costs ~10 ns a byte, which was most of validating a typical answer). ``text`` is the output's
    ``orjson.dumps``, ``None`` when orjson could not write it.
    """
    if text is None:
        return _scan(obj)[1]
    return _ZERO_RUN in text.translate(_DIGITS_AS_ZERO) and _scan(obj)[1]
