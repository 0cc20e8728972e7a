"""Support: does a cited unit say what its visible sources say? (contract rule 6b)

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
   ``Q3``, ``eu-west-1``), version strings are literal (``2.3.0``), and a list number at the
   very start of a unit (``1.``) is not a claim. Spelled-out numbers in a *source* count (``ten
   minutes`` supports ``10 minutes``); in the unit they are words. A unit whose numbers are all
   plain (no month, magnitude or suffix beside them) and each spelled the same in some source is
   not read further. A number found in no source makes the unit ``unsupported``.
2. **Content words.** The unit's words, case-folded, without stop words and numbers, lightly
   stemmed (plural, ``-ed``, ``-ing``, ``-ly``, a final ``e``), are looked up in the union of the
   sources' words (hyphenated compounds split; CJK text as character bigrams). The share found
   is the ``score``: below ``UNSUPPORTED_BELOW`` a unit of ``MIN_WORDS_TO_ACCUSE`` words or more
   is ``unsupported``, and so is a unit none of whose words is in any source; below
   ``WEAK_BELOW`` it is ``weak`` (reported, never a failure).
3. **Negation.** A unit that negates (``not``, ``never``, ``no longer``, ``n't``…) where none of
   its sources negates anything asserts what no source says: ``unsupported``.
4. No source text at all: ``unchecked`` (never an accusation).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from itertools import compress
from typing import NamedTuple, cast

from worker.core.citations.evidence import CitationRef
from worker.core.contract import SupportLevel

__all__ = [
    "MIN_WORDS_TO_ACCUSE",
    "UNSUPPORTED_BELOW",
    "WEAK_BELOW",
    "SourceIndex",
    "SourceText",
    "SupportLevel",
    "SupportResult",
    "check_cited",
    "check_support",
]

#: A unit whose content-word coverage is below this is ``unsupported`` (docs/support.md).
UNSUPPORTED_BELOW = 0.34
#: ... and below this ``weak``.
WEAK_BELOW = 0.6
#: Partial coverage accuses only a unit with at least this many content words: ``Loitering
#: begins`` beside ``loitered`` is ``weak``. A unit none of whose words is in a source is
#: ``unsupported`` whatever its length.
MIN_WORDS_TO_ACCUSE = 3


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
    #: The unit negates (``not``, ``never``, ``n't``…) where none of its sources negates anything.
    negation_flip: bool = False


class _Read(NamedTuple):
    """One text, read once: its number values and its content words."""

    #: Canonical values (``n:1281``, ``d:2026-05-04``, ``t:14:05``) -> the unit's spelling.
    numbers: dict[str, str]
    #: Values of numbers written without a magnitude (``n:4.2``): what ``$4.2`` may mean.
    bare: frozenset[str]
    #: Canonical values with a magnitude, by their bare digits (``n:4.2`` -> ``{n:4200000000}``).
    scaled_bare: dict[str, set[str]]
    #: Stemmed content words.
    words: set[str]
    negates: bool
    #: A unit's case-folded words in order, to spell its missing words (empty for a source).
    tokens: list[str]
    #: Every number as spelled (``4.5``, ``1,281``, ``04:13``): verbatim, without context.
    spellings: frozenset[str]
    #: A unit whose numbers were not read yet (``None``: read, or none to read): its text, to
    #: read them only when some spelling is in no source (``_numbers_pending``).
    pending: str | None


#: ``tuple.__new__``: a NamedTuple from all its fields without its Python ``__new__``.
_new = tuple.__new__
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
#: Every numeric thing starts at a digit (the pattern opens with ``\d``, so ``re`` skips to the
#: next digit in C): an ISO date, a day-first date (``4 May 2026``), a time, a version string, or
#: a number with its magnitude, percent or ordinal suffix. A month-first date (``May 4, 2026``)
#: is its day number with the month read just before it (``_MONTH_BEFORE_RE``). The look-behinds
#: after the first digit keep digits glued to letters (``p95``, ``eu-west-1``) words.
_NUMERIC = (
    r"\d(?<![\w.,]\d)(?<![^\W\d_]-\d)(?:"
    r"(?P<iso>(?<=\d)\d{3}-\d{2}-\d{2}(?!\w|\.\d))"
    rf"|(?P<dmy>\d?(?:st|nd|rd|th)?\s+(?P<m2>{_MONTH})\.?,?\s+(?P<y2>\d{{4}})\b)"
    r"|(?P<time>\d?:(?P<mm>\d{2})(?::\d{2})?(?![\w:]))"
    r"|(?P<version>\d*(?:\.\d+){2,}(?!\w|\.\d))"
    r"|(?P<num>(?:\d{0,2}(?:,\d{3})+|\d*)(?:\.\d+)?(?![\d,]\d)"
    r"(?:(?P<pct>\s?%|\s+per\s?cent\b)"
    r"|(?P<ord>(?:st|nd|rd|th)\b)"
    r"|(?P<mag>(?:\s+(?:thousand|million|billion|trillion|bn|mn|mio)|(?:k|m|b|bn|mn|t|tn))\b))?))"
)
_NUMERIC_RE = re.compile(_NUMERIC, re.IGNORECASE)
#: The same without day-first dates, for a text that names no month (most: ~4x faster).
_NUMERIC_NO_MONTH_RE = re.compile(
    _NUMERIC.replace(_NUMERIC[_NUMERIC.index("|(?P<dmy>") : _NUMERIC.index("|(?P<time>")], ""),
    re.IGNORECASE,
)
_MONTH_BEFORE_RE = re.compile(rf"\b({_MONTH})\.?\s+$", re.IGNORECASE)
_YEAR_AFTER_RE = re.compile(r"(?:st|nd|rd|th)?,?\s+(\d{4})\b")
_DIGIT_RE = re.compile(r"\d")
#: A number as spelled, without what may surround it.
_SPELLING_RE = re.compile(r"\d(?:[\d.,:]*\d)?")
#: The same for ASCII text (faster: a byte class, not the Unicode digits).
_ASCII_SPELLING_RE = re.compile(r"[0-9](?:[0-9.,:]*[0-9])?")
#: A digit glued to a suffix that changes its value or kind (``4.2B``, ``3rd``, ``12k``, ``5%``).
_SUFFIXED_RE = re.compile(r"\d[^\W\d_%]|\d\s?%")
#: For ASCII text, ``_SPELLING_RE`` and ``_SUFFIXED_RE`` in one scan: every spelling, with the
#: suffix glued to it if any (a suffix always follows a spelling's last digit), so a suffixed
#: number is spelled alike in no source.
_SPELLING_SUFFIXED_RE = re.compile(
    r"[0-9](?:[0-9.,:]*[0-9])?(?:[A-Za-z]|[ \t\n\r\f\v\x1c-\x1f]?%)?"
)
#: Words that scale the number before them.
_MAGNITUDES = frozenset({"thousand", "million", "billion", "trillion", "bn", "mn", "mio", "tn"})
_DIGITS = frozenset("0123456789")
#: Words that make a unit's numbers more than plain (a date's month, a magnitude).
_PLAIN_NOT = frozenset(_MONTHS) | _MAGNITUDES
#: Punctuation to spaces, so ``str.split`` gives the words: hyphens and apostrophes split too
#: (``connection-pool`` is ``connection pool``, ``Aurora's`` is ``aurora s``).
_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_SPACES = str.maketrans(dict.fromkeys(_PUNCTUATION + "‘’“”–—…•·", " "))
#: The same for ASCII text, as a byte table (``bytes.translate`` is ~10x ``str.translate``).
_ASCII_SPACES = bytes(32 if chr(b) in _PUNCTUATION else b for b in range(256))
#: The same, case-folded too (ASCII ``casefold`` is ``lower``): a unit's words in one pass.
_ASCII_FOLD = bytes(
    32 if chr(b) in _PUNCTUATION else ord(chr(b).lower()) if b < 128 else b for b in range(256)
)
_LIST_NUMBER_RE = re.compile(r"\s*\(?\d{1,3}[.)]\s")
_NEGATIONS = frozenset(
    {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot",
     "unable", "t"}  # ``t``: what ``didn't`` leaves once its apostrophe is a space
)  # fmt: skip
_STOP_WORDS = (  # fmt: skip
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
#: CJK ideographs, kana and hangul: read as character bigrams (no spaces between words).
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def _stem(word: str) -> str:
    """A light stem: enough to equate plural and inflected forms, never a dictionary."""
    n = len(word)
    if n > 4 and word[-3:] == "ies":
        return word[:-3] + "y"
    if n > 5 and word[-3:] == "ing":
        return word[:-3]
    if n > 4 and word[-2:] in ("ed", "ly"):
        return word[:-2]
    if n > 3 and word[-2:] == "es" and word[-3] in "sxz":
        return word[:-2]
    if n > 3 and word[-1] in "se" and word[-2] != "s":
        return word[:-1]
    return word


#: Stop words, and the letters a split leaves (``s`` of ``Aurora's``, ``t`` of ``didn't``).
_STOP = frozenset(_STOP_WORDS.split()) | frozenset("abcdefghijklmnopqrstuvwxyz")


def _decimal_key(text: str, exponent: int = 0) -> str | None:
    if not exponent and text.isdigit():  # the common case, without Decimal
        return f"n:{text.lstrip('0') or '0'}"
    try:
        value = Decimal(text.replace(",", "")).scaleb(exponent)
    except InvalidOperation:
        return None
    value = value.normalize()
    return f"n:{value:f}"


def _read(text: str, stems: dict[str, str], *, unit: bool, numbers_later: bool = False) -> _Read:
    """Numbers and content words of ``text`` (tokens removed); linear in ``text``: C-level scans
    but a step per number found and per distinct word (``stems``: the batch's memo of stems).

    ``numbers_later`` (a source): its number values are not read, only its spellings; the
    index reads them (:meth:`SourceIndex.with_numbers`) once some unit needs them."""
    if "[" in text:
        text = _TOKEN_RE.sub(" ", text)
    ascii_text = text.isascii()
    if not ascii_text:
        text = unicodedata.normalize("NFKC", text)
    numbers: dict[str, str] = {}
    bare: set[str] = set()
    scaled_bare: dict[str, set[str]] = {}
    folded = text.casefold()
    tokens = _split(folded)
    raw = set(tokens)
    spellings: frozenset[str] = frozenset()
    pending: str | None = None
    if _DIGIT_RE.search(text) is not None:
        spelling = _ASCII_SPELLING_RE if ascii_text else _SPELLING_RE
        spellings = frozenset(spelling.findall(text))
        months = not raw.isdisjoint(_MONTHS)
        if numbers_later or (
            unit and not months and raw.isdisjoint(_MAGNITUDES) and not _SUFFIXED_RE.search(text)
        ):
            pending = text  # plain numbers: read only if one is spelled in no source
        else:
            _read_numbers(text, unit, months, numbers, bare, scaled_bare)
    negates = not raw.isdisjoint(_NEGATIONS)
    raw.difference_update(_STOP)
    if not unit:  # ``ten minutes`` supports ``10 minutes``
        for spelled in raw.intersection(_SPELLED):
            value = _decimal_key(str(_SPELLED[spelled]))
            if value is not None:
                numbers.setdefault(value, spelled)
                bare.add(value)
    if not folded.isascii() and _CJK_RE.search(folded) is not None:
        raw = {w for w in raw if _CJK_RE.search(w) is None}
        for run in _CJK_RE.findall(folded):
            raw.update([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    get = stems.get
    # By the memo in C; a word it does not have yet is stemmed (a word led by a digit is a
    # number or its suffix, ``4.2B`` splits to ``4`` and ``2b``: ``""``, no word).
    words = set(map(get, raw))
    if None in words:
        words = {get(w) or _remember(stems, w) for w in raw}
    words.discard("")
    return _new(
        _Read,
        (
            numbers,
            frozenset(bare),
            scaled_bare,
            words,
            negates,
            tokens if unit else [],
            spellings,
            pending,
        ),
    )


def _read_numbers(  # noqa: PLR0917 -- the parts of ``_read``'s result it fills
    text: str,
    unit: bool,
    months: bool,
    numbers: dict[str, str],
    bare: set[str],
    scaled_bare: dict[str, set[str]],
) -> None:
    """Every numeric value of ``text``, by one digit-anchored scan and a step per number."""
    start = 0
    if unit:
        lead = _LIST_NUMBER_RE.match(text)
        if lead is not None:
            start = lead.end()
    skip_to = start
    scan = _NUMERIC_RE if months else _NUMERIC_NO_MONTH_RE  # no month, no date names one
    for m in scan.finditer(text, start):
        if m.start() < skip_to:  # the year of a month-first date just read
            continue
        found = _number_key(text, m, bare, scaled_bare, months)
        if found is not None:
            key, spelled, skip_to = found
            numbers.setdefault(key, spelled)


def _split(folded: str) -> list[str]:
    """The words of a case-folded text: punctuation to spaces, then ``split``."""
    if folded.isascii():
        return folded.encode("ascii").translate(_ASCII_SPACES).decode("ascii").split()
    return folded.translate(_SPACES).split()


#: Words never stemmed (a stem would make them another word's).
_KEEP = frozenset({"news", "series", "species", "gas", "bus", "less", "us"})
#: What a batch's stem memo starts from: a stop word is no word (``""``), and neither is a word
#: led by a digit once read (``_remember``); a word never stemmed is its own stem.
_FIRST_STEMS = {**{w: w for w in _KEEP}, **dict.fromkeys(_STOP, "")}


def _remember(stems: dict[str, str], word: str) -> str:
    """``word``'s stem, memoised (``""`` for a word led by a digit: a number, no word)."""
    stem = stems[word] = "" if word[0] in _DIGITS else _stem(word)
    return stem


_SUPPORTED, _WEAK, _UNSUPPORTED = (
    SupportLevel.SUPPORTED,
    SupportLevel.WEAK,
    SupportLevel.UNSUPPORTED,
)


def _number_key(
    text: str,
    m: re.Match[str],
    bare: set[str],
    scaled_bare: dict[str, set[str]],
    months: bool,
) -> tuple[str, str, int] | None:
    """The canonical value of one numeric match, as the text spells it and where it ends (past
    the year of a month-first date); notes bare and scaled values."""
    spelled, end = m.group(0), m.end()
    if m.group("num") is not None:
        mag = m.group("mag")
        if mag is None and m.group("pct") is None and m.group("ord") is None:
            if months and len(spelled) <= 2:  # a day after its month: ``May 4, 2026``
                date = _month_first(text, m.start(), end, spelled)
                if date is not None:
                    return date
            key = _decimal_key(spelled)
            if key is not None:
                bare.add(key)
                return key, spelled, end
            return None
        spelled = spelled.strip()
        cut = m.start("mag") if mag else m.start("pct") if m.group("pct") else m.start("ord")
        number = text[m.start() : cut]
        if not mag:
            if months and len(number) <= 2:
                date = _month_first(text, m.start(), end, number)
                if date is not None:
                    return date
            key = _decimal_key(number)
            if key is None:
                return None
            bare.add(key)
            return key, spelled, end
        scaled = _decimal_key(number, _MAGNITUDE.get(mag.strip().lower(), 0))
        plain = _decimal_key(number)
        if scaled is None or plain is None:
            return None
        scaled_bare.setdefault(plain, set()).add(scaled)
        return scaled, spelled, end
    spelled = spelled.strip()
    if m.group("iso"):
        return f"d:{spelled[:10]}", spelled, end
    if months and m.group("dmy"):
        day = spelled.split()[0].rstrip("stndrh,")
        return _date_key(m.group("y2"), m.group("m2"), day), spelled, end
    if m.group("time"):
        hh, _, rest = spelled.partition(":")
        return f"t:{int(hh):02d}:{rest[:2]}", spelled, end
    return f"v:{spelled}", spelled, end  # a version string


def _month_first(text: str, start: int, end: int, day: str) -> tuple[str, str, int] | None:
    """``May 4, 2026``: the day at ``start`` after its month, with its year."""
    month = _MONTH_BEFORE_RE.search(text, max(0, start - 12), start)
    year = _YEAR_AFTER_RE.match(text, end) if month is not None else None
    if month is None or year is None:
        return None
    key = _date_key(year.group(1), month.group(1), day)
    return key, text[month.start() : year.end()], year.end()


def _date_key(year: str, month: str, day: str) -> str:
    return f"d:{year}-{_MONTHS[month.lower()]:02d}-{int(day):02d}"


class SourceIndex:
    """A memo of source texts read once, shared by every draft of one batch (sources are cited by
    many drafts); the caller makes one per batch and drops it after. Never process-wide: a cache
    across batches would make a benchmark of repeated drafts measure less than the worker pays."""

    __slots__ = ("_numbers", "_read", "stems")

    def __init__(self) -> None:
        self._read: dict[str, _Read] = {}
        #: Sources whose number values were read too (a unit needed them).
        self._numbers: dict[str, _Read] = {}
        #: Word -> stem, for every word read with this index (units' words too); words never
        #: stemmed are their own.
        self.stems: dict[str, str] = dict(_FIRST_STEMS)

    def read(self, text: str) -> _Read:
        """The source ``text`` read (once per index): its words, negation and number spellings;
        its number values only if already read (:meth:`with_numbers`)."""
        found = self._read.get(text)
        if found is None:
            found = self._read[text] = _read(text, self.stems, unit=False, numbers_later=True)
        return found

    def cited(self, texts: Mapping[CitationRef, str]) -> dict[CitationRef, Cited]:
        """Each ref of ``texts`` whose text has words, with that text read (for
        :func:`check_cited`: one draft's sources, read once for all its units)."""
        return {
            ref: (_new(SourceText, (ref, text)), self.read(text))
            for ref, text in texts.items()
            if text and not text.isspace()
        }

    def with_numbers(self, text: str) -> _Read:
        """The source ``text`` read with its number values (once per index)."""
        found = self._numbers.get(text)
        if found is None:
            lazy = self._read.get(text)
            if lazy is not None and lazy.pending is None:  # no digits: nothing more to read
                found = lazy
            else:
                found = _read(text, self.stems, unit=False)
            self._numbers[text] = found
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
    return _check(unit_text, texts, [index.read(s.text) for s in texts], index, words_accuse)


#: A cited source with words, and its reading (``SourceIndex.cited``).
Cited = tuple[SourceText, _Read]


def check_cited(
    unit_text: str,
    refs: Sequence[CitationRef],
    cited: Mapping[CitationRef, Cited],
    index: SourceIndex,
    *,
    words_accuse: bool = True,
) -> SupportResult:
    """``check_support`` of ``unit_text`` against the sources of ``refs``, read once for the
    draft (``cited``: :meth:`SourceIndex.cited` of its refs' texts; a ref without one has no
    text with words)."""
    pairs = [cited[r] for r in refs if r in cited]
    if not pairs:
        return SupportResult(SupportLevel.UNCHECKED, 0.0, (), (), None)
    texts, read = zip(*pairs, strict=True)
    return _check(unit_text, texts, read, index, words_accuse)


def _check(
    unit_text: str,
    texts: Sequence[SourceText],
    read: Sequence[_Read],
    index: SourceIndex,
    words_accuse: bool,
) -> SupportResult:
    """``check_support`` of ``unit_text`` against ``texts`` (none blank) and their ``read``."""
    text = _TOKEN_RE.sub(" ", unit_text) if "[" in unit_text else unit_text
    if text.isascii():
        return _check_ascii(text, texts, read, index, words_accuse)
    return _check_read(_read(unit_text, index.stems, unit=True), texts, read, index, words_accuse)


def _check_ascii(
    text: str,
    texts: Sequence[SourceText],
    read: Sequence[_Read],
    index: SourceIndex,
    words_accuse: bool,
) -> SupportResult:
    """``check_support`` of an ASCII unit (tokens already out): what ``_read`` and
    ``_check_read`` make of it, without the unit's ``_Read``: C-level set operations on its
    words (``map`` over the batch's stem memo), a Python step only to stem a word the batch has
    not seen yet."""
    data = text.encode("ascii")
    tokens = data.translate(_ASCII_FOLD).decode("ascii").split()
    if len(data.translate(None, b"0123456789")) == len(data):  # no digit: no number
        missing_numbers: tuple[str, ...] = ()
    elif not _PLAIN_NOT.isdisjoint(tokens) or not _spelled_alike(
        _SPELLING_SUFFIXED_RE.findall(text), read
    ):
        missing_numbers = _unit_numbers(text, set(tokens), texts, read, index)
    else:  # plain numbers, each spelled the same in some source: each is that source's value
        missing_numbers = ()
    stems = index.stems
    get = stems.get
    # Each word's stem by the memo, in C (a stop word, a number: ``""``); a word the batch has
    # not read yet is stemmed.
    memoised = set(map(get, tokens))
    words = {_stem_of(stems, w) for w in tokens} if None in memoised else cast("set[str]", memoised)
    words.discard("")
    total = len(words)
    if len(read) == 1:
        first = read[0]
        missing = words - first.words
        best_ref = texts[0].ref
        negation_flip = not first.negates and not _NEGATIONS.isdisjoint(tokens)
    else:
        best_ref, best = texts[0].ref, -1
        found: set[str] = set()
        for source, r in zip(texts, read, strict=True):
            hits = words & r.words
            found |= hits
            if len(hits) > best:
                best_ref, best = source.ref, len(hits)
        missing = words - found
        negation_flip = not _NEGATIONS.isdisjoint(tokens) and not any(r.negates for r in read)
    if missing:
        missing_words = _spell_missing(missing, tokens, get)
        missed = len(missing)
        share = (total - missed) / total
    else:
        missing_words = ()
        missed = 0
        share = 1.0
    # A short unit is accused on words only when none of them is in a source: ``Entry`` beside
    # ``entered`` is, a hidden source's lone word beside a visible citation is too.
    if missing_numbers or negation_flip:
        level = _UNSUPPORTED
    elif share >= WEAK_BELOW:
        level = _SUPPORTED
    elif (
        share < UNSUPPORTED_BELOW
        and words_accuse
        and (total >= MIN_WORDS_TO_ACCUSE or missed == total)
    ):
        level = _UNSUPPORTED
    else:
        level = _WEAK
    return _new(
        SupportResult,
        (
            level,
            round(share, 3) if missed else 1.0,
            missing_numbers,
            missing_words,
            best_ref,
            negation_flip,
        ),
    )


def _spell_missing(
    missing: set[str], tokens: list[str], get: Callable[[str], str | None]
) -> tuple[str, ...]:
    """``_spelled`` for an ASCII unit: its tokens whose stem is missing, in the order it writes
    them (each once): its content words by their stems, and a stop word spelled like a missing
    stem (``will`` of ``wills``)."""
    distinct = list(dict.fromkeys(tokens))
    spelled = list(compress(distinct, map(missing.__contains__, map(get, distinct))))
    stop = missing.intersection(tokens)
    stop.intersection_update(_STOP)
    if stop:
        spelled.extend(stop)
        spelled.sort(key=tokens.index)
    return tuple(spelled)


def _stem_of(stems: dict[str, str], word: str) -> str:
    """``word``'s stem from the memo, or read and remembered (``""``: no word)."""
    stem = stems.get(word)
    return _remember(stems, word) if stem is None else stem


def _spelled_alike(spellings: list[str], read: Sequence[_Read]) -> bool:
    """Whether each of a unit's number ``spellings`` is spelled the same in some source (a
    suffix glued to a digit, ``b`` of ``4.2b``, is in none)."""
    if read[0].spellings.issuperset(spellings):
        return True
    return len(read) > 1 and all(any(n in r.spellings for r in read) for n in spellings)


def _unit_numbers(
    text: str,
    raw: set[str],
    texts: Sequence[SourceText],
    read: Sequence[_Read],
    index: SourceIndex,
) -> tuple[str, ...]:
    """The numbers of a unit with digits that no source has (``_read`` and ``_check_read``'s
    numbers, for an ASCII unit)."""
    months = not raw.isdisjoint(_MONTHS)
    numbers: dict[str, str] = {}
    scaled_bare: dict[str, set[str]] = {}
    if not months and raw.isdisjoint(_MAGNITUDES) and not _SUFFIXED_RE.search(text):
        # Plain numbers only: when every one is spelled the same in some source, each is that
        # source's value; otherwise read them as values.
        spellings = _SPELLING_RE.findall(text)
        if len(read) == 1:
            if read[0].spellings.issuperset(spellings):
                return ()
        elif all(any(n in r.spellings for r in read) for n in spellings):
            return ()
        _read_numbers(text, True, False, numbers, set(), scaled_bare)
    else:
        _read_numbers(text, True, months, numbers, set(), scaled_bare)
        if not numbers:
            return ()
    return _missing_numbers(numbers, scaled_bare, [index.with_numbers(s.text) for s in texts])


def _check_read(
    unit: _Read,
    texts: Sequence[SourceText],
    read: Sequence[_Read],
    index: SourceIndex,
    words_accuse: bool,
) -> SupportResult:
    """``check_support`` of a unit read by ``_read`` (any text: NFKC, CJK bigrams)."""
    if unit.pending is not None:
        # Plain numbers only (no month, magnitude or suffix): when every one is spelled the same
        # in some source, each is that source's value; otherwise read them as values.
        if len(read) == 1:
            spelled_alike = unit.spellings <= read[0].spellings
        else:
            spelled_alike = all(any(n in r.spellings for r in read) for n in unit.spellings)
        if spelled_alike:
            missing_numbers: tuple[str, ...] = ()
        else:
            _read_numbers(unit.pending, True, False, unit.numbers, set(), unit.scaled_bare)
            valued = [index.with_numbers(s.text) for s in texts]
            missing_numbers = _missing_numbers(unit.numbers, unit.scaled_bare, valued)
    elif unit.numbers:
        missing_numbers = _missing_numbers(
            unit.numbers, unit.scaled_bare, [index.with_numbers(s.text) for s in texts]
        )
    else:
        missing_numbers = ()
    best_ref, best = texts[0].ref, -1
    found: set[str] = set()
    for source, r in zip(texts, read, strict=True):
        hits = unit.words & r.words
        found |= hits
        if len(hits) > best:
            best_ref, best = source.ref, len(hits)
    missing = unit.words - found
    missing_words = _spelled(unit.tokens, missing, index.stems) if missing else ()
    negation_flip = unit.negates and not any(r.negates for r in read)
    return _level(
        len(unit.words),
        len(missing),
        missing_numbers,
        missing_words,
        best_ref,
        negation_flip,
        words_accuse,
    )


def _level(  # noqa: PLR0917 -- the parts of a result
    total: int,
    missed: int,
    missing_numbers: tuple[str, ...],
    missing_words: tuple[str, ...],
    best_ref: CitationRef,
    negation_flip: bool,
    words_accuse: bool,
) -> SupportResult:
    """The verdict from what was found: ``total`` content words, ``missed`` of them in no
    source."""
    score = 1.0 if total == 0 else (total - missed) / total
    # A short unit is accused on words only when none of them is in a source: ``Entry`` beside
    # ``entered`` is, a hidden source's lone word beside a visible citation is too.
    accuse = words_accuse and (total >= MIN_WORDS_TO_ACCUSE or (total > 0 and missed == total))
    if missing_numbers or negation_flip or (accuse and score < UNSUPPORTED_BELOW):
        level = SupportLevel.UNSUPPORTED
    elif score < WEAK_BELOW:
        level = SupportLevel.WEAK
    else:
        level = SupportLevel.SUPPORTED
    return _new(
        SupportResult,
        (level, round(score, 3), missing_numbers, missing_words, best_ref, negation_flip),
    )


def _spelled(tokens: Sequence[str], missing: set[str], stems: Mapping[str, str]) -> tuple[str, ...]:
    """The unit's own spelling of its missing stems, in the order it writes them (each once)."""
    out: dict[str, None] = {}
    for word in tokens:
        if (stems.get(word) or word) in missing:  # a stop word or a number: as it is spelled
            out.setdefault(word, None)
    if len(out) < len(missing):  # CJK bigrams: their own spelling
        spelled = {stems.get(w) or w for w in out}
        out.update(dict.fromkeys(sorted(missing - spelled)))
    return tuple(out)


def _missing_numbers(
    numbers: Mapping[str, str], scaled_bare: Mapping[str, set[str]], read: Sequence[_Read]
) -> tuple[str, ...]:
    """The unit's numbers no source has (as values), as the unit spells them."""
    plain_of = {key: plain for plain, keys in scaled_bare.items() for key in keys}
    return tuple(
        spelled
        for key, spelled in numbers.items()
        if not _number_found(key, plain_of.get(key), read)
    )


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
