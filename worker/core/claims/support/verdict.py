"""The verdict on one cited unit (contract rule 6b): its findings, and its level from the
measured precision of each kind of finding.

Each kind of finding is something the unit says that no cited source has: a value (a number,
a date, a number in words), a name or rare word, too little of its weighted words, a negation.
A kind fails a draft (``unsupported``) only if its precision on the public labelled set (WiCE
test, ``docs/support.md``) is at least 0.9: those are :data:`FAILING`. Any other finding, or a
score below :data:`WEAK_BELOW`, makes the unit ``weak`` (reported, never a failure).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from itertools import filterfalse, islice
from operator import attrgetter
from typing import NamedTuple

from worker.core.citations.evidence import CitationRef
from worker.core.claims.support.index import Cited, SourceIndex, SourceRead, SourceText
from worker.core.claims.support.scan import unit_missing
from worker.core.claims.support.scan import visible as _visible
from worker.core.claims.support.values import DATE, NUMBER, SPELLED, Value
from worker.core.claims.support.words import Word, defined_acronyms, tokens
from worker.core.contract import SupportLevel

__all__ = [
    "FAILING",
    "LOW_COVERAGE_BELOW",
    "MIN_WEIGHT_TO_ACCUSE",
    "VERY_LOW_COVERAGE_BELOW",
    "WEAK_BELOW",
    "Finding",
    "SupportResult",
    "UnitMemo",
    "check_cited",
    "check_support",
    "supported_cited",
]


class Finding(StrEnum):
    """A kind of finding: what of the unit no cited source has."""

    #: A number, amount, quantity or percentage (digits).
    NUMBER = "missing_number"
    #: A date, date range, year-month, decade, time or quarter.
    DATE = "missing_date"
    #: A number written in words (``nine``, ``thirteenth``, ``half``).
    SPELLED = "missing_spelled_number"
    #: A name (capitalised mid-sentence, not common) or a rare word.
    NAME = "missing_name"
    #: Too little of the unit's words, weighed by rarity (``score`` < ``LOW_COVERAGE_BELOW``).
    COVERAGE = "low_coverage"
    #: Far too little (``score`` < ``VERY_LOW_COVERAGE_BELOW``; none at all included).
    VERY_LOW = "very_low_coverage"
    #: The unit negates where none of its sources negates anything.
    NEGATION = "negation"


#: The kinds whose precision on WiCE test is at least 0.9 (``docs/support.md``; a test keeps
#: this equal to the table there): only these make a unit ``unsupported``.
FAILING: frozenset[Finding] = frozenset(
    {Finding.NUMBER, Finding.SPELLED, Finding.NAME, Finding.VERY_LOW, Finding.NEGATION}
)
#: Weighted share of the unit's words found below which ``low_coverage`` is found.
LOW_COVERAGE_BELOW = 0.5
#: ... and ``very_low_coverage`` (the highest cut whose precision on WiCE dev is 1.00).
VERY_LOW_COVERAGE_BELOW = 0.25
#: ... and below which a unit with no finding is still ``weak``.
WEAK_BELOW = 0.6
#: Coverage findings need at least this much weight of words.
MIN_WEIGHT_TO_ACCUSE = 3.0

#: ``missing_name`` needs at least this many of the unit's names in no source.
MIN_NAMES = 1
#: ... or this many capitalised words (``words.CAP_ZIPF``).
MIN_CAPITALS = 2

_DIGIT = re.compile(r"\d")
#: A citation token: its digits are no value of the unit.
_TOKEN_RE = re.compile(r"\[(?:OBS|DOC|EVT)-[0-9]+\]")
#: Every kind, in :class:`Finding` order (iterating the enum itself runs Python per member).
_FINDINGS = tuple(Finding)
#: The key of a word that is no content (``Word.content``).
_NO_STEM = frozenset([""])
_KIND = {NUMBER: Finding.NUMBER, DATE: Finding.DATE, SPELLED: Finding.SPELLED}


class SupportResult(NamedTuple):
    """The verdict on one unit, with what explains it."""

    level: SupportLevel
    #: Share of the unit's content words found in the sources, weighed by rarity, in [0, 1]
    #: (1 with none).
    score: float
    #: Values of the unit found in no source, as the unit writes them.
    missing_numbers: tuple[str, ...]
    #: Content words of the unit found in no source, as the unit writes them (first form seen).
    missing_words: tuple[str, ...]
    #: The source that covered the most of the unit (ties: the first given); ``None`` if unchecked.
    closest: CitationRef | None
    #: The unit negates (``not``, ``never``, ``n't``…) where none of its sources negates anything.
    negation_flip: bool = False
    #: The kinds of finding, in :class:`Finding` order (the failing ones make it ``unsupported``).
    findings: tuple[Finding, ...] = ()


_UNCHECKED = SupportResult(SupportLevel.UNCHECKED, 0.0, (), (), None)

#: One draft's memo of checked units: (its text as read, its sources' texts in order,
#: ``words_accuse``) -> the result and the unit's content stems (``closest`` depends on the refs,
#: so it is found again for each). A draft that repeats a sentence against the same texts (a
#: table's rows, a heading per section) reads it once; one per draft, never per batch or process,
#: so that a benchmark of repeated drafts measures what the worker pays for each.
UnitMemo = dict[tuple[str, tuple[str, ...], bool], tuple[SupportResult, frozenset[str]]]


def check_support(
    unit_text: str,
    sources: Sequence[SourceText],
    index: SourceIndex | None = None,
    *,
    words_accuse: bool = True,
) -> SupportResult:
    """Whether ``sources`` (the unit's visible cited sources) support ``unit_text``.

    ``words_accuse=False``: word findings make the unit ``weak`` at most (a proposal's summary
    is an action, not an assertion: its values and negations still count)."""
    texts = [s for s in sources if s.text and not s.text.isspace()]
    if not texts:
        return _UNCHECKED
    index = index if index is not None else SourceIndex()
    return _check(unit_text, texts, [index.read(s.text) for s in texts], index, words_accuse)


def check_cited(
    unit_text: str,
    refs: Sequence[CitationRef],
    cited: Mapping[CitationRef, Cited],
    index: SourceIndex,
    *,
    words_accuse: bool = True,
    memo: UnitMemo | None = None,
) -> SupportResult:
    """``check_support`` of ``unit_text`` against the sources of ``refs``, read once for the
    draft (``cited``: :meth:`SourceIndex.cited` of its refs' texts; ``memo``: the draft's
    :data:`UnitMemo`, so that a unit repeated against the same texts is checked once)."""
    pairs = [cited[r] for r in refs if r in cited]
    if not pairs:
        return _UNCHECKED
    texts, read = zip(*pairs, strict=True)
    if memo is None:
        return _check(unit_text, texts, read, index, words_accuse)
    text = _as_read(unit_text)
    key = (text, tuple(map(_TEXT, texts)), words_accuse)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _checked(text, texts, read, index, words_accuse)
        return found[0]
    result, stems = found
    closest = _closest(stems, texts, read)
    if closest == result.closest:
        return result
    return _new(SupportResult, (*result[:4], closest, *result[5:]))


def supported_cited(
    unit_text: str,
    refs: Sequence[CitationRef],
    cited: Mapping[CitationRef, Cited],
    index: SourceIndex,
) -> bool:
    """Whether ``check_cited(unit_text, refs, cited, index).level`` is ``supported``, read in
    the cheapest order: a unit that its words already make ``weak`` or ``unsupported`` (a name
    or a negation no source has, too little of its words) has its values never read."""
    pairs = [cited[r] for r in refs if r in cited]
    if not pairs:
        return False
    texts, read = zip(*pairs, strict=True)
    text = _as_read(unit_text)
    findings: set[Finding] = set()
    distinct, words, _, missing = _unit_words(text, texts, read, index)
    if missing and (_words_missing(distinct, words, missing, findings)[0] < WEAK_BELOW or findings):
        return False
    number_words = month = False
    if any(map(_MARKS, words)):
        if any(map(_NEGATION, words)) and not any(r.negates for r in read):
            return False
        number_words, month = any(map(_NUMBER, words)), any(map(_MONTH, words))
    return not _missing_values(text, number_words, month, texts, index, findings)


def _as_read(unit_text: str) -> str:
    """The unit's text as the check reads it: as the reader sees it, citation tokens out."""
    text = _visible(unit_text)
    if "[" in text:
        text = _TOKEN_RE.sub(" ", text)
    return text


def _check(
    unit_text: str,
    texts: Sequence[SourceText],
    read: Sequence[SourceRead],
    index: SourceIndex,
    words_accuse: bool,
) -> SupportResult:
    return _checked(_as_read(unit_text), texts, read, index, words_accuse)[0]


def _checked(
    text: str,
    texts: Sequence[SourceText],
    read: Sequence[SourceRead],
    index: SourceIndex,
    words_accuse: bool,
) -> tuple[SupportResult, frozenset[str]]:
    """``_check`` of a unit's text as read (``_as_read``), with its content stems."""
    findings: set[Finding] = set()
    distinct, words, stems, missing = _unit_words(text, texts, read, index)
    number_words = month = negation = False
    if any(map(_MARKS, words)):
        number_words, month = any(map(_NUMBER, words)), any(map(_MONTH, words))
        negation = any(map(_NEGATION, words))
    missing_values = _missing_values(text, number_words, month, texts, index, findings)
    if missing:
        score, missing_words = _words_missing(distinct, words, missing, findings)
    else:
        score, missing_words = 1.0, ()
    negation_flip = negation and not any(r.negates for r in read)
    if negation_flip:
        findings.add(Finding.NEGATION)
    failing = findings & FAILING
    if not words_accuse:
        failing -= {Finding.NAME, Finding.COVERAGE, Finding.VERY_LOW}
    if failing:
        level = SupportLevel.UNSUPPORTED
    elif findings or score < WEAK_BELOW:
        level = SupportLevel.WEAK
    else:
        level = SupportLevel.SUPPORTED
    result = _new(
        SupportResult,
        (
            level,
            score,
            missing_values,
            missing_words,
            _closest(stems, texts, read),
            negation_flip,
            tuple(filter(findings.__contains__, _FINDINGS)) if findings else (),
        ),
    )
    return result, stems


def _unit_words(
    text: str, texts: Sequence[SourceText], read: Sequence[SourceRead], index: SourceIndex
) -> tuple[list[str], Sequence[Word], frozenset[str], frozenset[str]]:
    """A unit's distinct spellings, their words, its content stems, and the stems no cited source
    has less the acronyms it defines (``_not_defined``): what both the whole check and rule 5's
    question (``supported_cited``) read first. Content words by C-level ``map``: most units
    have every stem in a source, and then nothing more is read of them."""
    distinct = list(dict.fromkeys(tokens(text)))
    words = index.words.of(distinct)
    stems = frozenset(map(_CONTENT, words)) - _NO_STEM
    missing = stems - index.union_stems(texts, read)
    if missing and "(" in text:
        missing = _not_defined(text, distinct, words, missing)
    return distinct, words, stems, missing


def _not_defined(
    text: str, distinct: list[str], words: Sequence[Word], missing: frozenset[str]
) -> frozenset[str]:
    """``missing`` less the acronyms the unit defines itself (``National Air and Space Museum
    (NASM)``): the unit's words that state it are checked, its own short name for them is not.
    Only missing words with two capitals are looked for (most units have none)."""
    wanted = {
        t
        for t, w in zip(distinct, words, strict=True)
        if w.content in missing and sum(map(str.isupper, t)) >= 2
    }
    if not wanted:
        return missing
    defined = defined_acronyms(text, wanted)
    if not defined:
        return missing
    return missing - {w.content for t, w in zip(distinct, words, strict=True) if t in defined}


def _words_missing(
    distinct: list[str], words: Sequence[Word], missing: frozenset[str], findings: set[Finding]
) -> tuple[float, tuple[str, ...]]:
    """The unit's weighted score, the missing stems as the unit first spells them, and the word
    findings: a name (rare, or capitalised mid-sentence and not common), too little coverage."""
    contents = list(map(_CONTENT, words))
    weight = dict(zip(contents, map(_WEIGHT, words), strict=True))
    weight.pop("", None)
    total = sum(weight.values())
    # Summed in the unit's order, never a set's (whose order varies by process).
    kept = sum(map(weight.__getitem__, filterfalse(missing.__contains__, weight)))
    score = 1.0 if total <= 0.0 else round(kept / total, 3)
    # The head of a unit is capitalised anyway: a name there only if rare. (``intersection``
    # of an iterable looks up the unit's words without building a set of them.)
    names = missing.intersection(map(_NAME_MID, islice(words, 1, None)))
    head = words[0].name_head
    if (
        len(names) + (head in missing and head not in names) >= MIN_NAMES
        or len(missing.intersection(map(_CAPITAL, islice(words, 1, None)))) >= MIN_CAPITALS
    ):
        findings.add(Finding.NAME)
    # A short unit is judged on coverage only when none of its words is in a source: words only
    # a hidden source supports fail beside a visible citation (rule 6b), however few.
    if total >= MIN_WEIGHT_TO_ACCUSE or (total > 0.0 and kept <= 0.0):
        if score < VERY_LOW_COVERAGE_BELOW:
            findings.add(Finding.VERY_LOW)
        elif score < LOW_COVERAGE_BELOW:
            findings.add(Finding.COVERAGE)
    # Each missing stem once, as the unit first spells it (the first of its spellings wins in a
    # dict filled from the last; linear, where a ``list.index`` per missing stem would be
    # quadratic in a long unit), in the order the unit first has it (``weight``'s).
    first = dict(zip(reversed(contents), reversed(distinct), strict=True))
    return score, tuple(map(first.__getitem__, filter(missing.__contains__, weight)))


_CONTENT, _WEIGHT, _NAME_MID, _CAPITAL = (
    attrgetter("content"),
    attrgetter("weight"),
    attrgetter("name_mid"),
    attrgetter("capital"),
)
_MARKS, _NUMBER, _MONTH, _NEGATION = (
    attrgetter("marks"),
    attrgetter("number"),
    attrgetter("month"),
    attrgetter("negation"),
)
#: A source's text (``SourceText.text``), by C-level ``map``.
_TEXT = attrgetter("text")
#: ``tuple.__new__``: a NamedTuple from all its fields without its Python ``__new__``.
_new = tuple.__new__


def _missing_values(  # noqa: PLR0917 -- a unit's text, its marks, and its sources
    text: str,
    number_words: bool,
    month: bool,
    texts: Sequence[SourceText],
    index: SourceIndex,
    findings: set[Finding],
) -> tuple[str, ...]:
    """The unit's values no source has (as the unit spells them); their kinds into ``findings``."""
    if not (number_words or month) and _DIGIT.search(text) is None:
        return ()  # no value
    missing: list[Value] = unit_missing(text, number_words, index.union_keys(texts))
    if not missing:
        return ()
    findings.update(_KIND[v.kind] for v in missing)
    return tuple(dict.fromkeys(v.spelled for v in missing))  # a range's two ends: once


def _closest(
    unit: frozenset[str], texts: Sequence[SourceText], read: Sequence[SourceRead]
) -> CitationRef:
    """The source with the most of the unit's stems (ties: the first given)."""
    if len(texts) == 1 or not unit:
        return texts[0].ref
    best_ref, best = texts[0].ref, -1
    for source, r in zip(texts, read, strict=True):
        hits = len(unit & r.stems)
        if hits > best:
            best_ref, best = source.ref, hits
    return best_ref
