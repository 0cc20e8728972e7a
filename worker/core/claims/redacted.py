"""The redacted output (contract §3.5) of one evaluated draft: what each unit's status does to
its words, and every hidden citation out of every string and array.

Decisions:

- Hedging replaces the unit's words: an ``answer_markdown`` sentence span, ``claims[i].text``,
  ``sections[i].body_markdown``, ``timeline[i].text``. A hedged section's heading becomes ``""``:
  its tokens count as the section's support, so its words may come from the hidden source too.
  Omitting removes the span or the array item. Hidden entries leave every structured array and
  hidden tokens leave every string, whatever the unit's status.
- A draft with no hidden citation and nothing hedged or omitted publishes the agent's own dict
  unchanged (no copy). Otherwise only what changes is rebuilt: a top-level value, or an item of a
  unit list, that holds no hidden citation and is neither hedged nor omitted is the agent's own
  object (the caller names where hidden citations are, from the occurrences it extracted; every
  string of the output was scanned there, so nothing else can hold a hidden token).
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.citations.redaction import replace_spans, without_lookalikes
from worker.core.citations.tokens import (
    FEW_HIDDEN,
    NO_HIDDEN_TOKENS,
    TOKEN_TEXT_RE,
    HiddenTokens,
    hidden_tokens,
    without_zeros,
)
from worker.core.claims.hidden_words import Keeps, word_spans
from worker.core.claims.status import UnitStatus, UnitVerdict
from worker.core.claims.units import UnitKind

#: ``tuple.__new__``: builds a NamedTuple from already-checked parts without its Python ``__new__``.
_new = tuple.__new__

_ITEM = re.compile(r"^(claims|sections|timeline)\[(\d+)\]")
#: The top-level key of a path, and the list index right after it if any (``claims[2].text``).
_TOP = re.compile(r"([^.\[]*)(?:\[(\d+)\])?")
_TEXT_FIELD = {"claims": "text", "sections": "body_markdown", "timeline": "text"}
#: The token grammar without groups: ``findall`` gives token texts.
_find_tokens = TOKEN_TEXT_RE.findall
_token_matches = TOKEN_TEXT_RE.finditer
#: A kind's member by its value without the enum's call (``EvidenceKind(kind)`` for any other).
_KINDS = {k.value: k for k in EvidenceKind}
_STRUCTURED_LISTS = ("claims", "sections", "timeline")


class HiddenRefs(NamedTuple):
    """What one output hides (rule 5) and how: the refs, their token texts, the hedge."""

    refs: frozenset[CitationRef]
    #: The tokens of ``refs`` as written without leading zeros (``[DOC-9]``). Not a pattern of
    #: the hidden refs: compiling one per draft costs 24 us (one ref) to 58 us (three), and
    #: ``re``'s cache of compiled patterns hid that cost from a benchmark whose drafts all hide
    #: the same refs (a cache across drafts; see ``docs/decisions.md``).
    texts: frozenset[str]
    #: What the words of a sentence carrying a hidden-only group become (rule 5): the hedge
    #: sentence, or ``""`` when the policy omits; ``None``: tokens only are cut.
    words: str | None = None
    #: One entry per sentence whose words were replaced (rule 5 outside claim units).
    replaced: list[int] | None = None
    #: Whether a sentence that lost a citation keeps its words (rule 5: supported by its
    #: visible sources); ``None``: every such sentence keeps them.
    keeps: Keeps | None = None
    #: Spans of the text already judged as claim units (their support decided): ``keeps`` is
    #: not asked again inside them.
    judged: Sequence[tuple[int, int]] = ()
    #: ``refs``'s tokens as rule 5's reading looks for them, made once for the output (not once
    #: a string: a draft may hide a thousand ids and have twenty thousand claims).
    tokens: HiddenTokens = NO_HIDDEN_TOKENS


def hidden_of(
    refs: frozenset[CitationRef],
    words: str | None = None,
    replaced: list[int] | None = None,
    keeps: Keeps | None = None,
) -> HiddenRefs:
    """The ``HiddenRefs`` of ``refs``: their token texts written once for ``remove_hidden``."""
    tokens = hidden_tokens(refs)
    return HiddenRefs(refs, tokens.texts, words, replaced, keeps, tokens=tokens)


def _hidden_word_spans(text: str, hidden: HiddenRefs) -> list[tuple[int, int, str]]:
    """Contract rule 5 in every position (headings, titles, questions, lead-ins, code, table
    headers as well as claim units): the finest sentence around each group of citation tokens
    whose ids are all hidden, and each other sentence that lost a citation and that
    ``hidden.keeps`` does not keep, as a replacement of its words by ``hidden.words``
    (``worker.core.claims.hidden_words``)."""
    spans = word_spans(
        text, hidden.refs, hidden.words or "", hidden.keeps, hidden.judged, marks=hidden.tokens
    )
    if spans and hidden.replaced is not None:
        hidden.replaced.extend(range(len(spans)))
    return spans


def remove_hidden(text: str, hidden: HiddenRefs) -> str:
    """``remove_tokens(text, hidden.refs)``, in C but for a step per hidden token.

    A token holds one ``[``, its first character: tokens never overlap, the grammar is the
    same anywhere, so every place a hidden token's text occurs is a token to cut, and the
    grammar's matches (``findall``, texts only) say which texts occur. A text with leading
    zeros (``[DOC-009]``) is hidden when it is without them; an overlong id is never a hidden
    ref's (compared as text: never turned into an int).

    What is left is rescanned for look-alikes when anything was cut or replaced (contract §3.5:
    a removal never leaves one; ``without_lookalikes``).
    """
    if not hidden.texts or "[" not in text:
        return text
    words = _hidden_word_spans(text, hidden) if hidden.words is not None else None
    if words:
        return without_lookalikes(_remove_tokens(replace_spans(text, words), hidden))
    cut = _remove_tokens(text, hidden)
    return text if cut is text else without_lookalikes(cut)


def _remove_tokens(text: str, hidden: HiddenRefs) -> str:
    """``text`` without the tokens of ``hidden`` (itself when there are none)."""
    if "[" not in text:
        return text
    found = set(_find_tokens(text))
    hits = found & hidden.texts
    if "-0" in text:  # a token may have leading zeros
        for token in found:
            if token[5] == "0" and without_zeros(token) in hidden.texts:
                hits.add(token)
    if not hits:
        return text
    cuts: list[tuple[int, int, str]] = []
    if len(hits) <= FEW_HIDDEN:  # a C-level find per hidden token's text: few, as in most drafts
        for token in hits:
            at = text.find(token)
            while at >= 0:
                cuts.append((at, at + len(token), ""))
                at = text.find(token, at + len(token))
        cuts.sort()
    else:  # one pass over the tokens: a find per text would be size x hidden ids
        cuts = [(m.start(), m.end(), "") for m in _token_matches(text) if m.group() in hits]
    return replace_spans(text, cuts)


def _scrub(value: Any, hidden: HiddenRefs) -> Any:
    """Every string without hidden tokens; structure otherwise unchanged (depth <= 64)."""
    if isinstance(value, str):
        return remove_hidden(value, hidden)
    if isinstance(value, dict):
        return {k: _scrub(v, hidden) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, hidden) for v in value]
    return value


def _entry_ref(entry: Any) -> CitationRef | None:
    if isinstance(entry, dict):
        kind = entry["kind"]
        member = _KINDS.get(kind) if type(kind) is str else None
        return _new(CitationRef, (member or EvidenceKind(kind), entry["id"]))
    return None


def _visible_entries(entries: Sequence[Any], hidden: HiddenRefs) -> list[Any]:
    """A citation array without its hidden entries; in the others (a ``quote``) hidden tokens
    are cut but no words go: a quote is checked against its own visible source (rule 6), so its
    words are that source's, and a quote that does not match fails the draft anyway."""
    tokens_only = hidden._replace(words=None)
    return [_scrub(e, tokens_only) for e in entries if _entry_ref(e) not in hidden.refs]


def _plain_key(key: object) -> bool:
    return isinstance(key, str) and key.isidentifier()


def hidden_places(paths: Iterable[str]) -> set[str | tuple[str, int]]:
    """Where the citations at ``paths`` sit: each top-level key, and ``(key, index)`` for an
    item of a top-level list (``claims[2].citations[0]`` -> ``claims``, ``("claims", 2)``)."""
    places: set[str | tuple[str, int]] = set()
    for path in paths:
        match = _TOP.match(path)
        if match is not None:
            places.add(match[1])
            if match[2] is not None:
                places.add((match[1], int(match[2])))
    return places


def redact_output(
    output: dict[str, Any],
    verdicts: Sequence[UnitVerdict],
    hidden_refs: frozenset[CitationRef],
    hedge_sentence: str,
    places: Container[str | tuple[str, int]] | None = None,
    *,
    omit: bool = False,
    replaced: list[int] | None = None,
    keeps: Keeps | None = None,
    unit_spans: Sequence[tuple[int, int]] = (),
) -> dict[str, Any]:
    """The agent output as it may be shown to the principal (contract §3.5, §3.7).

    ``verdicts``: only hedged and omitted units act (a caller may leave the others out).
    ``places``: the ``hidden_places`` of every occurrence of a hidden ref; ``None`` means
    anywhere (all rebuilt). A sentence outside the claim units that carries a hidden-only group
    of tokens (a heading, a question, a title...) has its words replaced by ``hedge_sentence``
    (``""`` with ``omit``), one entry added to ``replaced`` for each (rule 5); so has every other
    sentence carrying a hidden token that ``keeps`` does not keep (``lost_citation_keeps``),
    outside the claim units (their texts, and ``unit_spans`` of ``answer_markdown``: the
    units' own check decided them).
    """
    spans, items = _actions(verdicts, hedge_sentence)
    if not hidden_refs and not spans and not items:
        return output
    hidden = hidden_of(hidden_refs, "" if omit else hedge_sentence, replaced, keeps)
    unit_text = hidden._replace(keeps=None)  # a unit's own text: its support was decided
    out: dict[str, Any] = {}
    acted = {key for key, _ in items}
    for key, value in output.items():
        untouched = key not in acted and (key != "answer_markdown" or not spans)
        # Places name top-level keys as paths do; a schema key is an identifier (no "." or "["),
        # anything else is rebuilt rather than trusted to parse back.
        if untouched and places is not None and key not in places and _plain_key(key):
            out[key] = value  # nothing hidden in it, nothing hedged or omitted
        elif key == "answer_markdown" and isinstance(value, str):
            spans.sort()
            judged = hidden._replace(judged=_shifted(unit_spans, spans))
            if spans:
                out[key] = without_lookalikes(remove_hidden(replace_spans(value, spans), judged))
            else:
                out[key] = remove_hidden(value, judged)
        elif key == "citations" and isinstance(value, list):
            out[key] = _visible_entries(value, hidden)
        elif key in _STRUCTURED_LISTS and isinstance(value, list):
            out[key] = _unit_list(key, value, items, hidden, hedge_sentence, places)
        elif key == "grounding" and isinstance(value, dict):
            out[key] = {
                k: (
                    [o for o in v if CitationRef(EvidenceKind.OBS, o) not in hidden_refs]
                    if k == "observations"
                    else _scrub(v, unit_text)
                )
                for k, v in value.items()
            }
        elif key == "summary":  # a proposal's: the unit's own text, judged with it
            out[key] = _scrub(value, unit_text)
        else:
            out[key] = _scrub(value, hidden)
    return out


def _shifted(
    spans: Sequence[tuple[int, int]], replaced: Sequence[tuple[int, int, str]]
) -> list[tuple[int, int]]:
    """``spans`` of a text (sorted) as they stand once ``replaced`` (sorted, not overlapping)
    were applied; a span that was replaced is gone."""
    out: list[tuple[int, int]] = []
    delta, k = 0, 0
    for start, end in spans:
        while k < len(replaced) and replaced[k][1] <= start:
            delta += len(replaced[k][2]) - (replaced[k][1] - replaced[k][0])
            k += 1
        if k < len(replaced) and replaced[k][0] < end:
            continue  # replaced itself
        out.append((start + delta, end + delta))
    return out


def _actions(
    verdicts: Sequence[UnitVerdict], hedge_sentence: str
) -> tuple[list[tuple[int, int, str]], dict[tuple[str, int], UnitStatus]]:
    """What hedging and omitting do: replacements of ``answer_markdown`` sentence spans, and the
    status of each hedged or omitted item of a unit list, by ``(list key, index)``."""
    spans: list[tuple[int, int, str]] = []
    items: dict[tuple[str, int], UnitStatus] = {}
    for unit, status in verdicts:
        if status not in (UnitStatus.HEDGED, UnitStatus.OMITTED):
            continue
        if unit.kind is UnitKind.SENTENCE and unit.span is not None:
            text = hedge_sentence if status is UnitStatus.HEDGED else ""
            spans.append((unit.span[0], unit.span[1], text))
        else:
            match = _ITEM.match(unit.path)
            if match is not None:
                items[(match.group(1), int(match.group(2)))] = status
    return spans, items


def _unit_list(  # noqa: PLR0917 -- the parts of redact_output's state this list needs
    key: str,
    value: list[Any],
    items: Mapping[tuple[str, int], UnitStatus],
    hidden: HiddenRefs,
    hedge_sentence: str,
    places: Container[str | tuple[str, int]] | None,
) -> list[Any]:
    """``claims``/``sections``/``timeline`` redacted: omitted items left out, hedged ones' words
    replaced, hidden citations removed; an item with nothing to do is the agent's own object.
    The item's own text (a unit's: its support was decided) is not asked ``hidden.keeps``."""
    own_text = _TEXT_FIELD[key]
    unit_text = hidden._replace(keeps=None)
    kept: list[Any] = []
    for index, item in enumerate(value):
        action = items.get((key, index))
        if action is UnitStatus.OMITTED:
            continue
        if action is None and places is not None and (key, index) not in places:
            kept.append(item)
            continue
        new = {
            k: _visible_entries(v, hidden)
            if k == "citations"
            else _scrub(v, unit_text if k == own_text else hidden)
            for k, v in item.items()
        }
        if action is UnitStatus.HEDGED:
            new[_TEXT_FIELD[key]] = hedge_sentence
            if key == "sections" and "heading" in new:
                new["heading"] = ""  # its words are the unit's too (see module docstring)
        kept.append(new)
    return kept
