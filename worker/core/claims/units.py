"""Claim units: the parts of an output that must carry support (contract §3.7).

Units: each assertion sentence of ``answer_markdown`` (also when ``claims[]`` is present); each
``claims[]`` item; each report section whose body holds at least one assertion sentence; each
timeline entry (always); the proposal as one unit through ``grounding``.

Sentences are cut by ``worker.core.claims.sentences`` (its docstring has the rules).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from worker.core.citations.entries import entry_ref, entry_ref_or_none, observation_ref
from worker.core.citations.evidence import CitationRef
from worker.core.citations.tokens import Tokens
from worker.core.claims.sentences import has_assertion, sentence_spans

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
        spans = sentence_spans(markdown)
        # A sentence span never cuts a token: its tokens are the matches inside the span.
        refs_of = tokens.distinct_refs_of_spans(markdown, spans)
        units = [
            _new(ClaimUnit, (sentence, "answer_markdown", markdown[span[0] : span[1]], span, r, i))
            for i, (span, r) in enumerate(zip(spans, refs_of, strict=True))
        ]
    claims = output.get("claims")
    if isinstance(claims, list | tuple) and claims:
        claim = UnitKind.CLAIM
        refs_of_text = tokens.refs
        entry_refs = tokens.entry_refs
        for i, item in enumerate(claims):
            if type(item) is not dict:
                item = item if isinstance(item, Mapping) else {}  # noqa: PLW2901
            text = item.get("text")
            if type(text) is not str:
                text = _text(text)
            path = f"claims[{i}]"
            entries = item.get("citations")
            structured = (
                (entry_refs(entries) or _structured(item, path, tokens))
                if isinstance(entries, list | tuple)
                else []
            )
            inline = refs_of_text(text) if "[" in text else ()
            if inline or len(structured) > 1:
                refs = tuple(dict.fromkeys([*inline, *structured]))
            else:
                refs = tuple(structured)
            units.append(_new(ClaimUnit, (claim, path, text, None, refs, i)))
    return units


def _report_units(output: Mapping[str, Any], tokens: Tokens) -> list[ClaimUnit]:
    units: list[ClaimUnit] = []
    append = units.append
    refs_of = tokens.refs
    entry_refs = tokens.entry_refs
    fromkeys = dict.fromkeys
    section_kind, timeline_kind = UnitKind.SECTION, UnitKind.TIMELINE
    for i, section in enumerate(_items(output.get("sections"))):
        body = section.get("body_markdown")
        if type(body) is not str:
            body = _text(body)
        if not has_assertion(body):
            continue
        path = f"sections[{i}]"
        heading = section.get("heading")
        entries = section.get("citations")
        structured = (
            (entry_refs(entries) or _structured(section, path, tokens))
            if isinstance(entries, list | tuple)
            else ()
        )
        if type(heading) is str and "[" not in heading:  # most headings cite nothing
            refs = tuple(fromkeys([*refs_of(body), *structured]))
        else:
            refs = tuple(fromkeys([*refs_of(_text(heading)), *refs_of(body), *structured]))
        append(_new(ClaimUnit, (section_kind, path, body, None, refs, i)))
    for i, entry in enumerate(_items(output.get("timeline"))):
        text = entry.get("text")
        if type(text) is not str:
            text = _text(text)
        entries = entry.get("citations")
        structured = (
            (entry_refs(entries) or _structured(entry, f"timeline[{i}]", tokens))
            if isinstance(entries, list | tuple)
            else ()
        )
        refs = tuple(fromkeys([*refs_of(text), *structured]))
        append(_new(ClaimUnit, (timeline_kind, f"timeline[{i}]", text, None, refs, i)))
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
