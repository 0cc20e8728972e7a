"""Dates, times and quarters as values (contract rule 6b): the tables and the keys they give.

A key says what a value *is*, not how it is spelled: ``("d", 2017, 1, 31)`` for ``January 31,
2017``, ``Jan. 31, 2017``, ``31 January 2017`` and ``2017-01-31`` alike. A source's date also
gives the keys of what contains it (its month, its day of the year, its year as a number), so a
unit's ``June 2017`` or ``2017`` is supported by any date inside it (``index.py``).
"""

from __future__ import annotations

import re

__all__ = [
    "MONTHS",
    "MONTH_PATTERN",
    "Key",
    "day_keys",
    "decade_keys",
    "month_keys",
    "quarter_keys",
    "source_day_keys",
    "source_month_keys",
]

#: A value's identity: a tuple whose first item names its kind (``n``, ``d``, ``ym``, ``md``,
#: ``q``, ``qy``, ``t``, ``v``, ``dec``, ``abs``, ``frac``).
Key = tuple[object, ...]

#: Month names and abbreviations (with or without a dot, ``Sept.`` too) -> 1..12.
MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
            ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
            ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip
MONTH_PATTERN = "|".join(sorted(MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
_DASH = r"\s*(?:-|–|—|to|until|till|through|and|&)\s*"
#: Just before a number: its month (``May 4``, ``Sept. 4``, ``June 2017``), maybe a weekday.
MONTH_BEFORE = re.compile(rf"\b({MONTH_PATTERN})\.?,?\s+$", re.IGNORECASE)
#: At a day: ``4 May 2026``, ``4th of May``, ``12 to 18 April 2015``, ``12–18 April``.
DAY_FIRST = re.compile(
    rf"(\d{{1,2}}){_ORD}(?:{_DASH}(\d{{1,2}}){_ORD})?\s+(?:of\s+)?({MONTH_PATTERN})\b\.?,?"
    rf"(?:\s+(\d{{4}})(?!\d))?",
    re.IGNORECASE,
)
#: At a day after its month: ``4, 2026``, ``12–18, 2015``, ``30 – May 2, 2015``.
MONTH_FIRST_REST = re.compile(
    rf"(\d{{1,2}}){_ORD}(?!\d)(?:{_DASH}(?:({MONTH_PATTERN})\.?\s+)?(\d{{1,2}}){_ORD}(?!\d))?"
    rf"(?:,?\s+(\d{{4}})(?!\d))?",
    re.IGNORECASE,
)
#: ``2026-05-04``, ``2026-05-04T14:05:00Z`` (RFC 3339), ``2026/05/04``.
ISO = re.compile(
    r"(\d{4})[-/](\d{2})[-/](\d{2})(?![\d-])"
    r"(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)
#: ``05/04/2026``, ``4.5.2026``: day and month both ways where both may be either.
NUMERIC = re.compile(r"(\d{1,2})([/.])(\d{1,2})\2(\d{4}|\d{2})(?![\d/.])")
#: ``14:05``, ``14:05:09``, ``2:05 pm``, ``2 p.m.``.
TIME = re.compile(r"(\d{1,2}):(\d{2})(?::\d{2})?(?!\d)(?:\s?([ap])\.?m\b\.?)?", re.IGNORECASE)


def _valid(year: int, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31 and year > 0


def day_keys(year: int | None, month: int, day: int) -> Key | None:
    """A unit's date: the day (``("md", …)`` when no year is written)."""
    if not 1 <= day <= 31:
        return None
    return ("d", year, month, day) if year is not None else ("md", month, day)


def month_keys(year: int, month: int) -> Key:
    """A unit's month and year (``June 2017``): supported by any date inside it."""
    return ("ym", year, month)


def decade_keys(start: int) -> list[Key]:
    """A unit's decade (``the 2000s``, ``2000's``): supported by any year inside it."""
    keys: list[Key] = [("dec", start)]
    for year in range(start, start + 10):
        keys.extend((("n", str(year), ""), ("n", str(year), "*")))
    return keys


def source_day_keys(year: int | None, month: int, day: int) -> list[Key]:
    """What a source's date supports: the day, its day of the year, its month, its quarter
    of its year, its year."""
    if not _valid(year or 1, month, day):
        return []
    keys: list[Key] = [("md", month, day)]
    if year is not None:
        y = str(year)
        keys += [
            ("d", year, month, day),
            ("ym", year, month),
            ("qy", year, (month + 2) // 3),
            ("n", y, ""),
            ("n", y, "*"),
        ]
    return keys


def source_month_keys(year: int, month: int) -> list[Key]:
    """What a source's month and year supports: the month, its quarter of the year, its year."""
    y = str(year)
    return [("ym", year, month), ("qy", year, (month + 2) // 3), ("n", y, ""), ("n", y, "*")]


#: A year right after a quarter (``Q3 2006``, ``the third quarter of 2006``, ``Q3, 2006``).
QUARTER_YEAR = re.compile(r",?\s+(?:of\s+)?(\d{4})(?!\d)", re.IGNORECASE)


def quarter_keys(quarter: int, after: str, at: int) -> tuple[Key, ...]:
    """A quarter's keys (``Q3``, ``third quarter``): the quarter, and where a year follows at
    ``at`` in ``after`` (``Q3 2006``) the quarter of that year, which any date inside it
    supports, as a month's and year's (a source's ``July 23, 2006``)."""
    m = QUARTER_YEAR.match(after, at)
    if m is None:
        return (("q", quarter),)
    return (("q", quarter), ("qy", int(m.group(1)), quarter))


def time_key(hour: int, minute: int, half: str | None) -> Key | None:
    """``14:05`` (``2:05 pm`` is ``14:05``; ``12 am`` is ``00:00``)."""
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    if hour > 24 or minute > 59:
        return None
    return ("t", hour, minute)
