"""The support measure (contract rule 6b): numbers as values, content words, negation, the traps."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.claims.support import (
    Finding,
    SourceIndex,
    SourceText,
    check_cited,
    check_support,
    supported_cited,
)
from worker.core.contract import SupportLevel

A = CitationRef(EvidenceKind.OBS, 1)
B = CitationRef(EvidenceKind.DOC, 2)
LATENCY = (
    "Checkout p95 latency rose from 180 ms to 840 ms within ten minutes of the 14:05 UTC deploy "
    "of payments-api 2.3.0."
)


def level(unit: str, *texts: str) -> SupportLevel:
    sources = [SourceText(CitationRef(EvidenceKind.OBS, i), t) for i, t in enumerate(texts)]
    return check_support(unit, sources).level


@pytest.mark.parametrize(
    ("unit", "source"),
    [
        ("1,281 vessels passed the strait.", "In total 1281 vessels passed the strait."),
        ("Revenue reached 4.2 billion.", "Revenue reached $4,200 million."),
        ("Revenue reached 4.2B.", "Revenue reached 4.2 billion."),
        ("Revenue reached 4.2bn.", "Revenue reached 4,200,000,000."),
        ("Refunds rose 12% overnight.", "Refunds rose 12 percent overnight."),
        ("The 3rd vessel entered the corridor.", "Vessel 3 entered the corridor."),
        ("The vessel entered on May 4, 2026.", "The vessel entered on 2026-05-04."),
        ("The vessel entered on 4 May 2026.", "The vessel entered on May 4, 2026."),
        ("The deploy went out at 14:05 UTC.", "Deploy at 14:05 UTC today."),
        ("Latency rose within 10 minutes of the deploy.", LATENCY),
        ("It loitered for a 14-hour stretch.", "It loitered for 14 hours."),
        ("Revenue (in billions) reached 4.2B.", "Revenue in billions: 4.2 for the quarter."),
    ],
)
def test_the_same_value_written_another_way_is_supported(unit: str, source: str) -> None:
    result = check_support(unit, [SourceText(A, source)])
    assert result.missing_numbers == ()
    assert result.level is SupportLevel.SUPPORTED


@pytest.mark.parametrize(
    ("unit", "source", "missing", "expected"),
    [
        ("Aurora loitered 40 hours near the corridor.", "Aurora loitered 14 hours near it.",
         "40 hours", SupportLevel.UNSUPPORTED),
        ("Latency rose to 940 ms.", LATENCY, "940 ms", SupportLevel.UNSUPPORTED),
        ("Revenue reached 4.2B.", "Revenue reached 4.2 million.", "4.2B", SupportLevel.UNSUPPORTED),
        ("Refunds rose 13% overnight.", "Refunds rose 12 percent overnight.", "13%",
         SupportLevel.UNSUPPORTED),
        # Dates and times: ``missing_date``, below 0.9 precision on WiCE test: ``weak``.
        ("The vessel entered on May 5, 2026.", "The vessel entered on 2026-05-04.", "May 5, 2026",
         SupportLevel.WEAK),
        ("The deploy went out at 14:06 UTC.", "Deploy at 14:05 UTC today.", "14:06",
         SupportLevel.WEAK),
    ],
)  # fmt: skip
def test_a_value_no_source_has_is_named_and_its_kind_decides_the_level(
    unit: str, source: str, missing: str, expected: SupportLevel
) -> None:
    result = check_support(unit, [SourceText(A, source)])
    assert result.level is expected
    assert result.missing_numbers == (missing,)


@pytest.mark.parametrize(
    "unit",
    [
        "Checkout p95 latency rose after the deploy of payments-api 2.3.0 [OBS-1001] [EVT-501].",
        "1. Checkout latency rose after the deploy.",  # a list number is not a claim
        "Latency in eu-west-1 rose after the Q3 deploy.",  # digits glued to letters are words
    ],
)
def test_the_usual_traps_are_not_accused(unit: str) -> None:
    source = LATENCY + " Region eu-west-1, Q3 release train."
    result = check_support(unit, [SourceText(A, source)])
    assert result.missing_numbers == ()
    assert result.level is SupportLevel.SUPPORTED


def test_citation_tokens_digits_are_never_numbers_of_the_claim() -> None:
    result = check_support("Latency rose after the deploy [OBS-987654].", [SourceText(A, LATENCY)])
    assert result.missing_numbers == ()


def test_an_unrelated_source_is_unsupported_with_its_missing_words() -> None:
    result = check_support(
        "The harbour master resigned over cancelled fuel contracts.", [SourceText(A, LATENCY)]
    )
    # ``very_low_coverage`` (none found at all), 1.00 precision on WiCE test: it fails.
    assert result.level is SupportLevel.UNSUPPORTED
    assert result.findings == (Finding.VERY_LOW,)
    assert result.score == 0.0
    words = ("harbour", "master", "resigned", "cancelled", "fuel", "contracts")
    assert result.missing_words == words


def test_a_partly_covered_unit_is_weak_never_a_failure_level() -> None:
    result = check_support(
        "Checkout latency rose sharply while engineers debated the rollback plan.",
        [SourceText(A, LATENCY)],
    )
    assert result.level is SupportLevel.WEAK


def test_a_name_no_source_has_is_unsupported() -> None:
    source = "Aurora loitered near the northern corridor for three hours."
    result = check_support("Valkoria loitered near the northern corridor.", [SourceText(A, source)])
    assert (result.level, result.findings) == (SupportLevel.UNSUPPORTED, (Finding.NAME,))
    assert result.missing_words == ("Valkoria",)
    ok = check_support("Aurora loitered near the northern corridor.", [SourceText(A, source)])
    assert (ok.level, ok.findings) == (SupportLevel.SUPPORTED, ())


MUSEUM = "The National Air and Space Museum in Washington opened its new gallery in July."


@pytest.mark.parametrize(
    "unit",
    [
        "The National Air and Space Museum (NASM) in Washington opened its new gallery.",
        "The NASM (National Air and Space Museum) in Washington opened its new gallery.",
    ],
)
def test_an_acronym_the_unit_defines_itself_is_no_missing_name(unit: str) -> None:
    """``(NASM)`` right after the words whose initials it is (or before them in parentheses)
    is the unit's own short name for what it states: the source need not abbreviate it."""
    result = check_support(unit, [SourceText(A, MUSEUM)])
    assert (result.level, result.findings, result.missing_words) == (
        SupportLevel.SUPPORTED,
        (),
        (),
    )


@pytest.mark.parametrize(
    ("unit", "named"),
    [
        # Its letters are not the initials of the words before it: a name no source has.
        ("The National Air and Space Museum (NMAH) in Washington opened its new gallery.", "NMAH"),
        ("The museum in Washington (NASM) opened its new gallery.", "NASM"),
        # Its words are missing, however it is abbreviated: they are still checked.
        (
            "The National Tiltrotor Heritage Museum (NTHM) in Washington opened its new gallery.",
            "Tiltrotor",
        ),
    ],
)
def test_an_acronym_not_defined_by_its_words_is_still_a_missing_name(unit: str, named: str) -> None:
    result = check_support(unit, [SourceText(A, MUSEUM)])
    assert result.level is SupportLevel.UNSUPPORTED
    assert Finding.NAME in result.findings
    assert named in result.missing_words


@pytest.mark.parametrize(
    ("unit", "source"),
    [
        (
            "Her first novel, Hygiène de l'assassin, appeared.",
            "Her first novel, Hygiene de l'assassin, appeared.",
        ),
        ("Maxime Lagace was assigned to Chicago.", "Maxime Lagacé was assigned to Chicago."),
        ("Jón Daði Böðvarsson left the club.", "Jon Dadi Bodvarsson left the club."),
    ],
)
def test_a_name_with_or_without_its_accents_is_the_same_name(unit: str, source: str) -> None:
    """English text drops and keeps accents on the same names (NFKD, marks out; ``ð`` as ``d``)."""
    for u, s in ((unit, source), (source, unit)):
        result = check_support(u, [SourceText(A, s)])
        assert (result.level, result.missing_words) == (SupportLevel.SUPPORTED, ()), (u, s)


def test_another_name_with_accents_is_still_missing() -> None:
    result = check_support(
        "Maxime Lagacé was assigned to Chicago.",
        [SourceText(A, "Maxime Lagarde was assigned to Chicago.")],
    )
    assert (result.level, result.missing_words) == (SupportLevel.UNSUPPORTED, ("Lagacé",))


def test_words_accuse_false_reports_coverage_but_accuses_numbers_only() -> None:
    unrelated = "Flag the harbour master's vessel for review today."
    assert check_support(unrelated, [SourceText(A, LATENCY)], words_accuse=False).level is (
        SupportLevel.WEAK
    )
    changed = "Flag the vessel: latency rose to 940 ms."
    assert check_support(changed, [SourceText(A, LATENCY)], words_accuse=False).level is (
        SupportLevel.UNSUPPORTED
    )


@pytest.mark.parametrize(
    "unit",
    [
        "Checkout latency did not rise after the deploy.",
        "Checkout latency never rose after the deploy.",
        "Checkout latency no longer rises after a deploy.",
    ],
)
def test_a_negation_no_source_makes_is_unsupported(unit: str) -> None:
    assert level(unit, LATENCY) is SupportLevel.UNSUPPORTED


def test_a_negation_a_source_makes_too_is_supported() -> None:
    source = "The renewal did not slip: Initech signed before the quarter closed."
    assert level("The renewal did not slip.", source) is SupportLevel.SUPPORTED


def test_cjk_text_is_read_as_bigrams() -> None:
    source = "奥罗拉号在北部走廊停留了三个小时。"
    assert level("奥罗拉号在北部走廊停留。", source) is SupportLevel.SUPPORTED
    result = check_support("油轮在南部港口被扣押了。", [SourceText(A, source)])
    assert (result.level, result.findings) == (SupportLevel.UNSUPPORTED, (Finding.VERY_LOW,))


def test_no_source_text_is_unchecked_never_an_accusation() -> None:
    assert check_support("Latency rose to 940 ms.", []).level is SupportLevel.UNCHECKED
    blank = [SourceText(A, ""), SourceText(B, "  \n")]
    result = check_support("Latency rose to 940 ms.", blank)
    assert (result.level, result.closest, result.missing_numbers) == (
        SupportLevel.UNCHECKED,
        None,
        (),
    )


def test_union_of_sources_and_the_closest_one() -> None:
    deploy = "Deploy: payments-api 2.3.0 rolled out to eu-west-1 at 14:05 UTC by the train."
    unit = "Latency rose to 840 ms after payments-api 2.3.0 rolled out to eu-west-1."
    result = check_support(unit, [SourceText(B, deploy), SourceText(A, LATENCY)])
    assert result.level is SupportLevel.SUPPORTED  # 840 from one source, the rollout from the other
    assert result.missing_words == ()
    # A unit mostly in the latency source: it is the closest whatever the order.
    unit = "Checkout p95 latency rose within ten minutes of the deploy."
    assert check_support(unit, [SourceText(B, deploy), SourceText(A, LATENCY)]).closest == A
    assert check_support(unit, [SourceText(A, LATENCY), SourceText(B, deploy)]).closest == A


def test_a_source_index_reads_each_text_once_and_gives_the_same_results() -> None:
    index = SourceIndex()
    units = ["Latency rose to 840 ms.", "Latency rose to 940 ms.", "The deploy was at 14:05."]
    sources = [SourceText(A, LATENCY)]
    with_index = [check_support(u, sources, index) for u in units]
    without = [check_support(u, sources) for u in units]
    assert with_index == without
    assert len(index._read) == 1


_WORDS = st.sampled_from(
    ["latency", "rose", "deploy", "vessel", "corridor", "refunds", "840", "14:05", "12%", "the"]
)


@settings(max_examples=200, deadline=None)
@given(
    unit=st.lists(_WORDS, min_size=1, max_size=12).map(" ".join),
    texts=st.lists(st.lists(_WORDS, max_size=15).map(" ".join), min_size=1, max_size=4),
)
def test_the_level_and_evidence_do_not_depend_on_source_order(unit: str, texts: list[str]) -> None:
    sources = [SourceText(CitationRef(EvidenceKind.OBS, i), t) for i, t in enumerate(texts)]
    forward = check_support(unit, sources)
    backward = check_support(unit, sources[::-1])
    assert forward[:4] == backward[:4]  # closest may differ on a tie: the first given wins


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=15).map(" ".join))
def test_a_sources_own_sentence_is_supported(text: str) -> None:
    result = check_support(text, [SourceText(A, text)])
    assert result.level is SupportLevel.SUPPORTED
    assert result.missing_numbers == ()
    assert result.missing_words == ()


def test_a_unit_citing_many_sources_looks_each_value_up_once_in_their_union() -> None:
    """Linear by construction (``index.py``): each source's value keys are read once per index,
    their union once per distinct set of sources, and a unit's values are looked up in that one
    set: 1,000 sources cost 1,000 readings, not values × sources."""
    reads: list[str] = []

    class Counting(SourceIndex):
        __slots__ = ()

        def keys(self, text: str) -> frozenset[tuple[object, ...]]:
            reads.append(text)
            return super().keys(text)

    sources = [
        SourceText(CitationRef(EvidenceKind.OBS, i), f"Buoy {i} read {i} nm.") for i in range(1000)
    ]
    index = Counting()
    unit = "Buoys read " + ", ".join(f"{i} nm" for i in range(0, 1000, 7)) + ", and 5000 nm."
    first = check_support(unit, sources, index)
    assert first.missing_numbers == ("5000 nm",)
    assert len(reads) == 1000
    union = index.union_keys(sources)
    assert union is index.union_keys(list(reversed(sources)))  # once per set of sources
    assert check_support(unit, sources, index) == first
    assert len(reads) == 1000  # a second unit citing the same sources reads none again


_MIXED = st.sampled_from(
    ["Aurora", "Zyx", "vessel", "waited", "near", "buoy", "7", "840 ms", "nine", "May", "not",
     "the", "[OBS-1]", "[DOC-2]", ".", ",", "latency", "rose", "Greenwood", "National", "Air",
     "and", "Space", "Museum", "(NASM)", "NASM", "two", "thirds", "Lagacé", "Lagace", "Q3", "2006"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@example(  # a unit that defines its acronym: the acronym is no missing name in either
    unit="The National Air and Space Museum (NASM) opened in Lagacé [OBS-1].",
    texts=["The National Air and Space Museum opened in Lagace.", "two thirds"],
)
@given(
    unit=st.lists(_MIXED, min_size=1, max_size=12).map(" ".join),
    texts=st.lists(st.lists(_MIXED, max_size=15).map(" ".join), min_size=2, max_size=2),
)
def test_supported_cited_is_the_level_of_check_cited(unit: str, texts: list[str]) -> None:
    """Rule 5's question (is a sentence that lost a citation ``supported``?) is answered in the
    cheapest order, never otherwise than the whole check."""
    index = SourceIndex()
    cited = index.cited(dict(zip((A, B), texts, strict=True)))
    for refs in ([A], [B], [A, B]):
        whole = check_cited(unit, refs, cited, index).level is SupportLevel.SUPPORTED
        assert supported_cited(unit, refs, cited, index) is whole
