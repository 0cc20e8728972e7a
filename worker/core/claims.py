"""Claim units: the parts of an output that must carry support (contract §3.7).

Units: each assertion sentence of ``answer_markdown`` (also when ``claims[]`` is present); each
``claims[]`` item; each report section whose body holds at least one assertion sentence; each
timeline entry (always); the proposal as one unit through ``grounding``.

Sentences are cut by ``worker.core.sentences`` (its docstring has the rules).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from worker.core.citations import Tokens, entry_ref, entry_ref_or_none, observation_ref
from worker.core.evidence import CitationRef
from worker.core.sentences import has_assertion, sentence_spans

#: ``tuple.__new__``: builds a NamedTuple from already-checked parts without its Python ``__new__``.
_new = tuple.__new__

__all__ = ["ClaimUnit", "UnitKind", "claim_units", "sentence_spans"]


class UnitKind(StrEnum):
    """What kind of part of an output a claim unit is."""

    SENTENCE = "sentence"
    CLAIM = "claim"
    SECTION = "section"
    TIMELINE = "timeline"
    PROPOSAL = "proposal"


class ClaimUnit(NamedTuple):
    """One part of an output that must carry at least one citation."""

    kind: UnitKind
    #: ``answer_markdown``, ``claims[0]``, ``sections[1]``, ``timeline[2]``, ``grounding``.
    path: str
    #: Sentence text (with its trailing tokens), claim text, section body, timeline text, summary.
    text: str
    #: SENTENCE: ``[start, end)`` in ``answer_markdown``; otherwise ``None``.
    span: tuple[int, int] | None
    #: Distinct refs in order: inline tokens of its text(s), then its structured array.
    refs: tuple[CitationRef, ...]
    #: SENTENCE: index among the assertion sentences; otherwise the list index (0 for a proposal).
    #: (Shadows ``tuple.index``; the agreed name is kept.)
    index: int  # type: ignore[assignment]


def claim_units(
    output: Mapping[str, Any], kind: str, tokens: Tokens | None = None
) -> list[ClaimUnit]:
    """The claim units of a schema-valid output of ``kind`` (answer, proposal or report).

    ``tokens``: the draft's token memo, when its strings were scanned already (by ``extract``).
    """
    tokens = Tokens() if tokens is None else tokens
    if kind == "answer":
        return _answer_units(output, tokens)
    if kind == "report":
        return _report_units(output, tokens)
    if kind == "proposal":
        return _proposal_units(output, tokens)
    raise ValueError(f"unknown output kind {kind!r}")


def _answer_units(output: Mapping[str, Any], tokens: Tokens) -> list[ClaimUnit]:
    units: list[ClaimUnit] = []
    markdown = output.get("answer_markdown")
    if isinstance(markdown, str):
        sentence = UnitKind.SENTENCE
        # A sentence span never cuts a token: its tokens are the matches inside the span.
        cites = "[" in markdown
        between = tokens.distinct_refs_between
        for index, span in enumerate(sentence_spans(markdown)):
            start, end = span
            refs = between(markdown, start, end) if cites else ()
            text = markdown[start:end]
            units.append(_new(ClaimUnit, (sentence, "answer_markdown", text, span, refs, index)))
    for i, claim in enumerate(_items(output.get("claims"))):
        text = _text(claim.get("text"))
        path = f"claims[{i}]"
        refs = _distinct([*_inline(text, tokens), *_structured(claim, path, tokens)])
        units.append(_new(ClaimUnit, (UnitKind.CLAIM, path, text, None, refs, i)))
    return units


def _report_units(output: Mapping[str, Any], tokens: Tokens) -> list[ClaimUnit]:
    units: list[ClaimUnit] = []
    refs_of = tokens.refs
    section_kind, timeline_kind = UnitKind.SECTION, UnitKind.TIMELINE
    for i, section in enumerate(_items(output.get("sections"))):
        body = _text(section.get("body_markdown"))
        if not has_assertion(body):
            continue
        path = f"sections[{i}]"
        heading = refs_of(_text(section.get("heading")))
        refs = _distinct([*heading, *refs_of(body), *_structured(section, path, tokens)])
        units.append(_new(ClaimUnit, (section_kind, path, body, None, refs, i)))
    for i, entry in enumerate(_items(output.get("timeline"))):
        text = _text(entry.get("text"))
        path = f"timeline[{i}]"
        refs = _distinct([*refs_of(text), *_structured(entry, path, tokens)])
        units.append(_new(ClaimUnit, (timeline_kind, path, text, None, refs, i)))
    return units


def _proposal_units(output: Mapping[str, Any], tokens: Tokens) -> list[ClaimUnit]:
    summary = _text(output.get("summary"))
    grounding = output.get("grounding")
    if not isinstance(grounding, Mapping):
        grounding = {}
    observations = grounding.get("observations")
    obs = [
        observation_ref(v, f"grounding.observations[{k}]")
        for k, v in enumerate(observations if isinstance(observations, list | tuple) else ())
    ]
    reasoning = _text(grounding.get("reasoning"))
    refs = _distinct([*_inline(summary, tokens), *_inline(reasoning, tokens), *obs])
    return [ClaimUnit(UnitKind.PROPOSAL, "grounding", summary, None, refs, 0)]


def _items(value: Any) -> list[Mapping[str, Any]]:
    if not isinstance(value, list | tuple):
        return []
    return [item if isinstance(item, Mapping) else {} for item in value]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _inline(text: str, tokens: Tokens) -> list[CitationRef]:
    return tokens.refs(text)


def _structured(item: Mapping[str, Any], path: str, tokens: Tokens) -> list[CitationRef]:
    entries = item.get("citations")
    if not isinstance(entries, list | tuple):
        return []
    known = tokens.entry_refs(entries)
    if known is not None:  # read by ``extract``
        return known
    refs: list[CitationRef] = []
    for e in entries:
        ref = entry_ref_or_none(e)
        if ref is None:  # the path is built only to name an invalid entry: entry_ref raises
            ref = entry_ref(e, f"{path}.citations[{len(refs)}]")
        refs.append(ref)
    return refs


def _distinct(refs: Iterable[CitationRef]) -> tuple[CitationRef, ...]:
    return tuple(dict.fromkeys(refs))
