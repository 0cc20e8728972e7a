"""Claim units as written before the fourth speed-up step, kept as a test oracle.

Do not change it: ``test_claims_fast.py`` checks that ``worker.core.claims.units.claim_units``
builds
exactly the units this builds (same kinds, paths, texts, spans, refs and indexes; the same
``ValueError`` for an entry that is not a valid ``{kind, id}``), with and without the token memo
``cite`` fills. Every helper here reads its strings and lists afresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from worker.core.citations.entries import entry_ref, observation_ref
from worker.core.citations.evidence import CitationRef
from worker.core.citations.tokens import find_tokens
from worker.core.claims.sentences import has_assertion, sentence_spans
from worker.core.claims.units import ClaimUnit, UnitKind


def claim_units(output: Mapping[str, Any], kind: str) -> list[ClaimUnit]:
    if kind == "answer":
        return _answer_units(output)
    if kind == "report":
        return _report_units(output)
    if kind == "proposal":
        return _proposal_units(output)
    raise ValueError(f"unknown output kind {kind!r}")


def _answer_units(output: Mapping[str, Any]) -> list[ClaimUnit]:
    units: list[ClaimUnit] = []
    markdown = output.get("answer_markdown")
    if isinstance(markdown, str):
        for index, (start, end) in enumerate(sentence_spans(markdown)):
            refs = _distinct(t.ref for t in find_tokens(markdown) if start <= t.start < end)
            units.append(
                ClaimUnit(
                    UnitKind.SENTENCE,
                    "answer_markdown",
                    markdown[start:end],
                    (start, end),
                    refs,
                    index,
                )
            )
    for i, claim in enumerate(_items(output.get("claims"))):
        text = _text(claim.get("text"))
        path = f"claims[{i}]"
        refs = _distinct([*_inline(text), *_structured(claim, path)])
        units.append(ClaimUnit(UnitKind.CLAIM, path, text, None, refs, i))
    return units


def _report_units(output: Mapping[str, Any]) -> list[ClaimUnit]:
    units: list[ClaimUnit] = []
    for i, section in enumerate(_items(output.get("sections"))):
        body = _text(section.get("body_markdown"))
        if not has_assertion(body):
            continue
        path = f"sections[{i}]"
        heading = _inline(_text(section.get("heading")))
        refs = _distinct([*heading, *_inline(body), *_structured(section, path)])
        units.append(ClaimUnit(UnitKind.SECTION, path, body, None, refs, i))
    for i, entry in enumerate(_items(output.get("timeline"))):
        text = _text(entry.get("text"))
        path = f"timeline[{i}]"
        refs = _distinct([*_inline(text), *_structured(entry, path)])
        units.append(ClaimUnit(UnitKind.TIMELINE, path, text, None, refs, i))
    return units


def _proposal_units(output: Mapping[str, Any]) -> list[ClaimUnit]:
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
    refs = _distinct([*_inline(summary), *_inline(reasoning), *obs])
    return [ClaimUnit(UnitKind.PROPOSAL, "grounding", summary, None, refs, 0)]


def _items(value: Any) -> list[Mapping[str, Any]]:
    if not isinstance(value, list | tuple):
        return []
    return [item if isinstance(item, Mapping) else {} for item in value]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _inline(text: str) -> list[CitationRef]:
    return [t.ref for t in find_tokens(text)]


def _structured(item: Mapping[str, Any], path: str) -> list[CitationRef]:
    entries = item.get("citations")
    if not isinstance(entries, list | tuple):
        return []
    return [entry_ref(e, f"{path}.citations[{j}]") for j, e in enumerate(entries)]


def _distinct(refs: Iterable[CitationRef]) -> tuple[CitationRef, ...]:
    return tuple(dict.fromkeys(refs))
