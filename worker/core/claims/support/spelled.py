"""Numbers written in words, both ways (contract rule 6b): ``nine`` is 9, ``thirteenth`` is 13,
``twenty-five`` is 25, ``two million`` is 2000000, ``third quarter`` is ``Q3``, ``half`` is 0.5
and 50 %.

A source's number words are values a unit's digits may match; a unit's number words are values
too, reported as their own kind of finding (``spelled_value``), whose measured precision decides
whether it fails a draft (``verdict.py``). Words too often something else in a unit (``one``,
``first``, ``second``, ``once``) are values in sources only.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal

from worker.core.claims.support.dates import Key, quarter_keys

__all__ = ["FRACTION_WORDS", "NUMBER_MARKS", "NUMBER_WORDS", "UNIT_EXCLUDED", "read_spelled"]

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINAL_UNITS = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
_ORDINAL_TENS = [
    "twentieth",
    "thirtieth",
    "fortieth",
    "fiftieth",
    "sixtieth",
    "seventieth",
    "eightieth",
    "ninetieth",
]
#: Word -> its value (small numbers, tens, their ordinals).
_SMALL: dict[str, int] = {
    **{w: i for i, w in enumerate(_UNITS)},
    **{w: 20 + 10 * i for i, w in enumerate(_TENS)},
    **{w: i for i, w in enumerate(_ORDINAL_UNITS)},
    **{w: 20 + 10 * i for i, w in enumerate(_ORDINAL_TENS)},
    "dozen": 12,
}
#: Words that multiply what is before them.
_SCALE = {
    "hundred": 100, "hundredth": 100, "thousand": 1000, "thousandth": 1000,
    "million": 10**6, "millionth": 10**6, "billion": 10**9, "trillion": 10**12,
}  # fmt: skip
#: Every word that is part of a number in words.
NUMBER_WORDS = frozenset(_SMALL) | frozenset(_SCALE) | {"half", "twice"}
#: In a unit these are usually not a quantity (``one of the``, ``a second look``).
UNIT_EXCLUDED = frozenset({"one", "first", "second", "zero", "zeroth", "once"})
_WORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_RUN = re.compile(
    rf"(?<![\w-])(?<!\d\s)(?:a\s+)?(?:{_WORD})(?:(?:-|\s+|\s+and\s+)(?:{_WORD}))*"
    r"(?P<quarter>[\s-]+quarter)?(?![\w-])",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"[\s-]+")
#: A fraction's denominators, singular and plural -> the denominator (``half`` is 2).
_DENOMINATORS: dict[str, int] = {"half": 2, "halves": 2, "quarter": 4, "quarters": 4}
for _q, _w in enumerate(_ORDINAL_UNITS[3:11], start=3):
    _DENOMINATORS[_w] = _DENOMINATORS[_w + "s"] = _q
#: A fraction's numerators (``a`` and ``an`` are 1).
_NUMERATORS: dict[str, int] = {"a": 1, "an": 1, **{w: i for i, w in enumerate(_UNITS[1:10], 1)}}
#: The plural ordinal denominators (``thirds``, ``fifths``): values, not content words
#: (``words.py``; ``quarters`` and ``halves`` are often something else: living quarters).
FRACTION_WORDS = frozenset(w for w in _DENOMINATORS if w.endswith("ths") or w == "thirds")
#: Words that make a text's numbers in words worth reading: number words and denominators
#: (``a quarter of``).
NUMBER_MARKS = NUMBER_WORDS | frozenset(_DENOMINATORS)
#: A fraction in words: a numerator, then a denominator, hyphenated or spaced (``two thirds``,
#: ``two-thirds``, ``three quarters``, ``one-fifth``, ``a third of``). ``a third``, ``one
#: quarter`` (a singular denominator after ``a``, ``an`` or ``one``) is a fraction only
#: hyphenated or followed by ``of``: ``a third cousin``, ``a fifth season`` are ordinals.
_FRACTION = re.compile(
    r"(?<![\w-])(?P<num>an?|one|two|three|four|five|six|seven|eight|nine)"
    r"(?P<sep>-|\s+)(?P<den>(?:half|halves|quarters?|(?:third|fourth|fifth|sixth|seventh|eighth"
    r"|ninth|tenth)s?))(?![\w-])(?P<of>\s+of\b)?",
    re.IGNORECASE,
)
#: ``half`` in a unit is found by 0.5 (any unit) or 50 %; in a source it gives both.
_HALF_FOUND_BY: list[Key] = [("n", "0.5", "*"), ("n", "50", "%")]
_HALF_GIVES: list[Key] = [("n", "0.5", ""), ("n", "0.5", "*"), ("n", "50", "%")]


def _value(words: list[str]) -> int | None:
    """The value of a run of number words (``two hundred and five``: 205)."""
    total = current = 0
    seen = False
    for word in words:
        if word in ("and", "a"):
            continue
        if word in _SMALL:
            current += _SMALL[word]
            seen = True
        elif word in _SCALE:
            current = (current or 1) * _SCALE[word]
            if _SCALE[word] >= 1000:
                total, current = total + current, 0
            seen = True
        else:
            return None
    return total + current if seen else None


def _fractions(text: str) -> tuple[list[tuple[str, list[Key], list[Key]]], list[tuple[int, int]]]:
    """The fractions in words of ``text`` (``two thirds`` is 2/3, never 2), with their spans.

    A proper fraction only (numerator below denominator). Its keys: the fraction, and the
    percentage it is, rounded to a whole (down and to nearest) and to one decimal (``two
    thirds``: 66 %, 67 %, 66.7 %), each way: a source's ``67%`` finds a unit's ``two thirds``
    and a source's ``two-thirds`` a unit's ``67%``. ``two quarters``, ``two halves`` may be
    counts too (two quarters of a year): those also give and are found by the count."""
    out: list[tuple[str, list[Key], list[Key]]] = []
    spans: list[tuple[int, int]] = []
    for m in _FRACTION.finditer(text):
        num = _NUMERATORS[m.group("num").lower()]
        den_word = m.group("den").lower()
        den = _DENOMINATORS[den_word]
        plural, hyphen = den_word.endswith("s"), m.group("sep") == "-"
        if num >= den or (plural and num == 1) or (not plural and num > 1 and not hyphen):
            continue
        if num == 1 and not hyphen and not m.group("of"):
            continue  # ``a third cousin``, ``one quarter``: no fraction said
        g = math.gcd(num, den)
        share = Decimal(100 * num) / Decimal(den)
        keys: list[Key] = [("frac", num // g, den // g)]
        for pct in {
            share.to_integral_value(rounding=ROUND_FLOOR),
            share.to_integral_value(rounding=ROUND_HALF_UP),
            share.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP),
        }:
            keys.append(("n", f"{pct.normalize():f}", "%"))
        if (num // g, den // g) == (1, 2):
            keys += _HALF_GIVES
        found = sorted(set(keys), key=str)
        gives = list(found)
        if plural and den_word in ("quarters", "halves"):
            n = str(num)
            found.append(("n", n, "*"))
            gives += [("n", n, ""), ("n", n, "*")]
        spelled = text[m.start() : m.end("den")]
        out.append((spelled, found, gives))
        spans.append((m.start(), m.end("den")))
    return out, spans


def read_spelled(text: str, *, unit: bool) -> list[tuple[str, list[Key], list[Key]]]:
    """Each number in words of ``text``: its spelling, the keys a unit's value is found by and
    the keys a source's value gives (``half``: 0.5 and 50 %; ``twice``: 2; a fraction:
    ``_fractions``)."""
    out, spans = _fractions(text)
    for m in _RUN.finditer(text):
        if spans and any(a < m.end() and m.start() < b for a, b in spans):
            continue  # a word of a fraction (``two`` of ``two thirds``)
        spelled = m.group(0)
        words = _SPLIT.split(spelled.lower())
        if m.group("quarter"):
            words = words[:-1]
        if unit and len(words) == 1 and words[0] in UNIT_EXCLUDED:
            continue
        if words in (["half"], ["a", "half"]):
            out.append((spelled, _HALF_FOUND_BY, _HALF_GIVES))
            continue
        if words == ["twice"]:
            value: int | None = 2
        else:
            value = _value(words)
        if value is None:
            continue
        if m.group("quarter") and 1 <= value <= 4:
            keys = list(quarter_keys(value, text, m.end()))
            out.append((spelled, keys, keys))
            continue
        n = f"{Decimal(value):f}"
        out.append((spelled, [("n", n, "*")], [("n", n, ""), ("n", n, "*")]))
    return out
