"""The support check's two readings of a unit agree: an ASCII unit goes the C-level way
(``_check_ascii``), any unit can go the ``_Read`` way (``_check_read``); the results (level,
score, missing numbers and words in order, closest source, negation) must be identical."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.claims import support
from worker.core.claims.support import (
    SourceIndex,
    SourceText,
    SupportResult,
    check_cited,
    check_support,
)
from worker.core.contract import SupportLevel

REFS = [CitationRef(kind, i) for kind in EvidenceKind for i in (1, 2)]

#: Words and numbers where the two readings could part: stop words spelled like a stem
#: (``will``/``wills``), words never stemmed, suffixes, negations, months, magnitudes, numbers
#: glued to letters or a percent, list numbers, tokens, control characters next to digits.
PIECES = [
    "the",
    "a",
    "not",
    "never",
    "no",
    "didn't",
    "can't",
    "will",
    "wills",
    "news",
    "series",
    "gas",
    "bus",
    "less",
    "us",
    "us's",
    "one",
    "ones",
    "vessel",
    "vessels",
    "Aurora",
    "aurora's",
    "moved",
    "moving",
    "move",
    "moves",
    "quickly",
    "supplies",
    "supply",
    "flies",
    "buoy",
    "corridor",
    "slowed",
    "slowing",
    "waited",
    "waits",
    "rates",
    "rated",
    "boxes",
    "boxed",
    "fixes",
    "analysts",
    "analyst",
    "e.g.",
    "connection-pool",
    "eu-west-1",
    "p95",
    "Q3",
    "4.2B",
    "4.2",
    "billion",
    "4,200",
    "million",
    "12%",
    "12",
    "%",
    "percent",
    "3rd",
    "3",
    "2026-05-04",
    "May",
    "4,",
    "2026",
    "Sept.",
    "14:05",
    "04:10",
    "1,281",
    "1281",
    "2.3.0",
    "$4.2",
    "4.2bn",
    "10",
    "ten",
    "first",
    "twice",
    "half",
    "dozen",
    "k",
    "5k",
    "12k",
    "7",
    "No.",
    "4.b",
    "1a",
    "x4",
    ".5",
    "0.5",
    "007",
    "2_000",
    "[OBS-1]",
    "[DOC-2]",
    "[obs-1]",
    "\x015",
    "\x01",
    "_under_",
    "(",
    ")",
    "-",
    ";",
    ":",
]
SEPARATORS = (" ", " ", " ", ", ", ". ", "-", "", "\n", " (")


def text_of(pieces: list[tuple[str, str]], lead: str) -> str:
    return lead + "".join(word + sep for word, sep in pieces)


texts = st.builds(
    text_of,
    st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), max_size=16),
    st.sampled_from(("", "", "1. ", "- ", "(2) ")),
)


def by_read(unit: str, sources: list[SourceText], accuse: bool) -> SupportResult:
    index = SourceIndex()
    kept = [s for s in sources if s.text and not s.text.isspace()]
    if not kept:
        return SupportResult(SupportLevel.UNCHECKED, 0.0, (), (), None)
    unit_read = support._read(unit, index.stems, unit=True)
    read = [index.read(s.text) for s in kept]
    return support._check_read(unit_read, kept, read, index, accuse)


def same(unit: str, sources: list[SourceText], accuse: bool = True) -> None:
    fast = check_support(unit, sources, SourceIndex(), words_accuse=accuse)
    assert fast == by_read(unit, sources, accuse)


@given(
    unit=texts,
    sources=st.lists(st.tuples(st.sampled_from(REFS), texts), min_size=1, max_size=4),
    accuse=st.booleans(),
)
@settings(max_examples=400, deadline=None)
def test_an_ascii_unit_reads_the_same_both_ways(
    unit: str, sources: list[tuple[CitationRef, str]], accuse: bool
) -> None:
    same(unit, [SourceText(ref, text) for ref, text in sources], accuse)


@pytest.mark.parametrize(
    ("unit", "sources"),
    [
        # ``will`` is a stop word spelled like the stem of ``wills``: both are missing words
        ("The will said it: wills were read.", ["Probate papers were read."]),
        ("News of the gas bus series.", ["The news: gas buses in series."]),
        ("Revenue reached 4.2B in Q3.", ["Revenue reached 4.2 billion."]),
        ("Refunds rose 12 % overnight.", ["Refunds rose 12% overnight."]),
        ("1. The vessel entered on May 4, 2026.", ["The vessel entered on 2026-05-04."]),
        ("It waited \x015 hours.", ["It waited 5 hours."]),
        # closest: the first of the sources covering the most
        ("The vessel slowed near the buoy.", ["A buoy.", "The vessel slowed.", "Slowed vessel."]),
        ("The vessel did not slow.", ["The vessel slowed.", "No data."]),
        ("Supplies flies boxes quickly.", ["supply fly boxed quick"]),
    ],
)
def test_the_traps_read_the_same_both_ways(unit: str, sources: list[str]) -> None:
    refs = [SourceText(REFS[i], text) for i, text in enumerate(sources)]
    same(unit, refs)
    same(unit, refs, accuse=False)


def test_a_unit_checked_against_its_drafts_read_sources_is_checked_the_same() -> None:
    texts = {REFS[0]: "The vessel slowed near buoy 7.", REFS[1]: "  ", REFS[2]: "It waited."}
    index = SourceIndex()
    cited = index.cited(texts)
    assert list(cited) == [REFS[0], REFS[2]]  # a blank text is no source
    unit = "The vessel waited near buoy 7 for hours [OBS-1]."
    refs = [REFS[1], REFS[2], REFS[0], REFS[3]]  # REFS[3]: resolved to no text here
    expected = check_support(unit, [SourceText(r, texts.get(r, "")) for r in refs])
    assert check_cited(unit, refs, cited, index) == expected
    assert expected.closest == REFS[0]
    assert expected.missing_words == ("hours",)
    assert check_cited(unit, [REFS[1]], cited, index).level is SupportLevel.UNCHECKED
