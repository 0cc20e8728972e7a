"""Numbers written in words, both ways (contract rule 6b): ``nine`` is 9, ``thirteenth`` is 13,
``twenty-five`` is 25, ``two million`` is 2000000, ``third quarter`` is ``Q3``, ``half`` is 0.5
and 50 %.

A source's number words are values a unit's digits may match; a unit's number words are values
too, reported as their own kind of finding (``spelled_value``), whose measured precision decides
whether it fails a draft (``verdict.py``). Words too often something else in a unit (``one``,
``first``, ``second``, ``once``) are values in sources only.
"""

from __future__ import annotations

import re
from decimal import Decimal

from worker.core.claims.support.dates import Key

__all__ = ["NUMBER_WORDS", "UNIT_EXCLUDED", "read_spelled"]

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


def read_spelled(text: str, *, unit: bool) -> list[tuple[str, list[Key], list[Key]]]:
    """Each number in words of ``text``: its spelling, the keys a unit's value is found by and
    the keys a source's value gives (``half``: 0.5 and 50 %; ``twice``: 2)."""
    out: list[tuple[str, list[Key], list[Key]]] = []
    for m in _RUN.finditer(text):
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
            keys: list[Key] = [("q", value)]
            out.append((spelled, keys, keys))
            continue
        n = f"{Decimal(value):f}"
        out.append((spelled, [("n", n, "*")], [("n", n, ""), ("n", n, "*")]))
    return out
