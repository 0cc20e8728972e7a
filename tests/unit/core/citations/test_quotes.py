"""Checking a quote against its source (contract §3.6)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations import quotes as quotes_module
from worker.core.citations.evidence import (
    CitationRef,
    EvidenceKind,
    EvidenceRecord,
    QuoteCheck,
    Resolution,
)
from worker.core.citations.quotes import appear_in_order, check_quote, check_quotes, normalize
from worker.core.failures import Failure, FailureCode

SOURCE = "The vessel “Northern Star” loitered — for 12.5 hours — in the north–east corridor."


def test_no_quote_is_none() -> None:
    assert check_quote(None, SOURCE) is QuoteCheck.NONE
    assert check_quote(None, None) is QuoteCheck.NONE


@pytest.mark.parametrize("quote", ["", " ", "\n\t "])
def test_an_empty_quote_is_none(quote: str) -> None:
    assert check_quote(quote, SOURCE) is QuoteCheck.NONE
    assert check_quote(quote, None) is QuoteCheck.NONE


def test_no_source_text_is_a_mismatch() -> None:
    assert check_quote("loitered", None) is QuoteCheck.MISMATCH


def test_a_substring_is_exact() -> None:
    assert check_quote("loitered — for 12.5 hours", SOURCE) is QuoteCheck.EXACT
    assert check_quote(SOURCE, SOURCE) is QuoteCheck.EXACT


@pytest.mark.parametrize(
    "quote",
    [
        'The vessel "Northern Star" loitered',  # straight quotes for curly ones
        "the VESSEL “northern star”",  # case
        "loitered - for 12.5 hours - in",  # hyphens for em dashes
        "north-east corridor",  # hyphen for an en dash
        "north\u2010east corridor",  # Unicode hyphen
        "north\u2212east corridor",  # minus sign
        "loitered   —\n for  12.5",  # whitespace runs
        "loitered\u00a0— for",  # no-break space (NFKC)
        "ｌｏｉｔｅｒｅｄ — FOR",  # fullwidth letters (NFKC)
        "loi\u00adtered — for",  # soft hyphen
        "loi\u200btered — for",  # zero-width space
    ],
)
def test_normalised_matches_are_tolerant(quote: str) -> None:
    assert check_quote(quote, SOURCE) is QuoteCheck.TOLERANT


def test_a_double_hyphen_is_not_one_dash() -> None:
    assert check_quote("loitered -- for", SOURCE) is QuoteCheck.MISMATCH


def test_the_german_sharp_s_case_folds() -> None:
    assert check_quote("STRASSE", "die Straße war gesperrt") is QuoteCheck.TOLERANT


def test_an_ellipsis_splits_the_quote_into_ordered_pieces() -> None:
    assert check_quote("The vessel … 12.5 hours", SOURCE) is QuoteCheck.TOLERANT
    assert check_quote("The vessel...12.5 hours...corridor", SOURCE) is QuoteCheck.TOLERANT
    assert check_quote("vessel …… corridor", SOURCE) is QuoteCheck.TOLERANT


def test_ellipsis_pieces_must_be_in_order() -> None:
    assert check_quote("corridor … The vessel", SOURCE) is QuoteCheck.MISMATCH


def test_ellipsis_pieces_must_not_overlap() -> None:
    assert check_quote("abcd … cdef", "abcdef") is QuoteCheck.MISMATCH
    assert check_quote("abc … def", "abcdef") is QuoteCheck.TOLERANT


def test_a_quote_of_nothing_but_ellipses_is_a_mismatch() -> None:
    assert check_quote("…", SOURCE) is QuoteCheck.MISMATCH
    assert check_quote(" ... … ", SOURCE) is QuoteCheck.MISMATCH


def test_an_ellipsis_in_the_source_is_matched_exactly() -> None:
    assert check_quote("wait…", "We had to wait… then go.") is QuoteCheck.EXACT


def test_words_not_in_the_source_are_a_mismatch() -> None:
    assert check_quote("loitered for 13 hours", SOURCE) is QuoteCheck.MISMATCH
    assert check_quote("Southern Star", SOURCE) is QuoteCheck.MISMATCH
    assert check_quote("anything", "") is QuoteCheck.MISMATCH


def test_normalize() -> None:
    assert normalize("  “Quoted”\u00a0‘text’ — ok\u200b!\n") == "\"quoted\" 'text' - ok!"


def test_appear_in_order() -> None:
    assert appear_in_order(["a", "b"], "xaxbx")
    assert not appear_in_order(["b", "a"], "xaxbx")
    assert appear_in_order([], "")


@given(st.text(max_size=80), st.integers(0, 80), st.integers(0, 80))
@settings(max_examples=300, deadline=None)
def test_any_non_blank_substring_is_exact(source: str, a: int, b: int) -> None:
    quote = source[min(a, b) : max(a, b)]
    expected = QuoteCheck.NONE if not quote.strip() else QuoteCheck.EXACT
    assert check_quote(quote, source) is expected


@given(
    st.text(alphabet="abcdefXYZ -–—“”\"' \n", max_size=80), st.integers(0, 80), st.integers(0, 80)
)
@settings(max_examples=300, deadline=None)
def test_a_recased_straightened_substring_is_at_least_tolerant(source: str, a: int, b: int) -> None:
    quote = source[min(a, b) : max(a, b)].upper().replace("“", '"').replace("—", "-")
    if quote.strip():
        assert check_quote(quote, source) in (QuoteCheck.EXACT, QuoteCheck.TOLERANT)


def test_each_source_is_normalised_once_and_each_repeated_pair_checked_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rule 7's linear time: 300 entries quoting one source (three distinct quotes, each
    repeated) normalise the source once and each distinct quote once, and every entry still gets
    its own check and failure path."""
    ref = CitationRef(EvidenceKind.DOC, 1)
    other = CitationRef(EvidenceKind.OBS, 2)
    evidence = {
        ref: EvidenceRecord(ref=ref, acl=None, text=SOURCE, title="t"),
        other: EvidenceRecord(ref=other, acl=None, text="Other text here.", title=None),
    }
    resolutions = dict.fromkeys(evidence, Resolution.RESOLVED)
    quotes = ["NORTHERN   STAR", "not in it", "loitered"] * 100
    entries = [{"kind": "DOC", "id": 1, "quote": q} for q in quotes]
    entries.append({"kind": "OBS", "id": 2, "quote": "OTHER text"})
    calls: list[str] = []
    real = quotes_module.normalize

    def counting(text: str) -> str:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(quotes_module, "normalize", counting)
    failures: list[Failure] = []
    first, worst = check_quotes({"citations": entries}, resolutions, evidence, failures)
    assert sorted(calls) == sorted([SOURCE, "NORTHERN   STAR", "not in it", "Other text here.",
                                    "OTHER text"])  # fmt: skip
    assert first == {ref: "NORTHERN   STAR", other: "OTHER text"}
    assert worst == {ref: QuoteCheck.MISMATCH, other: QuoteCheck.TOLERANT}
    assert [f.path for f in failures] == [f"citations[{i}].quote" for i in range(1, 300, 3)]
    assert {f.code for f in failures} == {FailureCode.QUOTE_MISMATCH}
