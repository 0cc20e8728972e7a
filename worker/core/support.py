"""Support: does a cited unit say what its visible sources say? (contract rule 6b, seed 002)

Deterministic, no model and no network, linear in the unit and its sources, and explained: a
:class:`SupportResult` names the numbers and words of the unit that no source has, and the source
that covered the most. Only the texts the caller passes count, and the caller passes the
*visible* sources only (resolved, not hidden): words that only a hidden source supports fail here
even inside a unit that also cites a visible source.

The measure (thresholds and their choice: ``docs/support.md``, ``docs/decisions.md``):

1. **Numbers first.** Every number, date, time, percentage and amount of the unit must occur in
   some source as the same value: ``1,281`` = ``1281``; ``4.2 billion`` = ``4.2B`` = ``4,200
   million``; ``12%`` = ``12 percent``; ``3rd`` = ``3``; ``2026-05-04`` = ``May 4, 2026`` =
   ``4 May 2026``; ``14:05``. A number with a magnitude also matches the same digits written
   without one in a source (``$4.2`` in a table of billions), never with another magnitude
   (``4.2 million`` does not support ``4.2B``). Digits glued to letters are words (``p95``,
   ``Q3``, ``eu-west-1``), version strings are literal words (``2.3.0``), and a list number at
   the very start of a unit (``1.``) is not a claim. Spelled-out numbers in a *source* count
   (``ten minutes`` supports ``10 minutes``); in the unit they are words. A number found in no
   source makes the unit ``unsupported``.
2. **Content words.** The unit's words, case-folded, without stop words and numbers, lightly
   stemmed (plural, ``-ed``, ``-ing``, ``-ly``), are looked up in the union of the sources' words
   (hyphenated compounds both split and joined; CJK text as character bigrams). The share found
   is the ``score``: below ``UNSUPPORTED_BELOW`` the unit is ``unsupported``, below
   ``WEAK_BELOW`` it is ``weak`` (reported, never a failure).
3. **Negation.** A unit that negates (``not``, ``never``, ``no longer``, ``n't``…) where none of
   its sources negates anything asserts what no source says: ``unsupported``.
4. No source text at all: ``unchecked`` (never an accusation).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import NamedTuple

from worker.core.evidence import CitationRef

__all__ = [
    "MIN_WORDS_TO_ACCUSE",
    "UNSUPPORTED_BELOW",
    "WEAK_BELOW",
    "SourceIndex",
    "SourceText",
    "SupportLevel",
    "SupportResult",
    "check_support",
]

#: A unit whose content-word coverage is below this is ``unsupported`` (docs/support.md).
UNSUPPORTED_BELOW = 0.34
#: ... and below this ``weak``.
WEAK_BELOW = 0.6
#: Coverage alone accuses only a unit with at least this many content words: a label such as
#: ``Entry`` or ``Loitering begins`` is too short to measure (it is ``weak`` at most).
MIN_WORDS_TO_ACCUSE = 3


class SupportLevel(StrEnum):
    """How well a cited unit's visible sources support it (contract rule 6b)."""

    SUPPORTED = "supported"
    WEAK = "weak"
    UNSUPPORTED = "unsupported"
    UNCHECKED = "unchecked"


class SourceText(NamedTuple):
    """One visible cited source's text, as the caller chose it (verified quote, else summary, else
    title and text)."""

    ref: CitationRef
    text: str


class SupportResult(NamedTuple):
    """The verdict on one unit, with what explains it."""

    level: SupportLevel
    #: Share of the unit's content words found in the sources, in [0, 1] (1 with none).
    score: float
    #: Numbers, dates and quantities of the unit found in no source, as the unit writes them.
    missing_numbers: tuple[str, ...]
    #: Content words of the unit found in no source, as the unit writes them (first form seen).
    missing_words: tuple[str, ...]
    #: The source that covered the most of the unit (ties: the first given); ``None`` if unchecked.
    closest: CitationRef | None


class _Read(NamedTuple):
    """One text, read once: its number values and its content words."""

    #: Canonical values (``n:1281``, ``d:2026-05-04``, ``t:14:05``) -> the unit's spelling.
    numbers: dict[str, str]
    #: Values of numbers written without a magnitude (``n:4.2``): what ``$4.2`` may mean.
    bare: frozenset[str]
    #: Canonical values with a magnitude, by their bare digits (``n:4.2`` -> ``{n:4200000000}``).
    scaled_bare: dict[str, set[str]]
    #: Stemmed content word -> the text's spelling.
    words: dict[str, str]
    negates: bool


_TOKEN_RE = re.compile(r"\[(?:OBS|DOC|EVT)-[0-9]+\]")
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
            ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
            ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
            ("dec", "december"),
        ]
    )
    for m in names
}  # fmt: skip
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MAGNITUDE = {
    "thousand": 3, "k": 3, "million": 6, "mn": 6, "m": 6, "mio": 6,
    "billion": 9, "bn": 9, "b": 9, "trillion": 12, "tn": 12, "t": 12,
}  # fmt: skip
_SPELLED = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "twice": 2, "double": 2, "doubled": 2, "half": 0.5,
    "dozen": 12,
}  # fmt: skip
#: One scan finds, left to right, whichever comes first: a date (ISO, ``May 4, 2026``, ``4 May
#: 2026``), a time, a word with digits glued to letters (an identifier, read as a word), a
#: version string, or a number with its magnitude, percent or ordinal suffix.
_NUMERIC_RE = re.compile(
    rf"(?P<iso>(?<![\w.])(?P<iy>\d{{4}})-(?P<im>\d{{2}})-(?P<id>\d{{2}})(?!\w|\.\d))"
    rf"|(?P<mdy>\b(?P<m1>{_MONTH})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{{4}})\b)"
    rf"|(?P<dmy>(?<![\w.])(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m2>{_MONTH})\.?,?\s+"
    rf"(?P<y2>\d{{4}})\b)"
    r"|(?P<time>(?<![\w.:])(?P<hh>\d{1,2}):(?P<mm>\d{2})(?::\d{2})?(?![\w:]))"
    r"|(?P<ident>\b[^\W\d_][\w-]*?\d[\w-]*)"
    r"|(?P<version>(?<![\w.])\d+(?:\.\d+){2,}(?!\w|\.\d))"
    r"|(?P<num>(?<![\w.,])(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d,]\d)"
    r"(?:(?P<pct>\s?%|\s+per\s?cent\b)"
    r"|(?P<ord>(?:st|nd|rd|th)\b)"
    r"|(?P<mag>(?:\s+(?:thousand|million|billion|trillion|bn|mn|mio)|(?:k|m|b|bn|mn|t|tn))\b))?)",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
_SEPARATORS_RE = re.compile(r"[-'’]")
_LIST_NUMBER_RE = re.compile(r"\s*\(?\d{1,3}[.)]\s")
_NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot",
     "didn't", "doesn't", "don't", "isn't", "wasn't", "weren't", "aren't", "won't", "hasn't",
     "haven't", "hadn't", "couldn't", "shouldn't", "wouldn't", "can't", "didn’t", "doesn’t",
     "isn’t", "wasn’t", "won’t", "can’t", "unable"}
)  # fmt: skip
_STOP_WORDS = (
    """a an the and or but if then than that this these those there here of in on at to for from
    by with as into onto over under about after before during between through within across
    per via up down out off again further once is am are was were be been being have has had do
    does did doing will would shall should can could may might must it its it's they them their
    theirs he him his she her hers we us our ours you your yours i me my mine who whom whose which
    what when where why how all any both each few more most other some such only own same so too
    very just also not no nor never s t also while since until both either yet already still
    said says say reported report reports according per cent percent approximately about around
    roughly nearly almost some several many much"""
)
_STOP = frozenset(_STOP_WORDS.split())
#: CJK ideographs, kana and hangul: read as character bigrams (no spaces between words).
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def _stem(word: str) -> str:
    """A light stem: enough to equate plural and inflected forms, never a dictionary."""
    n = len(word)
    if n > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if n > 5 and word.endswith("ing"):
        return word[:-3]
    if n > 4 and word.endswith("ed"):
        return word[:-2] if not word.endswith("eed") else word[:-1]
    if n > 4 and word.endswith("ly"):
        return word[:-2]
    if n > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if n > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    if n > 2 and word.endswith("e"):
        return word[:-1]
    return word


def _decimal_key(text: str, exponent: int = 0) -> str | None:
    try:
        value = Decimal(text.replace(",", "")).scaleb(exponent)
    except InvalidOperation:
        return None
    value = value.normalize()
    return f"n:{value:f}"


def _read(text: str, *, unit: bool) -> _Read:
    """Numbers and content words of ``text`` (tokens removed); linear in ``text``."""
    folded = unicodedata.normalize("NFKC", _TOKEN_RE.sub(" ", text))
    numbers: dict[str, str] = {}
    bare: set[str] = set()
    scaled_bare: dict[str, set[str]] = {}
    words: dict[str, str] = {}
    start = 0
    if unit:
        lead = _LIST_NUMBER_RE.match(folded)
        if lead is not None:
            start = lead.end()
    pieces: list[str] = []
    cursor = start
    for m in _NUMERIC_RE.finditer(folded, start):
        pieces.append(folded[cursor : m.start()])
        cursor = m.end()
        if m.group("ident") or m.group("version"):
            word = m.group(0)  # a word, whole: ``p95``, ``eu-west-1``, ``2.3.0``
            words.setdefault(_stem(word.casefold()), word)
            continue
        key = _number_key(m, bare, scaled_bare)
        if key is not None:
            numbers.setdefault(key, m.group(0).strip())
    pieces.append(folded[cursor:])
    negates = _read_words(" ".join(pieces).casefold(), unit, words, numbers, bare)
    return _Read(numbers, frozenset(bare), scaled_bare, words, negates)


def _number_key(m: re.Match[str], bare: set[str], scaled_bare: dict[str, set[str]]) -> str | None:
    """The canonical value of one numeric match (not an identifier), noting bare and scaled
    values."""
    if m.group("iso"):
        return f"d:{m.group('iy')}-{m.group('im')}-{m.group('id')}"
    if m.group("mdy"):
        return _date_key(m.group("y1"), m.group("m1"), m.group("d1"))
    if m.group("dmy"):
        return _date_key(m.group("y2"), m.group("m2"), m.group("d2"))
    if m.group("time"):
        return f"t:{int(m.group('hh')):02d}:{m.group('mm')}"
    digits = m.group("digits")
    mag = m.group("mag")
    if not mag:
        key = _decimal_key(digits)
        if key is not None:
            bare.add(key)
        return key
    key = _decimal_key(digits, _MAGNITUDE.get(mag.strip().lower(), 0))
    plain = _decimal_key(digits)
    if key is not None and plain is not None:
        scaled_bare.setdefault(plain, set()).add(key)
    return key


def _read_words(
    rest: str, unit: bool, words: dict[str, str], numbers: dict[str, str], bare: set[str]
) -> bool:
    """Fill ``words`` with the content words of ``rest`` (and, in a source, ``numbers`` with its
    spelled-out numbers); whether ``rest`` negates."""
    negates = False
    for w in _WORD_RE.findall(rest):
        if w in _NEGATIONS or w.endswith(("n't", "n’t")):
            negates = True
            continue
        parts = _SEPARATORS_RE.split(w) if not w.isalnum() else [w]
        if len(parts) > 1:
            if not unit:
                words.setdefault(_stem("".join(parts)), w)
            if parts[-1] == "s":  # possessive: the word itself
                parts = parts[:-1]
        for part in parts:
            if not part or part in _STOP or part.isdigit():
                continue
            if not unit and part in _SPELLED:
                key = _decimal_key(str(_SPELLED[part]))
                if key is not None:
                    numbers.setdefault(key, part)
                    bare.add(key)
            if _CJK_RE.search(part):
                _cjk_bigrams(part, words)
                continue
            words.setdefault(_stem(part), part)
    return negates


def _cjk_bigrams(part: str, words: dict[str, str]) -> None:
    for run in _CJK_RE.findall(part):
        if len(run) == 1:
            words.setdefault(run, run)
        for i in range(len(run) - 1):
            words.setdefault(run[i : i + 2], run[i : i + 2])


def _date_key(year: str, month: str, day: str) -> str:
    return f"d:{year}-{_MONTHS[month.lower()]:02d}-{int(day):02d}"


class SourceIndex:
    """A memo of source texts read once, shared by every draft of one batch (sources are cited by
    many drafts); the caller makes one per batch and drops it after. Never process-wide: a cache
    across batches would make a benchmark of repeated drafts measure less than the worker pays."""

    __slots__ = ("_read",)

    def __init__(self) -> None:
        self._read: dict[str, _Read] = {}

    def read(self, text: str) -> _Read:
        """The source ``text`` read (once per index)."""
        found = self._read.get(text)
        if found is None:
            found = self._read[text] = _read(text, unit=False)
        return found


def check_support(
    unit_text: str,
    sources: Sequence[SourceText],
    index: SourceIndex | None = None,
    *,
    words_accuse: bool = True,
) -> SupportResult:
    """Whether ``sources`` (the unit's visible cited sources) support ``unit_text``.

    ``words_accuse=False``: coverage is reported but makes the unit ``weak`` at most (a
    proposal's summary is an action, not an assertion: its numbers and negations still count).
    """
    texts = [s for s in sources if s.text and not s.text.isspace()]
    if not texts:
        return SupportResult(SupportLevel.UNCHECKED, 0.0, (), (), None)
    index = index if index is not None else SourceIndex()
    unit = _read(unit_text, unit=True)
    read = [index.read(s.text) for s in texts]
    plain_of = {key: plain for plain, keys in unit.scaled_bare.items() for key in keys}
    missing_numbers = tuple(
        spelled
        for key, spelled in unit.numbers.items()
        if not _number_found(key, plain_of.get(key), read)
    )
    total = len(unit.words)
    best_ref, best = texts[0].ref, -1
    found: set[str] = set()
    for source, r in zip(texts, read, strict=True):
        hits = unit.words.keys() & r.words.keys()
        found |= hits
        if len(hits) > best:
            best_ref, best = source.ref, len(hits)
    missing_words = tuple(w for key, w in unit.words.items() if key not in found)
    score = 1.0 if total == 0 else (total - len(missing_words)) / total
    negation_flip = unit.negates and not any(r.negates for r in read)
    accuse = words_accuse and total >= MIN_WORDS_TO_ACCUSE
    if missing_numbers or negation_flip or (accuse and score < UNSUPPORTED_BELOW):
        level = SupportLevel.UNSUPPORTED
    elif score < WEAK_BELOW:
        level = SupportLevel.WEAK
    else:
        level = SupportLevel.SUPPORTED
    return SupportResult(level, round(score, 3), missing_numbers, missing_words, best_ref)


def _number_found(key: str, plain: str | None, read: Sequence[_Read]) -> bool:
    """A unit's number value in some source: the same value, or, for a value the unit wrote
    with a magnitude (``plain``: its digits alone), those digits written without any magnitude in
    a source that writes them with no other magnitude either."""
    for r in read:
        if key in r.numbers:
            return True
        if plain is not None and plain in r.bare and r.scaled_bare.get(plain, {key}) <= {key}:
            return True
    return False
