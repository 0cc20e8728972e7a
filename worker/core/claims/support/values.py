"""Values as values (contract rule 6b): one table-driven grammar reads every number, amount,
quantity, percentage, date, date range, time, quarter, ordinal and number in words of a text,
a unit's and a source's alike, and gives each the keys of what it *is*.

``1,281`` = ``1 281`` = ``1281``; ``4,2 Mrd`` = ``4.2B`` = ``4.2 billion`` = ``4,200 million``,
never ``4.2 million``; ``840 ms`` is neither ``840 seconds`` nor ``840%``; ``-12%`` is not
``+12%``; ``Q3`` is not ``Q4``; ``Falcon-4.2B`` has a value; ``13th`` = ``thirteenth`` = 13;
``12 to 18 April 2015`` is its two ends; ``June 2017`` is supported by any date inside it, the
``2000s`` by any year inside them. This module reads one value at its first digit
(``read_at``); ``scan.py`` reads a whole text. Decisions: ``docs/decisions.md``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Set as AbstractSet
from decimal import Decimal, InvalidOperation
from typing import NamedTuple

from worker.core.claims.support import dates
from worker.core.claims.support.dates import MONTHS, Key

__all__ = [
    "DATE",
    "MAGNITUDES",
    "NUMBER",
    "PARTS",
    "SIGNS_AND_CURRENCIES",
    "SPELLED",
    "UNITS",
    "Reading",
    "Value",
    "found_in",
    "integer_key",
    "integer_reading",
    "new",
    "read_at",
]

#: Kinds of value (each its own kind of finding when missing: ``verdict.py``).
NUMBER, DATE, SPELLED = "number", "date", "spelled"


class Value(NamedTuple):
    """One value of a unit: as it is spelled, and the keys any one of which a source must give."""

    spelled: str
    found_by: tuple[Key, ...]
    kind: str


#: Canonical unit of each unit word or symbol (``ms`` ≠ ``s`` ≠ ``%``; currencies are units).
UNITS: dict[str, str] = {}
for _unit_name, _names in {
    "ms": "ms msec msecs millisecond milliseconds",
    "s": "sec secs second seconds",
    "min": "min mins minute minutes",
    "h": "h hr hrs hour hours",
    "day": "day days", "week": "week weeks wk wks", "month": "month months",
    "year": "year years yr yrs", "decade": "decade decades", "century": "century centuries",
    "mm": "mm millimetre millimetres millimeter millimeters",
    "cm": "cm centimetre centimetres centimeter centimeters",
    "km": "km kilometre kilometres kilometer kilometers",
    "metre": "metre metres meter meters", "ft": "ft feet foot", "inch": "inch inches",
    "mi": "mi mile miles", "kg": "kg kilogram kilograms kilo kilos", "g": "g gram grams",
    "lb": "lb lbs", "tonne": "tonne tonnes ton tons", "pound": "pound pounds gbp",
    "usd": "usd dollar dollars", "eur": "eur euro euros", "jpy": "jpy yen",
    "inr": "inr rupee rupees", "cny": "cny yuan rmb",
    "kb": "kb kib", "mb": "mb mib", "gb": "gb gib", "tb": "tb tib", "byte": "byte bytes",
    "hz": "hz", "khz": "khz", "mhz": "mhz", "ghz": "ghz", "w": "w watt watts", "kw": "kw",
    "mw": "mw megawatt megawatts", "gw": "gw", "kwh": "kwh", "mwh": "mwh", "v": "v volt volts",
    "nm": "nm nmi", "mph": "mph", "kph": "kph", "knot": "knot knots kn", "acre": "acre acres",
    "hectare": "hectare hectares ha", "degc": "°c", "degf": "°f",
}.items():  # fmt: skip
    UNITS.update(dict.fromkeys(_names.split(), _unit_name))
#: Magnitude words and suffixes -> power of ten.
MAGNITUDES: dict[str, int] = {
    "thousand": 3, "k": 3, "million": 6, "mn": 6, "mln": 6, "mio": 6, "m": 6,
    "billion": 9, "bn": 9, "bln": 9, "b": 9, "mrd": 9, "milliard": 9, "milliards": 9,
    "trillion": 12, "tn": 12, "t": 12,
}  # fmt: skip
_CURRENCY_BEFORE = re.compile(r"(?:(US|A|C|NZ|HK)?\$|€|£|¥|₹|\b(USD|EUR|GBP|JPY|INR))\s?$")
_CURRENCY = {"$": "usd", "€": "eur", "£": "pound", "¥": "jpy", "₹": "inr"}
_NOT_ALNUM = r"(?![^\W_])"
_UNIT = "|".join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True))
_MAGNITUDE = "|".join(sorted(MAGNITUDES, key=len, reverse=True))
#: A number: European ``1.281,5``; grouped ``1,281`` / ``1 281`` (thin, narrow, no-break or
#: plain space, ``'``); plain ``1281``, ``4.2`` or decimal comma ``4,2``.
_NUMBER = re.compile(
    r"(?P<eu>\d{1,3}(?:\.\d{3})+,\d+)(?![\d.,]\d)"
    r"|(?P<grouped>\d{1,3}(?P<sep>[,\u00a0\u2009\u202f' ’])\d{3}(?!\d)(?:(?P=sep)\d{3}(?!\d))*)"
    r"(?P<gfrac>\.\d+)?"
    r"|(?P<plain>\d+(?:[.,]\d+)?)"
)
#: What may follow a number: an ordinal, a decade's ``s``, a percent, ``am``/``pm``, a
#: magnitude (maybe then a unit), or a unit, spaced, hyphenated or glued.
_SUFFIX = re.compile(
    rf"(?P<ord>st|nd|rd|th){_NOT_ALNUM}"
    rf"|(?P<decade>'?s){_NOT_ALNUM}"
    rf"|\s?(?P<pct>%|per\s?cent{_NOT_ALNUM}|pct{_NOT_ALNUM})"
    rf"|\s?(?P<ampm>[ap])\.?m{_NOT_ALNUM}\.?"
    rf"|\s?(?P<deg>°\s?[cf]){_NOT_ALNUM}"
    rf"|[\s-]?(?P<mag>{_MAGNITUDE}){_NOT_ALNUM}(?:[\s-]?(?P<unit2>{_UNIT}){_NOT_ALNUM})?"
    rf"|[\s-]?(?P<unit>{_UNIT}){_NOT_ALNUM}",
    re.IGNORECASE,
)
_VERSION = re.compile(r"\d+(?:\.\d+){2,}(?![\d.]?\d)")
#: What before a number may sign it or make it an amount.
SIGNS_AND_CURRENCIES = "-+−$€£¥₹"
#: ``tuple.__new__``: a NamedTuple from all its fields without its Python ``__new__``.
new = tuple.__new__


def _decimal(digits: str) -> Decimal | None:
    try:
        return Decimal(digits)
    except InvalidOperation:
        return None


def _canonical(value: Decimal) -> str:
    return f"{value.normalize():f}"


class Reading(NamedTuple):
    """One value read at a position: the unit's keys, the source's keys, its kind, its end, and
    whether it carries a unit or currency (for a conversion after it)."""

    spelled: str
    found_by: tuple[Key, ...]
    gives: tuple[Key, ...]
    kind: str
    end: int
    has_unit: bool
    #: A range's other end: found on its own (a range is its two ends).
    other_end: tuple[Key, ...] = ()


def read_at(text: str, start: int, run_end: int) -> Reading | None:
    """The value whose first digit is at ``start`` and whose first run of digits ends at
    ``run_end`` (``None``: not a value). The character after the run picks the rules that may
    apply (most numbers are plain: one or two bounded matches)."""
    before = text[max(0, start - 12) : start]
    sep = text[run_end : run_end + 1]
    run = run_end - start
    if sep and sep in "-/:.":
        dated = _read_dated(text, start, sep, run)
        if dated is not None:
            return dated
    last = before.rstrip()[-1:]  # a month's last letter or dot, a dash, a currency sign
    month = dates.MONTH_BEFORE.search(before) if last.isalpha() or last == "." else None
    if month is not None:
        reading = _month_first(text, start, month)
        if reading is not None:
            return reading
    if run <= 2 and (m := dates.DAY_FIRST.match(text, start)) is not None:
        return _day_first(m)
    if start and text[start - 1] in "Qq" and _QUARTER.match(text, start - 1) is not None:
        keys = dates.quarter_keys(int(text[start]), text, start + 1)
        return Reading(text[start - 1 : start + 1], keys, keys, DATE, start + 1, False)
    century = _YEAR_RANGE_END.search(before) if last in "-–/" else None
    if century is not None and _TWO_DIGITS.match(text, start):
        ends = century.group(1) + text[start : start + 2]  # ``2018–19``: 2019
        both: tuple[Key, ...] = (("n", ends, ""), ("n", ends, "*"))
        return Reading(text[start : start + 2], (("n", ends, "*"),), both, DATE, start + 2, False)
    return _number(text, start, before)


def _read_dated(text: str, start: int, sep: str, run: int) -> Reading | None:
    """An ISO date or RFC 3339 timestamp, a time, a numeric date or a version string."""
    if run == 4 and sep in "-/" and (m := dates.ISO.match(text, start)) is not None:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        found: list[Key] = []
        key = dates.day_keys(y, mo, d)
        if key is not None:
            found.append(key)
        gives = dates.source_day_keys(y, mo, d)
        if m.group(4) is not None:
            t = dates.time_key(int(m.group(4)), int(m.group(5)), None)
            if t is not None:
                gives.append(t)
        return Reading(m.group(0), tuple(found), tuple(gives), DATE, m.end(), False)
    if sep == ":" and (m := dates.TIME.match(text, start)) is not None:
        t = dates.time_key(int(m.group(1)), int(m.group(2)), m.group(3))
        if t is not None:
            return Reading(m.group(0), (t,), (t,), DATE, m.end(), False)
    if run <= 2 and sep in "/." and (m := dates.NUMERIC.match(text, start)) is not None:
        a, b, year = int(m.group(1)), int(m.group(3)), int(m.group(4))
        year = year + 2000 if year < 100 else year
        readings = {(a, b), (b, a)} if a <= 12 and b <= 12 else {(b, a) if a > 12 else (a, b)}
        found = [k for mo, d in readings if (k := dates.day_keys(year, mo, d)) is not None]
        gives = [k for mo, d in readings for k in dates.source_day_keys(year, mo, d)]
        if found:
            return Reading(m.group(0), tuple(found), tuple(gives), DATE, m.end(), False)
    if sep == "." and (m := _VERSION.match(text, start)) is not None:
        key = ("v", m.group(0))
        return Reading(m.group(0), (key,), (key,), NUMBER, m.end(), False)
    return None


#: ``Q3`` (not ``BQ3``, ``Q30``), matched at its ``Q``.
_QUARTER = re.compile(r"(?<![^\W_])[Qq][1-4](?![^\W_])")
#: The end of a range of years written with two digits (``2018–19``).
_YEAR_RANGE_END = re.compile(r"(?<!\d)(\d{2})\d{2}\s?[-–/]\s?$")
_TWO_DIGITS = re.compile(r"\d{2}(?![\d.,])")
_YEAR = re.compile(r"\d{4}(?!\d)")


def _month_first(text: str, start: int, month: re.Match[str]) -> Reading | None:
    """``May 4, 2026``, ``April 12–18, 2015``, ``June 2017``: a number just after its month."""
    mo = MONTHS[month.group(1).lower()]
    spelled_from = start - len(month.group(0))
    if (y := _YEAR.match(text, start)) is not None:
        key = dates.month_keys(int(y.group(0)), mo)
        spelled = month.group(1) + " " + y.group(0)
        month_gives = tuple(dates.source_month_keys(int(y.group(0)), mo))
        return Reading(spelled, (key,), month_gives, DATE, y.end(), False)
    m = dates.MONTH_FIRST_REST.match(text, start)
    if m is None:
        return None
    year = int(m.group(4)) if m.group(4) else None
    days = [(mo, int(m.group(1)))]
    if m.group(3):
        days.append((MONTHS[m.group(2).lower()] if m.group(2) else mo, int(m.group(3))))
    found: tuple[Key, ...] = tuple(
        k for mo_, d in days if (k := dates.day_keys(year, mo_, d)) is not None
    )
    if not found:
        return None
    gives = [k for mo_, d in days for k in dates.source_day_keys(year, mo_, d)]
    spelled = text[spelled_from : m.end()].strip()
    ends = (found[1],) if len(found) > 1 else ()
    return Reading(spelled, found[:1], tuple(gives), DATE, m.end(), False, ends)


def _day_first(m: re.Match[str]) -> Reading | None:
    """``4 May 2026``, ``12 to 18 April 2015``, ``4th of May``."""
    mo = MONTHS[m.group(3).lower()]
    year = int(m.group(4)) if m.group(4) else None
    days = [int(m.group(1))] + ([int(m.group(2))] if m.group(2) else [])
    found: tuple[Key, ...] = tuple(
        k for d in days if (k := dates.day_keys(year, mo, d)) is not None
    )
    if not found:
        return None
    gives = [k for d in days for k in dates.source_day_keys(year, mo, d)]
    ends = (found[1],) if len(found) > 1 else ()
    spelled = m.group(0).rstrip(",. ")
    return Reading(spelled, found[:1], tuple(gives), DATE, m.end(), False, ends)


def _digits(m: re.Match[str]) -> tuple[Decimal | None, list[str]]:
    """A number's value from its digits, and its groups where a plain space may part two
    numbers (``3 100-metre races``)."""
    if m.group("eu"):
        return _decimal(m.group("eu").replace(".", "").replace(",", ".")), []
    if m.group("grouped"):
        sep = m.group("sep")
        digits = m.group("grouped").replace(sep, "") + (m.group("gfrac") or "")
        return _decimal(digits), m.group("grouped").split(" ") if sep == " " else []
    return _decimal(m.group("plain").replace(",", ".")), []


def _before_number(text: str, start: int, before: str) -> tuple[str, str, int]:
    """A number's explicit sign (``-12%``, ``+12%``; not ``eu-west-1``), its currency (``$``,
    ``EUR``) and where its spelling starts."""
    sign = ""
    if start and before[-1:] in ("-", "+", "−") and (start < 2 or not text[start - 2].isalnum()):
        sign = "+" if before[-1] == "+" else "-"
    ahead = before[: len(before) - len(sign)] if sign else before
    last = ahead.rstrip()[-1:]
    currency = _CURRENCY_BEFORE.search(ahead) if last and not last.isdigit() else None
    unit = ""
    if currency is not None:
        symbol = currency.group(0).strip()
        unit = _CURRENCY.get(symbol[-1]) or UNITS.get(symbol.lower(), "usd")
    spelled_start = start - len(sign) - (len(currency.group(0)) if currency else 0)
    return sign, unit, spelled_start


def _number_keys(
    value: Decimal, exponent: int, unit: str, sign: str, parts: list[str]
) -> tuple[list[Key], list[Key]]:
    """A number's keys: what finds it in a source (itself with its unit or none; with a
    magnitude, its digits alone in a table; unsigned, a source's signed value), and what a
    source's number gives."""
    v = _canonical(value.scaleb(exponent))
    found: list[Key] = [("n", v, unit or "*")]
    gives: list[Key] = [("n", v, unit), ("n", v, "*")]
    if unit:
        found.append(("n", v, ""))
    if exponent:  # a table "in billions: 4.2": the digits alone, bare (never ``840 ms``)
        found.append(("n", _canonical(value), ""))
    if sign == "-":
        absolute = v[1:]
        gives += [("abs", absolute, unit), ("abs", absolute, "*")]
    elif not sign:
        found.append(("abs", v, unit or "*"))
    if parts:
        # Spaced groups may be two numbers (``3 100-metre races``: a source's ``three``
        # 100-metre races): found as a whole, or by every part at once (``PARTS``), never by
        # one part alone (``1 281 000`` is no ``1``).
        canonical = [_canonical(Decimal(part)) for part in parts]
        found.append((PARTS, *canonical))
        for p in canonical:
            gives += [("n", p, ""), ("n", p, "*")]
    return found, gives


#: The first item of the key of a spaced number's parts (``_number_keys``): found only if a
#: source has every part (``scan``), never by a source's key.
PARTS = "parts"


def found_in(found_by: tuple[Key, ...], keys: AbstractSet[Key]) -> bool:
    """Whether a value with these keys is found among a source's ``keys``: by any key, or by
    all the parts of a spaced number (``PARTS``, always its last key)."""
    if not keys.isdisjoint(found_by):
        return True
    last = found_by[-1] if found_by else ()
    return bool(last) and last[0] == PARTS and all(("n", p, "*") in keys for p in last[1:])


def integer_key(digits: str) -> str:
    r"""The key of a run of decimal digits: the integer in ASCII digits, no leading zeros
    (``007`` and ``7`` alike; ``\d`` also matches other scripts' digits, ``١٠٠`` is 100, as
    ``Decimal`` reads it on the grammar's other paths)."""
    if not digits.isascii():  # one by one: ``int()`` refuses more than 4,300 digits
        digits = "".join([str(unicodedata.decimal(c)) for c in digits])
    return digits.lstrip("0") or "0"


def integer_reading(digits: str, end: int) -> Reading:
    """The reading of an integer alone (no sign, currency, suffix or date part), ending at
    ``end``: found by the number with any unit or sign, giving it bare and with any unit."""
    key = integer_key(digits)
    found: tuple[Key, ...] = (("n", key, "*"), ("abs", key, "*"))
    return new(Reading, (digits, found, (("n", key, ""), found[0]), NUMBER, end, False, ()))


def _number(text: str, start: int, before: str) -> Reading | None:
    """A number with its sign, currency, magnitude, unit, percent or ordinal."""
    m = _NUMBER.match(text, start)
    if m is None:
        return None
    end = m.end()
    plain = m.group("plain")
    if plain is not None and plain.isdigit() and _SUFFIX.match(text, end) is None:
        last = before.rstrip()[-1:]
        if not last or not (last.isupper() or last in SIGNS_AND_CURRENCIES):
            # A plain integer (no sign, currency code or suffix), the commonest value: its keys
            # without ``Decimal``.
            return integer_reading(plain, end)
    value, parts = _digits(m)
    if value is None:
        return None
    sign, unit, spelled_start = _before_number(text, start, before)
    exponent = 0
    s = _SUFFIX.match(text, end)
    kind = NUMBER
    if s is not None:
        if s.group("decade"):
            decade = m.group(0)
            # ``1990s``: four digits; ``0,10s`` or ``1.50s`` is a number, not a decade.
            if (
                len(decade) == 4
                and decade.isascii()
                and decade.isdigit()
                and decade[-1] == "0"
                and not sign
            ):
                year = int(decade)
                keys = tuple(dates.decade_keys(year))
                give: tuple[Key, ...] = (("dec", year), ("n", decade, ""), ("n", decade, "*"))
                return Reading(text[start : s.end()], keys, give, DATE, s.end(), False)
        elif s.group("ampm"):
            t = dates.time_key(int(value), 0, s.group("ampm"))
            if t is not None and value == int(value):
                return Reading(text[start : s.end()], (t,), (t,), DATE, s.end(), False)
        elif s.group("pct"):
            unit, end = "%", s.end()
        elif s.group("deg"):
            unit, end = ("degc" if s.group("deg")[-1] in "cC" else "degf"), s.end()
        elif s.group("mag"):
            exponent = MAGNITUDES[s.group("mag").lower()]
            if s.group("unit2"):
                unit = unit or UNITS[s.group("unit2").lower()]
            end = s.end()
        elif s.group("unit"):
            unit = unit or UNITS[s.group("unit").lower()]
            end = s.end()
        else:  # an ordinal: the number
            end = s.end()
    if sign == "-":
        value = -value
    found, gives = _number_keys(value, exponent, unit, sign, parts)
    spelled = text[spelled_start:end].strip()
    return Reading(
        spelled, tuple(found), tuple(gives), kind, end, bool(unit and unit != "%") or bool(exponent)
    )
