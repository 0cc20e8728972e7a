"""Validating an agent output against its schema (contract §3.2), and what a failure names.

The schemas themselves are ``worker.core.outputs.schemas`` (re-exported here).

Decisions:

- ``validate_output`` returns the agent's *own* dict (validated, not a normalized dump), so the
  published output looks like what the agent sent minus redactions. An output that
  ``worker.core.outputs.shapes`` proves valid skips pydantic (msgspec, ~7 x cheaper); any other
  goes through pydantic, which writes the failures.
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
import typing
from typing import Any, NamedTuple

import orjson
from pydantic import BaseModel, ValidationError

from worker.core.citations.lookalikes import json_may_hold
from worker.core.citations.rendered import json_may_show_more
from worker.core.failures import Failure, FailureCode
from worker.core.outputs.schemas import (
    ADAPTERS,
    ID_LIMIT,
    PROPOSAL_TYPES,
    SCHEMA_FIELDS,
    SCHEMA_KEYS,
    AdjudicationPatch,
    AdjudicationProposal,
    AnalystAnswer,
    BaseRate,
    CaseUpdatePatch,
    CaseUpdateProposal,
    Citation,
    Claim,
    DraftKind,
    EntityFlagPatch,
    EntityFlagProposal,
    FieldMapping,
    Grounding,
    Proposal,
    QuotedCitation,
    ReportDraft,
    ReportSectionPatch,
    ReportSectionProposal,
    Section,
    SourceMappingPatch,
    SourceMappingProposal,
    TimelineEntry,
    Withheld,
)
from worker.core.outputs.shapes import proves_valid

__all__ = [
    "ID_LIMIT",
    "MAX_DEPTH",
    "PROPOSAL_TYPES",
    "SCHEMA_FIELDS",
    "AdjudicationPatch",
    "AdjudicationProposal",
    "AnalystAnswer",
    "BaseRate",
    "CaseUpdatePatch",
    "CaseUpdateProposal",
    "Citation",
    "Claim",
    "DraftKind",
    "EntityFlagPatch",
    "EntityFlagProposal",
    "FieldMapping",
    "Grounding",
    "Proposal",
    "QuotedCitation",
    "ReportDraft",
    "ReportSectionPatch",
    "ReportSectionProposal",
    "Section",
    "SourceMappingPatch",
    "SourceMappingProposal",
    "TimelineEntry",
    "ValidatedOutput",
    "Withheld",
    "format_path",
    "key_label",
    "validate_output",
]

MAX_DEPTH = 64


class ValidatedOutput(NamedTuple):
    """A structurally valid output: the agent's own dict and the rule-2 findings that do not
    stop the verdict (``published_status``, ``auto_apply_not_allowed``)."""

    kind: str
    value: dict[str, Any]
    failures: tuple[Failure, ...]
    #: Some string holds a run of more than 1,000 digits (a possible overlong citation id).
    long_digit_run: bool = False
    #: Some string may hold a citation look-alike (``worker.core.citations.lookalikes``); ``False``
    #: is sure.
    maybe_lookalike: bool = True
    #: Some string's rendering may show a citation other than its tokens
    #: (``worker.core.citations.rendered``); ``False`` is sure.
    maybe_shows_more: bool = True


#: The shortest token with an id of over 1,000 digits: ``[OBS-`` + 1,001 digits + ``]``.
_OVERLONG_TOKEN = 1007
#: 1,001 digits starting a digit run (the look-behind keeps the search linear).
_DIGIT_RUN = re.compile(r"(?<![0-9])[0-9]{1001}")
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_ZERO_RUN = b"0" * 1001


def key_label(key: object) -> str:
    """A dict key as it may appear in a path: a field name of the schemas, else ``<field>``.

    A key the agent invented is model text (``Falcon_priced_4_2B``): paths reach the
    could-not-ground event, which carries codes and paths only.
    """
    if isinstance(key, str) and key in SCHEMA_KEYS:
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


def _scan(obj: Any, limit: int = MAX_DEPTH) -> tuple[Failure | None, bool]:
    """The first container nested deeper than ``limit`` (``obj`` is level 1), and whether some
    string holds a run of over 1,000 digits (which an overlong citation id needs), in one
    iterative walk."""
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


def _schema_failures(
    kind: str, error: ValidationError, obj: dict[str, Any] | None = None
) -> list[Failure]:
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
        if err["type"] == "extra_forbidden":
            # The path hides the invented key (model text); the agent learns what may stand
            # there instead, from the schema (only names the schema knows).
            allowed = allowed_fields(kind, loc[:-1], obj)
            detail = "unknown field" + (f"; allowed here: {', '.join(allowed)}" if allowed else "")
        else:
            detail = err["msg"]
        failures.append(Failure(code=FailureCode.SCHEMA_INVALID, path=path or None, detail=detail))
    return failures


#: The model of each kind's output, and of each proposal type.
_ROOTS: dict[str, type[BaseModel]] = {
    DraftKind.ANSWER.value: AnalystAnswer,
    DraftKind.REPORT.value: ReportDraft,
}
_PROPOSALS: dict[str, type[BaseModel]] = {
    "case_update": CaseUpdateProposal,
    "report_section": ReportSectionProposal,
    "source_mapping": SourceMappingProposal,
    "entity_flag": EntityFlagProposal,
    "adjudication": AdjudicationProposal,
}


def allowed_fields(
    kind: str, parent: tuple[int | str, ...], obj: dict[str, Any] | None = None
) -> list[str]:
    """The field names the schema of ``kind`` allows in the object at ``parent`` (a pydantic
    location; list indexes step into the item type), sorted; ``[]`` where it cannot tell. A
    proposal's model is the one its ``proposal_type`` names in ``obj``."""
    model: Any = _ROOTS.get(kind)
    if kind == DraftKind.PROPOSAL:
        tag = obj.get("proposal_type") if isinstance(obj, dict) else None
        model = _PROPOSALS.get(tag) if isinstance(tag, str) else None
    for step in parent:
        if isinstance(step, int):
            continue  # an item: its type was unwrapped with the list
        fields = getattr(model, "model_fields", None)
        if fields is None or step not in fields:
            return []
        model = _item_model(fields[step].annotation)
    fields = getattr(model, "model_fields", None)
    return sorted(info.alias or name for name, info in fields.items()) if fields else []


def _item_model(annotation: Any) -> Any:
    """The model a field holds, through ``list[...]`` and ``... | None``; ``None`` if none."""
    for _ in range(4):
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return annotation
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if not args:
            return None
        annotation = args[0]
    return None


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
    return _validate(kind, obj, auto_apply_threshold, fast=True)


def _validate(
    kind: str, obj: Any, threshold: float, *, fast: bool
) -> ValidatedOutput | list[Failure]:
    """``validate_output``; ``fast``: let ``output_shapes.proves_valid`` spare pydantic the work
    when it can (``False`` is the plain path its property test compares against)."""
    adapter = ADAPTERS.get(kind)
    if adapter is None:
        return [Failure(code=FailureCode.SCHEMA_INVALID, detail="unknown output kind")]
    if not isinstance(obj, dict):
        return [Failure(code=FailureCode.SCHEMA_INVALID, detail="the output is not an object")]
    semantic = _semantic_failures(kind, obj, threshold)
    try:
        text: bytes | None = orjson.dumps(obj)
    except TypeError:
        text = None
    if not (fast and text is not None and proves_valid(kind, obj)):
        # The schemas nest at most a few levels (test_outputs checks it), so an output the schema
        # accepts is never too deep: the depth walk is only needed to tell which failure comes
        # first when the schema rejects it. pydantic goes no deeper than the schema.
        try:
            adapter.validate_python(obj)
        except ValidationError as exc:
            deep, _ = _scan(obj)
            if deep is not None:
                return [deep]
            return _schema_failures(kind, exc, obj) + semantic
    return ValidatedOutput(
        kind=kind,
        value=obj,
        failures=tuple(semantic),
        long_digit_run=_long_digit_run(obj, text),
        maybe_lookalike=text is None or json_may_hold(text),
        maybe_shows_more=text is None or json_may_show_more(text),
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
