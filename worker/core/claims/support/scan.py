"""The values of a whole text (contract rule 6b), a unit's or a source's: read on the text the
reader sees (``visible``: a link's URL and a character reference such as ``&#8239;`` are not
read as digits), one scan from digit to digit (``values.read_at`` reads each value), an integer
alone set apart as the commonest value, numbers in words by ``spelled``. A unit's values come
in order, each once, its conversions (``18 in (460 mm)``) checked once; a source gives the keys
of all of its values and of what contains them.
"""

from __future__ import annotations

import html
import re
from operator import itemgetter

from worker.core.claims.support.dates import MONTH_BEFORE, Key
from worker.core.claims.support.spelled import read_spelled
from worker.core.claims.support.values import (
    NUMBER,
    SIGNS_AND_CURRENCIES,
    SPELLED,
    Reading,
    Value,
    found_in,
    integer_key,
    integer_reading,
    new,
    read_at,
)

__all__ = ["source_keys", "unit_missing", "unit_values", "visible"]

_DIGIT_RUN = re.compile(r"\d+")
#: A space and the run of digits after it (``_scan``'s numbers between numbers).
_SPACED_RUN = re.compile(r" \d+")
_ONE_DIGIT = re.compile(r"\d")
_LIST_NUMBER = re.compile(r"\s*\(?\d{1,3}[.)]\s")
#: A value with a unit in parentheses right after another value (maybe its unit word between)
#: is its conversion (``18 in (460 mm)``, ``$4.2 billion (€3.9 billion)``): checked once.
_CONVERSION_GAP = re.compile(
    r"\s*(?:[^\W\d_]{1,6}\.?\s*)?\(\s*(?:about|approximately|approx\.|around|c\.|ca\.|~|≈)?\s*$",
    re.IGNORECASE,
)
#: What a reader never sees as text: a link's destination, an autolink, a bare URL; character
#: references are read as the characters they stand for.
_HIDDEN_TEXT = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|<[a-z][a-z0-9+.-]*:[^>\s]*>|"
                          r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)  # fmt: skip


def visible(text: str) -> str:
    """``text`` as the reader sees its digits: URLs out, character references decoded."""
    if "://" in text or "](" in text or "<" in text:
        text = _HIDDEN_TEXT.sub(lambda m: "]" if m.group(0)[0] == "]" else " ", text)
    if "&" in text:
        text = html.unescape(text)
    return text


#: What may stand right before and right after an integer alone (no sign, currency, unit,
#: magnitude, decimal or date part).
_PLAIN_BEFORE = frozenset(" (\n\t")
_PLAIN_AFTER = frozenset(",;)]!?")
#: What, last before it (spaces apart), makes a number no integer alone: a sign or currency,
#: or a range's dash or slash after a year (``values.read_at``).
_NOT_PLAIN_AFTER = frozenset(SIGNS_AND_CURRENCIES + "–/")


def _plain(text: str, at: int, end: int) -> bool:
    """Whether the run of digits at ``at``..``end`` is an integer alone: what every rule of the
    grammar reads as just its value (nothing glued to it; before it no month, capital, sign,
    currency, range dash or slash, as ``values.read_at`` reads the twelve characters before a
    number; after it a comma, a closing bracket, a sentence's end or the text's). A property
    test keeps it a short cut of ``read_at``, never a reading of its own."""
    after = text[end : end + 1]
    if after == ".":
        if text[end + 1 : end + 2] not in ("", " ", "\n"):
            return False
    elif after and (after not in _PLAIN_AFTER or text[end + 1 : end + 2].isdigit()):
        return False
    return _nothing_before(text, at)


def _nothing_before(text: str, at: int) -> bool:
    """Whether nothing before the number at ``at`` takes part in its reading, as
    ``values.read_at`` reads the twelve characters before a number: a space, a tab, a newline
    or ``(`` right before it (or the text's start), and, spaces apart, no capital, sign,
    currency, range dash or slash (``USD 5``, ``€ 5``, ``US$ 5``, ``2018 – 19``) and no month
    (``May 7``, ``(Sept. 7``)."""
    if at == 0:
        return True
    if text[at - 1] not in _PLAIN_BEFORE:
        return False
    before = text[max(0, at - 12) : at]
    last = before.rstrip()[-1:]
    if last.isupper() or last in _NOT_PLAIN_AFTER:
        return False
    return not ((last.isalpha() or last == ".") and MONTH_BEFORE.search(before) is not None)


#: Spaces after a run of digits, then the text's end or a mark that closes (``buoy 7 .``: what
#: a unit's ``buoy 7 [OBS-1].`` reads as once its token is out).
_SPACED_STOP = re.compile(r" +(?:[.,;!?)\]]|\Z)")


def _spaced_plain(text: str, at: int, end: int) -> Reading | None:
    """``read_at``'s reading of an integer that spaces part from a closing mark or the text's end
    (``None``: read it by ``read_at``): after it no suffix, date or range can start, so the
    grammar reads it as a plain integer unless what stands before it is a month, a sign, a
    currency, a capital, a range's dash or a quarter's ``Q`` (each left to ``read_at``)."""
    if _SPACED_STOP.match(text, end) is None or not _nothing_before(text, at):
        return None
    return integer_reading(text[at:end], end)


def _between_numbers(text: str, at: int, end: int) -> bool:
    """Whether the run of digits at ``at``..``end`` is a number between numbers, spaced (``12 13
    14``): what ``read_at`` reads as a plain integer (no month, sign, currency or quarter before
    it; no suffix, date or group after it), so its key needs no reading. A property test keeps
    it a short cut of ``read_at``."""
    return (
        at >= 2  # a digit and a space before it
        and text[at - 1] == " "
        and (n := _SPACED_RUN.match(text, end)) is not None
        and (end - at > 3 or n.end() - end != 4)  # no ``1 281`` group
        and _ONE_DIGIT.match(text, at - 2) is not None
    )


def _scan(text: str, start: int = 0) -> tuple[list[tuple[int, Reading]], list[tuple[int, str]]]:
    """Every value of ``text`` read with digits, from ``start``, left to right (linear: one step
    per value, each a bounded match at its first digit): the readings, and apart the integers
    alone (position, digits), the commonest values, whose keys need no reading."""
    out: list[tuple[int, Reading]] = []
    plain: list[tuple[int, str]] = []
    search = _DIGIT_RUN.search
    pos = start
    while (d := search(text, pos)) is not None:
        at, end = d.span()
        if _plain(text, at, end):
            plain.append((at, d.group()))
            pos = end
            continue
        if _between_numbers(text, at, end):
            out.append((at, integer_reading(d.group(), end)))
            pos = end
            continue
        reading = _spaced_plain(text, at, end) or read_at(text, at, end)
        if reading is None:
            pos = end
            continue
        out.append((at, reading))
        pos = max(reading.end, at + 1)
    return out, plain


def unit_values(text: str, number_words: bool) -> list[Value]:
    """The values of a unit's (visible) text, in order, each once (``number_words``: it has a
    number word, so its numbers in words are read too)."""
    return [v for _at, v in _unit_values(text, number_words, None)]


def unit_missing(text: str, number_words: bool, keys: frozenset[Key]) -> list[Value]:
    """The values of a unit's (visible) text that ``keys`` (its sources') do not have, in order,
    each once: an integer alone is looked up by its two keys without a ``Value`` made for it."""
    return [v for _at, v in _unit_values(text, number_words, keys)]


def _unit_values(
    text: str, number_words: bool, keys: frozenset[Key] | None
) -> list[tuple[int, Value]]:
    """``unit_values`` (``keys`` ``None``) or ``unit_missing``, with each value's position."""
    text = visible(text)
    lead = _LIST_NUMBER.match(text)
    readings, plain = _scan(text, lead.end() if lead is not None else 0)
    values: dict[tuple[Key, ...], tuple[int, Value]] = {}
    last_end = -1
    for at, r in readings:
        if r.has_unit and last_end >= 0 and _CONVERSION_GAP.match(text, last_end, at) is not None:
            last_end = r.end  # a conversion of the value before it
            continue
        values.setdefault(r.found_by, (at, new(Value, (r.spelled, r.found_by, r.kind))))
        if r.other_end:
            values.setdefault(r.other_end, (at, new(Value, (r.spelled, r.other_end, r.kind))))
        last_end = r.end
    if number_words:
        for spelled, found_by, _gives in read_spelled(text, unit=True):
            at = text.find(spelled)
            values.setdefault(tuple(found_by), (at, Value(spelled, tuple(found_by), SPELLED)))
    if keys is not None:
        out = [(at, v) for at, v in values.values() if not found_in(v.found_by, keys)]
    else:
        out = list(values.values())
    seen: set[str] = set()
    for at, digits in plain:
        v = integer_key(digits)
        if v in seen or (keys is not None and (("n", v, "*") in keys or ("abs", v, "*") in keys)):
            continue
        seen.add(v)
        found = (("n", v, "*"), ("abs", v, "*"))
        if found not in values:
            out.append((at, new(Value, (digits, found, NUMBER))))
    if plain:
        out.sort(key=_FIRST)
    return out


_FIRST = itemgetter(0)


def source_keys(text: str, number_words: bool) -> set[Key]:
    """Every key a source's (visible) text gives: its values and what contains them
    (``number_words``: it has a number word)."""
    text = visible(text)
    keys: set[Key] = set()
    readings, plain = _scan(text)
    for _at, r in readings:
        keys.update(r.gives)
    for _at, digits in plain:
        v = integer_key(digits)
        keys.add(("n", v, ""))
        keys.add(("n", v, "*"))
    if number_words:
        for _spelled, _found_by, gives in read_spelled(text, unit=False):
            keys.update(gives)
    return keys
