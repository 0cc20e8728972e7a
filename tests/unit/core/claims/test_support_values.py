"""Values as values (contract rule 6b, v4): one form per line, each way.

Each row is (unit, source, what the unit's missing values are): ``()`` where the source gives
the same value in another spelling, the unit's own spelling of the value where it does not.
The first table is supported both ways (the unit as source and the source as unit too); the
second fails the way it is written and its mirror row follows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from fixtures import scaled
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.claims.support import Finding, SourceIndex, SourceText, check_support
from worker.core.claims.support.scan import (
    _between_numbers,
    _plain,
    _spaced_plain,
    source_keys,
    unit_values,
    visible,
)
from worker.core.claims.support.values import integer_key, read_at

A = CitationRef(EvidenceKind.OBS, 1)


def missing(unit: str, source: str) -> tuple[str, ...]:
    return check_support(unit, [SourceText(A, source)], SourceIndex()).missing_numbers


#: The same value, spelled two ways: each supports the other.
SAME = [
    ("1,281 vessels", "1281 vessels"),
    ("1 281 vessels", "1,281 vessels"),
    ("1\u202f281 vessels", "1281 vessels"),  # narrow no-break space
    ("1\u2009281 vessels", "1281 vessels"),  # thin space
    ("1.281,5 tonnes", "1281.5 tonnes"),  # European
    ("4,2 Mrd", "4.2 billion"),  # decimal comma, German magnitude
    ("4.2B", "4.2 billion"),
    ("4.2 B", "4.2bn"),
    ("4.2 mln", "4.2 million"),
    ("4.2M", "4,200,000"),
    ("$4.2 M", "$4.2 million"),
    ("12k", "12,000"),
    ("12%", "12 percent"),
    ("12 per cent", "12%"),
    ("-12%", "-12 %"),
    ("840 ms", "840 milliseconds"),
    ("840 seconds", "840 sec"),
    ("a 14-hour stretch", "14 hours"),
    ("13th", "thirteenth"),
    ("3rd", "third"),
    ("Nine vessels", "9 vessels"),
    ("twenty-five vessels", "25 vessels"),
    ("two million", "2,000,000"),
    ("50%", "half"),
    ("١٠٠ vessels", "100 vessels"),  # Arabic-Indic digits are the same digits
    ("opened (May 7, 2019) and", "opened on May 7, 2019 and"),
    ("3 100-metre races", "three 100-metre races"),  # spaced groups: every part at once
    # A fraction in words is the fraction (``two thirds`` is 2/3, never 2) and its percentage.
    ("two thirds of the houses", "two-thirds of the houses"),
    ("one-third of the seats", "a third of the seats"),
    ("three quarters of voters", "75% of voters"),
    ("two-thirds majority", "67 percent majority"),
    ("one half of the duo", "50% of the duo"),
    ("a third cousin", "3rd cousin"),  # ``a third`` with no ``of``: an ordinal
    ("January 31, 2017", "2017-01-31"),
    ("Jan. 31, 2017", "31 January 2017"),
    ("Sept. 4, 2019", "4 September 2019"),
    ("31st of January 2017", "January 31, 2017"),
    ("Monday, May 4, 2026", "2026-05-04"),
    ("2026-05-04", "4 May 2026"),
    ("14:05", "2:05 pm"),
    ("Q3", "third quarter"),
    ("the Q4 results", "the fourth-quarter results"),
    ("version 2.3.0", "version 2.3.0"),
]


@pytest.mark.parametrize(("unit", "source"), SAME)
def test_the_same_value_spelled_otherwise_is_found(unit: str, source: str) -> None:
    assert missing(unit, source) == ()


@pytest.mark.parametrize(("unit", "source"), SAME)
def test_and_the_other_way(unit: str, source: str) -> None:
    assert missing(source, unit) == ()


#: A value the unit writes and the source gives only inside something larger: supported one way.
INSIDE = [
    ("May 2026", "on 2026-05-04"),  # a month by a date inside it
    ("in 2019", "on June 3, 2019"),  # a year by a date inside it
    ("As of February 2019", "February 12, 2019"),
    ("in the 2000's", "in 2004"),  # a decade by a year inside it
    ("the 2000s", "2007"),
    ("mid-2019", "July 2019"),
    ("the third quarter of 2006", "on July 23, 2006"),  # a quarter of a year by a date in it
    ("Q3 2006", "in September 2006"),
    ("12 to 18 April 2015", "April 12–18, 2015"),  # a range is its two ends
    ("April 12–18, 2015", "12 April 2015 and 18 April 2015"),
    ("the 2018–19 season", "from 2018 to 2019"),
    ("at 14:05 on May 4, 2026", "2026-05-04T14:05:00Z"),  # RFC 3339
    ("18 in (460 mm)", "18 in"),  # a conversion is not checked again
    ("$4.2B", "revenue in billions: 4.2"),  # the digits alone, no magnitude
]


@pytest.mark.parametrize(("unit", "source"), INSIDE)
def test_a_value_inside_a_larger_one_is_found(unit: str, source: str) -> None:
    assert missing(unit, source) == ()


#: Another value: (unit, source, the unit's value named missing).
OTHER = [
    ("4,2 Mrd", "4.2 million", "4,2 Mrd"),
    ("Falcon-4.2B", "Falcon-4.2M", "4.2B"),
    ("$4.2 M", "$4.2B", "$4.2 M"),
    ("4.2 B", "4.2 million", "4.2 B"),
    ("4.2 mln", "4.2 billion", "4.2 mln"),
    ("840%", "840 ms", "840%"),
    ("840 seconds", "840 ms", "840 seconds"),
    ("840 ms", "840 seconds", "840 ms"),
    ("840k ms", "840 ms", "840k ms"),  # a magnitude's digits alone match a bare number only
    ("2026-04-05", "2026-05-04", "2026-04-05"),
    ("-12%", "+12%", "-12%"),
    ("+12%", "-12%", "+12%"),
    ("Q3", "Q4", "Q3"),
    ("Nine vessels", "four vessels", "Nine"),
    ("thirteenth", "14th", "thirteenth"),
    ("1,282 vessels", "1 281 vessels", "1,282"),
    ("May 2026", "2026-06-04", "May 2026"),
    ("June 3, 2019", "2019", "June 3, 2019"),  # a year does not support a day inside it
    ("the 1990s", "2004", "1990s"),
    ("12 to 19 April 2015", "April 12–18, 2015", "12 to 19 April 2015"),
    ("at 14:06", "2026-05-04T14:05:00Z", "14:06"),
    ("50%", "40 percent", "50%"),
    ("two thirds of the houses", "three quarters of the houses", "two thirds"),
    ("two thirds of the houses", "2 houses", "two thirds"),  # not the number 2
    ("a third of the seats", "3 seats", "a third"),
    ("three-quarters", "66%", "three-quarters"),
    ("the third quarter of 2006", "on October 23, 2006", "third quarter"),
    ("Q3 2006", "in October 2006", "Q3"),
    ("half", "40%", "half"),
    ("3rd", "4th", "3rd"),
    ("version 2.3.1", "version 2.3.0", "2.3.1"),
    # Read as the grammar reads them wherever they stand, never by their neighbours' spelling:
    # a spaced currency, a date in parentheses, a number of spaced groups (not one group alone).
    ("cost $ 5 in total", "cost € 5 in total", "$ 5"),
    ("cost $ 5, they said", "cost € 5, they said", "$ 5"),
    ("cost USD 5, they said", "cost EUR 5, they said", "USD 5"),
    ("opened (May 7, 2019) and", "opened (May 8, 2019) and", "May 7, 2019"),
    ("a fee of 1 281 000 dollars", "a fee of 1 281 dollars", "1 281 000 dollars"),
]


@pytest.mark.parametrize(("unit", "source", "named"), OTHER)
def test_another_value_is_missing_and_named(unit: str, source: str, named: str) -> None:
    assert missing(unit, source) == (named,)


@pytest.mark.parametrize(
    ("unit", "kind"),
    [
        ("Revenue reached 4.2B.", Finding.NUMBER),
        ("It entered on May 5, 2026.", Finding.DATE),
        ("Revenue reached it in the third quarter.", Finding.SPELLED),
        ("Nine vessels entered.", Finding.SPELLED),
    ],
)
def test_each_value_kind_is_its_own_finding(unit: str, kind: Finding) -> None:
    source = "Revenue reached 4.1 million when four vessels entered on 2026-05-04 in Q4."
    assert check_support(unit, [SourceText(A, source)]).findings == (kind,)


def test_a_reader_never_sees_a_links_url_or_a_character_reference() -> None:
    """``[report](https://x.io/2024/881)``: its URL's digits are not the unit's, and ``&#8239;``
    is a narrow no-break space (a thousands separator), not the number 8239."""
    unit = "See the [report](https://x.io/2024/881) and <https://x.io/77>: 5&#8239;000 vessels."
    assert [v.spelled for v in unit_values(visible(unit), number_words=False)] == ["5\u202f000"]
    assert missing(unit, "5000 vessels.") == ()
    assert missing("In 2024 there were 881 vessels.", "[x](https://x.io/2024/881)") == (
        "2024",
        "881",
    )


def test_a_source_gives_what_contains_its_dates_and_its_values_as_numbers() -> None:
    keys = source_keys("Entered on 2026-05-04 with 4.2B.", number_words=False)
    assert {("d", 2026, 5, 4), ("ym", 2026, 5), ("md", 5, 4), ("n", "2026", "*")} <= keys
    assert ("n", "4200000000", "") in keys
    assert ("n", "4.2", "") not in keys  # a magnitude's digits are not a bare number


def test_a_list_number_and_citation_tokens_are_no_values_of_the_unit() -> None:
    assert missing("1. Latency rose [OBS-9123].", "Latency rose.") == ()


@pytest.mark.parametrize("spelled", ["0,10s", "1.50s", "0.10s", "1,90s", "19²0s"])
def test_a_number_with_a_decades_s_that_is_no_decade_is_read_without_a_fault(spelled: str) -> None:
    """``0,10s`` looked like ``1990s`` (four characters, a final 0, an ``s``) and ``int()`` of it
    raised inside the core: the draft was dead-lettered as ``internal_error``."""
    unit = f"Aurora waited near buoy {spelled}."
    assert missing(unit, unit) == ()
    assert missing(unit, "Aurora waited near buoy 7.") != ()


#: Pieces a value may be made of: digits, separators, signs, currencies, suffixes, units, dates,
#: number words and look-alike digits, joined at random.
_PIECE_LIST = (
    "0|1|9|10|1990|2026|,|.| |s|'s|%|-|+|$|€|k|M|bn|B|am|pm|:|Q|Q3|th|st|°C|°|/|–|to|and|Jan|"
    "January|Sept.|mln|Mrd|half|nine|twenty|hundred|million|\u202f|&#8239;|(|)|'|’|x|in|mm|"
    "ms|km|kg|h|T|Z|e|E|²|½|١|٠"
)
_PIECES = st.sampled_from(_PIECE_LIST.split("|"))
_TEXT = st.lists(_PIECES, max_size=30).map("".join)


@settings(max_examples=scaled(300), deadline=None)
@given(_TEXT, _TEXT)
def test_no_text_makes_the_value_reader_raise(unit: str, source: str) -> None:
    """Whatever a unit and its source hold, the check returns a result: a fault in the core is
    a dead letter for a draft that did nothing wrong."""
    for claim, text in ((unit, source), (source, unit)):
        result = check_support(claim, [SourceText(A, text)], SourceIndex())
        assert isinstance(result.missing_numbers, tuple)


_SPACED = st.builds(
    lambda head, digits, tail: head + digits + tail,
    _TEXT,
    st.sampled_from(["7", "07", "12", "2026", "٣"]),
    st.sampled_from([" .", "  ", " )", " ];", " ,x", " ", " . May", "  .", " %", " - 9"]),
)


@settings(max_examples=scaled(1000), deadline=None)
@given(_SPACED)
def test_the_short_cut_for_an_integer_before_a_closing_mark_reads_as_the_grammar(text: str) -> None:
    """``scan``'s short cut for ``7 .`` (a unit's ``7 [OBS-1].`` once its token is out) reads
    exactly what ``read_at`` reads wherever it applies."""
    for run in re.finditer(r"\d+", text):
        quick = _spaced_plain(text, run.start(), run.end())
        if quick is not None:
            assert quick == read_at(text, run.start(), run.end()), text


@pytest.mark.parametrize(
    ("text", "applies"),
    [
        ("buoy 7 .", True),
        ("buoy 7  ", True),
        ("(7 ]", True),
        ("May 7 .", False),
        ("Q 7 .", False),
        ("$ 7 .", False),
        ("2018 - 19 .", False),
        ("buoy 7 %", False),
        ("buoy 7 May", False),
        ("buoy-7 .", False),
    ],
)
def test_the_short_cut_leaves_the_rest_to_the_grammar(text: str, applies: bool) -> None:
    run = list(re.finditer(r"\d+", text))[-1]
    assert (_spaced_plain(text, run.start(), run.end()) is not None) is applies


@pytest.mark.parametrize("digit", ["1", "١", "٣"])
def test_a_run_of_thousands_of_digits_of_any_script_is_read_without_a_fault(digit: str) -> None:
    """A value's key never goes through ``int()`` (which refuses more than 4,300 digits)."""
    run = digit * 6000
    assert missing(f"It was {run}, they said.", "It was 5, they said.") == (run,)


def test_a_spaced_range_of_years_is_read_with_its_century() -> None:
    assert missing("In 2018 – 19 it grew", "In 1918 – 19 it grew") == ("2018", "19")
    assert missing("In 2018 – 19 it grew", "In 2018–19 it grew") == ()


_CONTEXT = st.lists(
    st.sampled_from(
        [*_PIECE_LIST.split("|"), "USD", "US$", "£", "¥", "₹", "No.", "May", "Sept.", "(", "\n"]
    ),
    max_size=12,
).map("".join)


def assert_read_as_an_integer_alone(text: str, short_cut: Callable[[str, int, int], bool]) -> None:
    """Wherever ``short_cut`` takes a run of digits of ``text`` for an integer alone (its key
    without a reading), ``read_at`` reads just that integer there: the same keys, the same end."""
    for run in re.finditer(r"\d+", text):
        if short_cut(text, run.start(), run.end()):
            reading = read_at(text, run.start(), run.end())
            key = integer_key(run.group())
            assert reading is not None, text
            assert reading.found_by == (("n", key, "*"), ("abs", key, "*")), text
            assert reading.gives == (("n", key, ""), ("n", key, "*")), text
            assert reading.end == run.end(), text


@settings(max_examples=scaled(1000), deadline=None)
@given(_CONTEXT, st.sampled_from(["7", "07", "12", "2026", "١٠"]), _CONTEXT)
def test_the_short_cut_for_an_integer_alone_reads_as_the_grammar(
    head: str, digits: str, tail: str
) -> None:
    """``scan``'s short cut for an integer alone (``_plain``: no reading made for it) applies
    only where ``read_at`` reads just that integer: a currency, capital, month, sign or range
    dash before it, or a suffix after it, leaves it to the grammar (``$ 5,`` is five dollars,
    ``(May 7,`` a date)."""
    assert_read_as_an_integer_alone(head + digits + tail, _plain)


_DIGITS = st.sampled_from(["1", "12", "281", "2026", "07", "١٣", "1990"])


@settings(max_examples=scaled(1000), deadline=None)
@given(_CONTEXT, _DIGITS, _DIGITS, _DIGITS, _CONTEXT)
def test_the_short_cut_for_a_number_between_numbers_reads_as_the_grammar(
    head: str, a: str, b: str, c: str, tail: str
) -> None:
    """``scan``'s short cut for a spaced number between numbers (``12 13 14``) applies only
    where ``read_at`` reads just that integer."""
    assert_read_as_an_integer_alone(f"{head}{a} {b} {c}{tail}", _between_numbers)
