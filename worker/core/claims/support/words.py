"""Words by rarity (contract rule 6b): a unit's words, stemmed by Snowball (``PyStemmer``) and
weighed by how rare they are in the language (``wordfreq``'s Zipf frequencies), so that
``however``, ``announced`` and ``some`` weigh little and names and terms weigh much.

A word's Zipf frequency is log10 of its occurrences per billion words: ``the`` 7.7, ``however``
5.6, ``announced`` 5.0, ``vessel`` 4.3, ``loitering`` 2.7, a name never seen 0. Its weight is
``COMMON_ZIPF`` minus that, clipped to ``[0, MAX_WEIGHT]``: the commonest words weigh nothing
(they are no content), an unknown word the most. A *name* is a rare word, or a word capitalised
mid-sentence that is not common: a name of the unit found in no cited source is its own kind
of finding (how a swapped entity shows). Thresholds: ``docs/decisions.md``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from functools import cache
from typing import NamedTuple

import Stemmer
from wordfreq import get_frequency_dict

from worker.core.claims.support.dates import MONTHS
from worker.core.claims.support.spelled import FRACTION_WORDS, NUMBER_MARKS, NUMBER_WORDS
from worker.core.claims.support.values import MAGNITUDES, UNITS

__all__ = [
    "COMMON_ZIPF",
    "MAX_WEIGHT",
    "NAME_ZIPF",
    "RARE_ZIPF",
    "Word",
    "Words",
    "defined_acronyms",
    "negates",
    "tokens",
]

#: A word at least this frequent weighs nothing (``the`` 7.7, ``said`` 6.3, ``however`` 5.6).
COMMON_ZIPF = 6.0
#: An unknown word (a name, a code) weighs at most this.
MAX_WEIGHT = 4.0
#: A word rarer than this is a name or a term wherever it stands.
RARE_ZIPF = 2.5
#: A word capitalised mid-sentence rarer than this is a name (``Aurora``, not ``American``).
NAME_ZIPF = 3.0
#: Two or more capitalised words rarer than this, mid-sentence and in no source, are a name
#: (``John Greenwood``, ``Stock Exchange``).
CAP_ZIPF = 4.5

#: Letters and digits runs that start with a letter (a run led by a digit is a value's).
_TOKEN = re.compile(r"(?<![^\W_])[^\W\d_][^\W_]*")
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot)\b|n['’]t\b",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")
#: ASCII punctuation (``_`` too) to spaces: hyphens and apostrophes split words.
_ASCII_SPACES = bytes(b if chr(b).isalnum() or chr(b).isspace() else 32 for b in range(256))
#: Negations as words (``t``: what the split leaves of ``didn't``).
_NEGATIONS = frozenset(
    ["not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot", "t"]
)
#: CJK ideographs, kana and hangul: read as character bigrams (no spaces between words).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


class Word(NamedTuple):
    """What the check needs of one distinct spelling: its stem, its weight, and whether it is a
    name where it stands mid-sentence (``cap_name``) or anywhere (``rare``)."""

    stem: str
    weight: float
    rare: bool
    cap_name: bool
    #: Capitalised and not common (``John``, ``Exchange``): two of them missing are a name.
    cap_word: bool
    #: A number word (``nine``, ``thirteenth``): the unit has values to read.
    number: bool
    #: A month name (``May``, ``Sept``): its numbers may be a date's.
    month: bool
    #: A negation (``not``, ``never``, the ``t`` of ``didn't``).
    negation: bool
    #: Any of ``number``, ``month``, ``negation``.
    marks: bool
    #: The stem where the word is content (weight above 0), else ``""``; and the same where it
    #: is a name mid-sentence, a name at the head of a unit (rare), a capitalised word: so that
    #: a unit's sets come from C-level ``map`` over its words (``verdict.py``).
    content: str
    name_mid: str
    name_head: str
    capital: str


@cache
def _frequencies() -> dict[str, float]:
    """Word -> frequency (share of all words), English: wordfreq's table, loaded once per
    process (~0.3 s); a word's Zipf frequency is read from it once per batch (``Words``)."""
    return get_frequency_dict("en")


_STEMMER = Stemmer.Stemmer("english")
# No cache of its own: each word reaches the stemmer once per batch (``Words`` is the memo), so
# its 10,000-word cache only doubled the work of a word new to the batch (PyStemmer keeps it
# in Python: a miss cost 1.85 µs against 0.46 µs uncached; a hit 0.19 µs).
_STEMMER.maxCacheSize = 0
_NOT_WORDS = (
    frozenset(MONTHS)
    | NUMBER_WORDS
    | FRACTION_WORDS
    | frozenset(UNITS)
    | frozenset(MAGNITUDES)
    | frozenset(
        [
            "monday",
            "tuesday",
            "wednesday",
            "thursday",
            "friday",
            "saturday",
            "sunday",
            "mon",
            "tue",
            "tues",
            "wed",
            "thu",
            "thur",
            "thurs",
            "fri",
            "sat",
            "sun",
        ]
    )
)


def tokens(text: str) -> list[str]:
    """The words of ``text`` as written (NFKC for non-ASCII), CJK runs as character bigrams."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        found = _TOKEN.findall(text)
        if _CJK.search(text) is not None:
            found = [w for w in found if _CJK.search(w) is None]
            for run in _CJK.findall(text):
                found += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        return found
    # ASCII: punctuation to spaces by a byte table, then ``split`` (C-level).
    found = text.encode("ascii").translate(_ASCII_SPACES).decode("ascii").split()
    if _DIGIT.search(text) is None:
        return found
    return [w for w in found if not w[0].isdigit()]  # a value's (``2b`` of ``4.2b``), no word


#: An acronym in parentheses after its expansion (``National Air and Space Museum (NASM)``,
#: ``(ICRC 2016)``), or before its expansion in parentheses (``NASM (National Air and Space
#: Museum)``): 2-13 letters, the first and the last (or the one before a last lower-case one,
#: ``MoMA``, ``PhD``… ) capitals.
_ACRONYM_AFTER = re.compile(r"\(\s*([A-Z][A-Za-z&]{0,10}[A-Z][a-z]?)(?=[\s,;:)])")
_ACRONYM_BEFORE = re.compile(r"(?<![^\W_])([A-Z][A-Za-z&]{0,10}[A-Z][a-z]?)\s*\(([^()]{3,200})\)")
#: Words an expansion may skip or take a letter from (``Department of Transportation (DOT)``,
#: ``(DT)`` alike; ``Museum of Modern Art (MoMA)``).
_LINKS = frozenset(["and", "of", "the", "for", "on", "in", "at", "to", "de", "la", "du", "des"])
_EXPANSION_WORD = re.compile(r"[^\W\d_][^\W_]*|&")


def _link(word: str) -> bool:
    return word == "&" or word.casefold() in _LINKS


def _gives(word: str, letter: str) -> bool:
    """Whether ``word`` may give ``letter``: its initial, the word capitalised or a link."""
    return word[0].casefold() == letter.casefold() and (word[0].isupper() or _link(word))


def _initials(letters: str, words: list[str]) -> bool:
    """Whether ``words``, from the first, begin with words whose initials are ``letters``: each
    capitalised word gives the next letter, a linking word (``of``, ``&``) the next letter or
    none, any other word breaks it; the first word is capitalised and gives the first letter.
    Every reading of the links is kept (at most ``len(letters)`` at once)."""
    if not words or not words[0][0].isupper():
        return False
    at = {0}
    for word in words:
        link = _link(word)
        after = {i + 1 for i in at if _gives(word, letters[i])}
        if len(letters) in after:
            return True
        if link:
            after |= at
        at = after
        if not at:
            return False
    return False


def _read_back(letters: str, before: list[str]) -> bool:
    """Whether ``before`` ends with words whose initials are ``letters`` (as ``_initials``):
    the last word gives the last letter, and the word that gives the first is capitalised
    (``the museum of Modern Art (MoMA)`` defines nothing)."""
    if not before or _link(before[-1]):
        return False
    at = {len(letters) - 1}
    for word in reversed(before):
        link = _link(word)
        given = {i for i in at if _gives(word, letters[i])}
        if 0 in given and word[0].isupper():
            return True
        after = {i - 1 for i in given if i > 0}
        if link:
            after |= at
        at = after
        if not at:
            return False
    return False


def defined_acronyms(text: str, wanted: AbstractSet[str]) -> set[str]:
    """Which of ``wanted`` (words of ``text``) are acronyms ``text`` defines itself: at its first
    use in parentheses, right after the capitalised words whose initials it is (``National Air
    and Space Museum (NASM)``), or right before them in parentheses (``NASM (National Air and
    Space Museum)``). Such an acronym is the text's own short name for words it states, not a
    claim a source must repeat (``verdict.py``). Each acronym is read once, at its first use,
    in a bounded window: linear in ``text``."""
    found: set[str] = set()
    tried: set[str] = set()
    for m in _ACRONYM_AFTER.finditer(text):
        acronym = m.group(1)
        first = acronym.split("&", 1)[0]
        if first not in wanted or acronym in tried:
            continue
        tried.add(acronym)
        letters = acronym.replace("&", "")
        window = text[max(0, m.start() - 24 * len(letters)) : m.start()]
        before = _EXPANSION_WORD.findall(window)
        # The expansion ends right before the parenthesis: read back from it, letters reversed.
        if _read_back(letters, before):
            found.add(first)
    for m in _ACRONYM_BEFORE.finditer(text):
        acronym = m.group(1)
        first = acronym.split("&", 1)[0]
        if first not in wanted or acronym in tried:
            continue
        tried.add(acronym)
        if _initials(acronym.replace("&", ""), _EXPANSION_WORD.findall(m.group(2))):
            found.add(first)
    return found


def negates(text: str) -> bool:
    """Whether ``text`` negates anything (``not``, ``never``, ``n't``…)."""
    return _NEGATION.search(text) is not None


#: Latin letters with no decomposition, as ASCII (``Bodvarsson`` for ``Böðvarsson``).
_FOLD = str.maketrans(
    {"ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe", "ß": "ss", "ı": "i"}
)


def _folded_stem(lower: str) -> str:
    """A non-ASCII word's key: its letters without their accents (NFKD, combining marks out;
    ``ø``, ``ß``… as ASCII), stemmed if that leaves it ASCII (``Hygiène`` = ``Hygiene``,
    ``Montréal`` = ``Montreal``), else as folded (Greek, Cyrillic, CJK: itself). English text
    drops and keeps accents on the same names; no English word differs from another only by
    them."""
    folded = "".join(
        c for c in unicodedata.normalize("NFKD", lower) if not unicodedata.combining(c)
    ).translate(_FOLD)
    return _STEMMER.stemWord(folded) if folded.isascii() else folded


class Words:
    """A batch's memo of words: each distinct spelling stemmed and weighed once (the batch's
    sources and units share most of their words)."""

    __slots__ = ("_memo",)

    def __init__(self) -> None:
        self._memo: dict[str, Word] = {}

    def of(self, spelled: Iterable[str]) -> list[Word]:
        """Each of ``spelled``'s words, from the memo (a word not seen yet is read once)."""
        memo = self._memo
        get = memo.get
        out = list(map(get, spelled))
        if None in out:
            out = [get(w) or self._read(w) for w in spelled]
        return out  # type: ignore[return-value]

    def stems(self, spelled: Iterable[str]) -> set[str]:
        """The stems of ``spelled``'s words (a source's: every word counts, common ones too)."""
        return {w.stem for w in self.of(set(spelled))}

    def _read(self, spelled: str) -> Word:
        lower = spelled.casefold()
        freq = _frequencies().get(lower)
        zipf = math.log10(freq) + 9.0 if freq else 0.0
        # A lone letter (``s`` of ``Aurora's``, ``t`` of ``didn't``) is no content word, nor is
        # a month or weekday name, a number word, a unit or magnitude (``values.py`` reads them).
        content = len(lower) > 1 and not lower[0].isdigit() and lower.rstrip(".") not in _NOT_WORDS
        weight = min(MAX_WEIGHT, max(0.0, COMMON_ZIPF - zipf)) if content else 0.0
        stem = _STEMMER.stemWord(lower) if lower.isascii() else _folded_stem(lower)
        rare = zipf < RARE_ZIPF and len(lower) > 2
        cap = spelled[0].isupper() and zipf < NAME_ZIPF and len(lower) > 1
        cap_word = spelled[0].isupper() and zipf < CAP_ZIPF and content
        number = lower in NUMBER_MARKS
        month = lower.rstrip(".") in MONTHS
        negation = lower in _NEGATIONS
        key = stem if weight > 0.0 else ""
        word = self._memo[spelled] = _new(
            Word,
            (
                stem,
                weight,
                rare,
                cap,
                cap_word,
                number,
                month,
                negation,
                number or month or negation,
                key,
                key if rare or cap else "",
                key if rare else "",
                key if cap_word else "",
            ),
        )
        return word


#: ``tuple.__new__``: a NamedTuple from all its fields without its Python ``__new__``.
_new = tuple.__new__
