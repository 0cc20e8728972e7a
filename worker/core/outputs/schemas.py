"""The three agent-output schemas as closed, strict pydantic models (contract §3.2).

Models are closed (``extra="forbid"``: a field the validator does not traverse could carry an
unchecked citation) and strict (no ``"1"`` -> 1, no ``true`` as an integer, no NaN/Infinity).
Validation against them, and what a failure looks like, is ``worker.core.outputs.validation``.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter

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
    """Analyst answer."""

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
    """After-action / report draft. ``status`` is checked after the schema."""

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

ADAPTERS: Mapping[str, TypeAdapter[Any]] = {
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


#: Every key a schema knows: what a failure path may name (``outputs.key_label``).
SCHEMA_KEYS = _schema_keys()
