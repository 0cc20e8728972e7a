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
from functools import cache
from typing import NamedTuple

import Stemmer
from wordfreq import get_frequency_dict

from worker.core.claims.support.dates import MONTHS
from worker.core.claims.support.spelled import NUMBER_WORDS
from worker.core.claims.support.values import MAGNITUDES, UNITS

__all__ = [
    "COMMON_ZIPF",
    "MAX_WEIGHT",
    "NAME_ZIPF",
    "RARE_ZIPF",
    "Word",
    "Words",
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
_NOT_WORDS = (
    frozenset(MONTHS)
    | NUMBER_WORDS
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


def negates(text: str) -> bool:
    """Whether ``text`` negates anything (``not``, ``never``, ``n't``…)."""
    return _NEGATION.search(text) is not None


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
        stem = _STEMMER.stemWord(lower) if lower.isascii() else lower
        rare = zipf < RARE_ZIPF and len(lower) > 2
        cap = spelled[0].isupper() and zipf < NAME_ZIPF and len(lower) > 1
        cap_word = spelled[0].isupper() and zipf < CAP_ZIPF and content
        number = lower in NUMBER_WORDS
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
