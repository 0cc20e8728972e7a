"""Claim statuses (contract §3.7) and the redacted output (§3.5) of one evaluated draft.

Decisions:

- *Support* is a ``resolved`` citation. A dangling or ``not_in_retrieval`` citation supports
  nothing (it already fails the draft), so a unit whose only citations are dangling is not
  ``cited``; if it also had a hidden citation its support counts as lost through redaction and the
  policy applies (hedge/omit/refuse), so its original words never reach a regenerate request.
  A unit whose citations are all dangling or outside the retrieval and none hidden gets no status
  and no extra failure: the citation failures already say what is wrong.
- A proposal is one unit (path ``grounding``) and is the whole output: when its support is lost
  it cannot be hedged or omitted without publishing a patch built from hidden evidence, so it is
  refused (``unsupported_answer``) whatever the policy.
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
from enum import StrEnum
from typing import Any, NamedTuple

from worker.core.citations.evidence import HIDDEN, CitationRef, EvidenceKind, Resolution
from worker.core.citations.redaction import remove_tokens, replace_spans, without_lookalikes
from worker.core.claims.hidden_words import Keeps, hidden_only_group, word_spans
from worker.core.claims.policy import LostSupportPolicy, SupportPolicy, TenantPolicy
from worker.core.claims.support import (
    Cited,
    SourceIndex,
    SupportLevel,
    SupportResult,
    UnitMemo,
    check_cited,
)
from worker.core.claims.units import ClaimUnit, UnitKind
from worker.core.failures import Failure, FailureCode, checked_failure
from worker.core.messages.models import GroundingStatus
from worker.core.messages.wire import WireParts

#: ``tuple.__new__``: builds a NamedTuple from already-checked parts without its Python ``__new__``.
_new = tuple.__new__

_ITEM = re.compile(r"^(claims|sections|timeline)\[(\d+)\]")
#: The top-level key of a path, and the list index right after it if any (``claims[2].text``).
_TOP = re.compile(r"([^.\[]*)(?:\[(\d+)\])?")
_TEXT_FIELD = {"claims": "text", "sections": "body_markdown", "timeline": "text"}
#: The token grammar without groups (``worker.core.citations.tokens``): ``findall`` gives token
#: texts.
_find_tokens = re.compile(r"\[(?:OBS|DOC|EVT)-[0-9]++\]").findall
#: A kind's member by its value without the enum's call (``EvidenceKind(kind)`` for any other).
_KINDS = {k.value: k for k in EvidenceKind}
_STRUCTURED_LISTS = ("claims", "sections", "timeline")


class UnitStatus(StrEnum):
    """What became of one claim unit."""

    CITED = "cited"
    HEDGED = "hedged"
    OMITTED = "omitted"
    REFUSED = "refused"
    #: No citation at all: ``uncited_claim``.
    UNCITED = "uncited"
    #: Only dangling / not-in-retrieval citations: those failures speak for it.
    FAILED = "failed"


class UnitVerdict(NamedTuple):
    """A unit and its status."""

    unit: ClaimUnit
    status: UnitStatus


def unit_status(
    unit: ClaimUnit, resolutions: Mapping[CitationRef, Resolution], policy: LostSupportPolicy
) -> UnitStatus:
    """The status of one unit (see the module docstring)."""
    if not unit.refs:
        return UnitStatus.UNCITED
    states = [resolutions.get(ref, Resolution.DANGLING) for ref in unit.refs]
    hidden = [ref for ref, s in zip(unit.refs, states, strict=True) if s in HIDDEN]
    if Resolution.RESOLVED in states and not (hidden and hidden_only_group(unit.text, hidden)):
        return UnitStatus.CITED
    if not hidden:
        return UnitStatus.FAILED
    return _lost(unit, policy)


class Support(NamedTuple):
    """Rule 6b's results for one draft."""

    #: Position of the unit in the draft's units -> its result (cited units only).
    of_unit: dict[int, SupportResult]
    #: The lowest support of the checked units citing each ref (ledger rows, contract §6).
    of_ref: dict[CitationRef, SupportLevel]


#: Lowest first: a ledger row shows the worst that was found.
_SUPPORT_RANK = {
    SupportLevel.UNSUPPORTED: 0,
    SupportLevel.WEAK: 1,
    SupportLevel.UNCHECKED: 2,
    SupportLevel.SUPPORTED: 3,
}


def check_claim_units(  # noqa: PLR0917 -- the parts of the verdict's state rule 7 reads
    units: tuple[ClaimUnit, ...],
    resolved: Mapping[CitationRef, dict[str, Any]],
    hidden: frozenset[CitationRef],
    resolutions: Mapping[CitationRef, Resolution],
    policy: TenantPolicy,
    failures: list[Failure],
    sources: Mapping[CitationRef, str] | None = None,
    index: SourceIndex | None = None,
) -> tuple[list[UnitVerdict], WireParts, bool, Support]:
    """Rule 7 in one pass over the units: the verdict of each unit that is not cited (a unit
    with a resolved ref is cited: no ``unit_status``, and nothing for ``redact_output`` to do
    there); ``uncited_claim`` and ``unsupported_answer`` per unit; the published claims in their
    wire form (cited and hedged units, omitted ones absent; a cited unit's text without its
    hidden tokens, its citations the resolved refs' ``CitationKey``s, ``resolved``'s values);
    whether any unit was refused; and rule 6b, the support of every cited unit by the texts of
    its resolved refs (``sources``: the text each resolved ref is checked against), with
    ``unsupported_claim`` under the policy ``enforce``."""
    hedged_status = UnitStatus.HEDGED
    cited_claim = GroundingStatus.CITED
    hedged = {
        "text": policy.hedge_sentence,
        "citations": [],
        "grounding_status": GroundingStatus.HEDGED,
    }
    lost = policy.lost_support
    key_of = resolved.__getitem__
    cites = frozenset(resolved)
    verdicts: list[UnitVerdict] = []
    claims = WireParts()
    refused = False
    enforce = policy.support is SupportPolicy.ENFORCE
    support = Support({}, {})
    # The index and each resolved ref's text as the check takes it, read once for the draft's
    # units; ``None``: no check (``support: off``), and no index made for it.
    reading: tuple[SourceIndex, dict[CitationRef, Cited]] | None = None
    if policy.support is not SupportPolicy.OFF and sources is not None:
        reading = _reading(index, sources)
    checking = reading  # made on first need where the policy turns the check off
    memo = _DraftMemo(hidden)  # each distinct unit text read once
    uncited = UnitStatus.UNCITED
    uncited_claim = FailureCode.UNCITED_CLAIM
    sentence = UnitKind.SENTENCE
    for position, unit in enumerate(units):
        refs = unit.refs
        if not refs:  # no citation at all (most units of a long uncited draft): as below, sooner
            verdicts.append(_new(UnitVerdict, (unit, uncited)))
            failures.append(
                checked_failure(
                    uncited_claim,
                    unit.path,
                    f"assertion sentence {unit.index + 1} has no citation"
                    if unit.kind is sentence
                    else "an assertion without any citation",
                )
            )
            continue
        redact = hidden and not hidden.isdisjoint(refs)
        if not cites.isdisjoint(refs) and not (redact and memo.only_hidden(unit.text)):
            # Cited: no verdict (redaction acts on the others). A sentence that also carries a
            # group of hidden-only tokens is not: its words go by the policy (rule 5).
            cited = refs if cites.issuperset(refs) else [r for r in refs if r in cites]
            text = memo.without(unit.text) if redact else unit.text
            claim = {
                "text": text,
                "citations": list(map(key_of, cited)),
                "grounding_status": cited_claim,
            }
            if reading is not None:
                result = _support(unit, text, cited, reading, support, position, memo.units)
                claim["support"] = result.level
            elif redact:  # rule 5 asks rule 6b even where the policy turns it off
                checking = checking or _reading(index, sources)
                result = check_cited(
                    text,
                    cited,
                    checking[1],
                    checking[0],
                    words_accuse=unit.kind is not UnitKind.PROPOSAL,
                    memo=memo.units,
                )
            if not redact or result.level is SupportLevel.SUPPORTED:
                if reading is not None and enforce and result.level is SupportLevel.UNSUPPORTED:
                    failures.append(_unsupported(unit, result, hidden))
                claims.append(claim)
                continue
            # It lost a citation and its visible sources do not support it alone: its words
            # may come from the hidden one (rule 5), so they go by the policy.
            status = _lost(unit, lost)
        else:
            status = unit_status(unit, resolutions, lost)
        verdicts.append(_new(UnitVerdict, (unit, status)))
        if status is hedged_status:
            claims.append(hedged)
        elif status is UnitStatus.REFUSED:
            refused = True
            failures.append(
                Failure(
                    code=FailureCode.UNSUPPORTED_ANSWER,
                    path=unit.path,
                    detail="its only support is not visible to the reader",
                )
            )
    return verdicts, claims, refused, support


class _DraftMemo:
    """One draft's units, each distinct text read once (a draft may repeat a sentence many
    times): rule 6b's check (``units``, per text and sources) and, for a unit that lost a
    citation, its hidden-only groups and its text without the hidden tokens (pure functions of
    the text and the hidden refs). Never kept past the draft."""

    __slots__ = ("_hidden", "_only", "_without", "units")

    def __init__(self, hidden: frozenset[CitationRef]) -> None:
        self._hidden = hidden
        self.units: UnitMemo = {}
        self._only: dict[str, bool] = {}
        self._without: dict[str, str] = {}

    def only_hidden(self, text: str) -> bool:
        """``hidden_only_group(text, hidden)``."""
        found = self._only.get(text)
        if found is None:
            found = self._only[text] = hidden_only_group(text, self._hidden)
        return found

    def without(self, text: str) -> str:
        """``remove_tokens(text, hidden)``."""
        found = self._without.get(text)
        if found is None:
            found = self._without[text] = remove_tokens(text, self._hidden)
        return found


def _reading(
    index: SourceIndex | None, sources: Mapping[CitationRef, str] | None
) -> tuple[SourceIndex, dict[CitationRef, Cited]]:
    """The source index and each resolved ref's text as rule 6b reads it."""
    index = index if index is not None else SourceIndex()
    return index, index.cited(sources or {})


def _lost(unit: ClaimUnit, policy: LostSupportPolicy) -> UnitStatus:
    """The status of a unit whose support went with a hidden citation (rule 7's policy; a
    proposal is the whole output: refused)."""
    if unit.kind is UnitKind.PROPOSAL or policy is LostSupportPolicy.REFUSE:
        return UnitStatus.REFUSED
    return UnitStatus.HEDGED if policy is LostSupportPolicy.HEDGE else UnitStatus.OMITTED


def lost_citation_keeps(
    resolved: Mapping[CitationRef, object],
    sources: Mapping[CitationRef, str],
    index: SourceIndex | None = None,
) -> Keeps:
    """Rule 5 for a sentence outside the claim units that lost a citation (a heading, a title,
    a question...): it keeps its words only where rule 6b finds it ``supported`` by the visible
    sources it still cites (``resolved``: the draft's visible resolved refs)."""
    checking: tuple[SourceIndex, dict[CitationRef, Cited]] | None = None

    def keeps(text: str, refs: tuple[CitationRef, ...]) -> bool:
        nonlocal checking
        cited = [ref for ref in refs if ref in resolved]
        if not cited:
            return False
        checking = checking or _reading(index, sources)
        result = check_cited(text, cited, checking[1], checking[0])
        return result.level is SupportLevel.SUPPORTED

    return keeps


def _support(  # noqa: PLR0917 -- one cited unit's part of check_claim_units's state
    unit: ClaimUnit,
    text: str,
    cited: Sequence[CitationRef],
    reading: tuple[SourceIndex, Mapping[CitationRef, Cited]],
    support: Support,
    position: int,
    memo: UnitMemo | None = None,
) -> SupportResult:
    """Rule 6b for one cited unit: its text (hidden tokens already out) against the texts of its
    resolved refs only, so words only a hidden source supports find nothing to match."""
    index, texts = reading
    result = check_cited(
        text, cited, texts, index, words_accuse=unit.kind is not UnitKind.PROPOSAL, memo=memo
    )
    support.of_unit[position] = result
    rank = _SUPPORT_RANK[result.level]
    of_ref = support.of_ref
    for ref in cited:
        seen = of_ref.get(ref)
        if seen is None or rank < _SUPPORT_RANK[seen]:
            of_ref[ref] = result.level
    return result


def _unsupported(
    unit: ClaimUnit, result: SupportResult, hidden: frozenset[CitationRef] = frozenset()
) -> Failure:
    """``unsupported_claim`` at the unit's path, naming what of the unit's own (visible) words
    no cited source has: never a source's text."""
    if result.missing_numbers:
        detail = "no cited source has " + ", ".join(result.missing_numbers[:5])
    elif result.negation_flip:
        detail = "it negates what no cited source negates"
    elif result.missing_words and result.score < 1.0:
        detail = (
            f"the cited sources cover {round(result.score * 100)}% of its words; missing: "
            + ", ".join(result.missing_words[:8])
        )
    else:  # words_accuse only ever lowers a level: unreachable, kept total
        detail = "the cited sources do not say it"
    if hidden and _names_an_id(detail, hidden):  # its own words, but a hidden id's digits
        detail = "the cited sources do not say it"
    if unit.kind is UnitKind.SENTENCE:
        detail = f"assertion sentence {unit.index + 1}: {detail}"
    return Failure(code=FailureCode.UNSUPPORTED_CLAIM, path=unit.path, detail=detail[:300])


_NUMBERS = re.compile(r"[0-9]+")


def _names_an_id(text: str, hidden: frozenset[CitationRef]) -> bool:
    """Whether a run of digits of ``text`` is a hidden id (rule 5: no hidden id in a regenerate
    request, even one the agent wrote as a plain number)."""
    ids = {str(ref.id) for ref in hidden}
    return any(run.lstrip("0") in ids for run in _NUMBERS.findall(text))


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


def hidden_of(
    refs: frozenset[CitationRef],
    words: str | None = None,
    replaced: list[int] | None = None,
    keeps: Keeps | None = None,
) -> HiddenRefs:
    """The ``HiddenRefs`` of ``refs``: their token texts written once for ``remove_hidden``."""
    return HiddenRefs(
        refs, frozenset([f"[{ref.kind.value}-{ref.id}]" for ref in refs]), words, replaced, keeps
    )


def _hidden_word_spans(text: str, hidden: HiddenRefs) -> list[tuple[int, int, str]]:
    """Contract rule 5 in every position (headings, titles, questions, lead-ins, code, table
    headers as well as claim units): the finest sentence around each group of citation tokens
    whose ids are all hidden, and each other sentence that lost a citation and that
    ``hidden.keeps`` does not keep, as a replacement of its words by ``hidden.words``
    (``worker.core.claims.hidden_words``)."""
    spans = word_spans(text, hidden.refs, hidden.words or "", hidden.keeps, hidden.judged)
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
            if token[5] == "0" and f"{token[:5]}{token[5:-1].lstrip('0') or '0'}]" in hidden.texts:
                hits.add(token)
    if not hits:
        return text
    cuts: list[tuple[int, int, str]] = []
    for token in hits:
        at = text.find(token)
        while at >= 0:
            cuts.append((at, at + len(token), ""))
            at = text.find(token, at + len(token))
    cuts.sort()
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
