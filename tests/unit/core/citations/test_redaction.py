"""Removing tokens without forming new ones (contract §3.5)."""

from __future__ import annotations

import re
from bisect import bisect_right

import hypothesis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.citations.redaction import _guard, remove_all_tokens, remove_tokens, replace_spans
from worker.core.citations.tokens import MAX_ID_DIGITS, scan_tokens

OBS, DOC, EVT = EvidenceKind.OBS, EvidenceKind.DOC, EvidenceKind.EVT
DOC7 = CitationRef(DOC, 7)
REFERENCE = re.compile(r"\[(OBS|DOC|EVT)-([0-9]+)\]", re.ASCII)
ALPHABET = "[OBS-DOC]EVT0123456789 x.\n"


def tokens(text: str) -> list[CitationRef]:
    return [CitationRef(EvidenceKind(m[1]), int(m[2])) for m in REFERENCE.finditer(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[DOC-5[DOC-7]1]", "[DOC-5 1]"),  # no look-alike either: digits, a space, digits
        ("[DOC-5[DOC-7][DOC-7]1]", "[DOC-5 1]"),
        # The guard's space leaves a look-alike (``[DOC -5]`` reads as DOC 5): it goes too.
        ("[DOC[DOC-7]-5]", ""),
        ("[[DOC-7]OBS-1]", ""),
        ("[OBS-1[DOC-7]]", ""),
        ("[DOC-5 [DOC-7]]", ""),
        ("a[DOC-7]b", "ab"),
        ("[DOC-7]", ""),
    ],
)
def test_a_removal_never_joins_a_new_token(text: str, expected: str) -> None:
    assert remove_tokens(text, {DOC7}) == expected
    assert tokens(remove_tokens(text, {DOC7})) == []


def test_the_guard_breaks_a_joined_token_with_a_space() -> None:
    """``[DOC`` + ``-5]``: ``replace_spans`` (below the look-alike rescan) leaves a space."""
    assert replace_spans("[DOC[DOC-7]-5]", [(4, 11, "")]) == "[DOC -5]"


def test_a_junction_across_two_removals_is_guarded() -> None:
    """``[DOC`` + ``-5`` + ``]`` spans two removal points; the first one gets the space."""
    text = "[DOC[DOC-7]-5[EVT-1]]"
    assert replace_spans(text, [(4, 11, ""), (13, 20, "")]) == "[DOC -5]"
    out = remove_tokens(text, {DOC7, CitationRef(EVT, 1)})
    assert out == ""  # ``[DOC -5]`` is a look-alike: rescanned away
    assert tokens(out) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("foo [DOC-7] bar", "foo bar"),
        ("foo [DOC-7][DOC-7] bar", "foo bar"),
        ("foo [DOC-7] [DOC-7] bar", "foo bar"),
        ("the corridor [DOC-7].", "the corridor."),
        ("the corridor [DOC-7], then", "the corridor, then"),
        ("the corridor [DOC-7]\nNext", "the corridor\nNext"),
        ("end [DOC-7]", "end"),
        ("[DOC-7] Start", "Start"),
        ("line\n[DOC-7] Start", "line\nStart"),
        ("- [DOC-7] item", "- item"),
        ("kept [OBS-1] and [DOC-7] gone", "kept [OBS-1] and gone"),
        ("tight[DOC-7]text", "tighttext"),
        ("foo  [DOC-7]  bar", "foo  bar"),
    ],
)
def test_whitespace_left_by_a_removal_is_tidied(text: str, expected: str) -> None:
    assert remove_tokens(text, {DOC7}) == expected


def test_tidying_never_forms_a_token() -> None:
    """Dropping the space before ``]`` would form ``[DOC-5]``; closing brackets are not tidied
    (and the look-alike ``[DOC-5 ]`` left is then removed)."""
    assert replace_spans("[DOC-5 [DOC-7]]", [(7, 14, "")]) == "[DOC-5 ]"
    assert remove_tokens("[DOC-5 [DOC-7]]", {DOC7}) == ""


def test_only_hidden_refs_are_removed() -> None:
    text = "A [OBS-1], B [DOC-7], C [DOC-007], D [EVT-7]."
    assert remove_tokens(text, {DOC7}) == "A [OBS-1], B, C, D [EVT-7]."
    assert remove_tokens(text, set()) == text


def test_remove_all_tokens_also_removes_overlong_tokens() -> None:
    over = "[OBS-" + "1" * (MAX_ID_DIGITS + 1) + "]"
    assert remove_all_tokens(f"a {over} b [DOC-1] c") == "a b c"


def test_replace_spans_guards_replacements_too() -> None:
    text = "[DOC-5 removed sentence. 1]"
    assert replace_spans(text, [(6, 25, "")]) == "[DOC-5 1]"
    assert replace_spans("[DOC-5XX1]", [(6, 8, "")]) == "[DOC-5 1]"
    # A replacement's own tokens are kept; a junction that would join is broken.
    assert replace_spans("ab", [(1, 1, "[OBS-1]")]) == "a[OBS-1]b"
    assert replace_spans("[OBS-x]", [(5, 6, "1")]) == "[OBS- 1]"


def test_replace_spans_rejects_overlapping_edits() -> None:
    with pytest.raises(ValueError, match="sorted"):
        replace_spans("abcdef", [(2, 4, ""), (3, 5, "")])


HIDDEN_SETS = st.sets(
    st.builds(CitationRef, st.sampled_from(list(EvidenceKind)), st.integers(0, 12)), max_size=6
)


@given(st.text(alphabet=ALPHABET, max_size=200), HIDDEN_SETS)
@settings(max_examples=1000, deadline=None)
def test_output_tokens_are_exactly_the_kept_original_tokens(
    text: str, hidden: set[CitationRef]
) -> None:
    out = remove_tokens(text, hidden)
    assert not any(t in hidden for t in tokens(out))
    assert tokens(out) == [t for t in tokens(text) if t not in hidden]


@given(st.text(alphabet=ALPHABET, max_size=200))
@settings(max_examples=500, deadline=None)
def test_remove_all_tokens_leaves_no_token(text: str) -> None:
    assert tokens(remove_all_tokens(text)) == []


@given(st.text(max_size=100), HIDDEN_SETS)
@settings(max_examples=300, deadline=None)
def test_text_without_hidden_tokens_is_unchanged(text: str, hidden: set[CitationRef]) -> None:
    if not any(t in hidden for t in tokens(text)):
        assert remove_tokens(text, hidden) == text


@st.composite
def edited_texts(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str]]]:
    """A text and sorted, non-overlapping edits that cut no token of it."""
    text = draw(st.text(alphabet=ALPHABET, max_size=120))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    edits = []
    for start, end in zip(cuts[::2], cuts[1::2], strict=False):
        replacement = draw(
            st.sampled_from(["", "", "x", " ", "[OBS-1]", "1]", "[DOC-", "-5", "Hedged."])
        )
        edits.append((start, end, replacement))
    spans = [m.span() for m in REFERENCE.finditer(text)]
    for start, end, _ in edits:
        for t_start, t_end in spans:
            for point in (start, end):
                if t_start < point < t_end:
                    hypothesis.assume(False)
    return text, edits


@given(edited_texts())
@settings(max_examples=1000, deadline=None)
def test_replace_spans_keeps_exactly_the_outside_and_replacement_tokens(
    case: tuple[str, list[tuple[int, int, str]]],
) -> None:
    text, edits = case
    expected: list[CitationRef] = []
    cursor = 0
    for start, end, replacement in edits:
        expected += tokens(text[cursor:start])
        expected += tokens(replacement)
        cursor = end
    expected += tokens(text[cursor:])
    assert tokens(replace_spans(text, edits)) == expected


def reference_guard(pieces: list[str]) -> str:
    """The junction guard as first written: rescan the joined text, break straddling tokens."""
    joined = "".join(pieces)
    junctions: list[int] = []
    offset = 0
    for piece in pieces[:-1]:
        offset += len(piece)
        if not junctions or junctions[-1] != offset:
            junctions.append(offset)
    breaks = []
    for token in scan_tokens(joined):
        i = bisect_right(junctions, token.start)
        if i < len(junctions) and junctions[i] < token.end:
            breaks.append(junctions[i])
    out, cursor = [], 0
    for at in breaks:
        out += [joined[cursor:at], " "]
        cursor = at
    return "".join([*out, joined[cursor:]])


@given(st.lists(st.text(alphabet="[OBS-DOC]1 x", max_size=8), max_size=8))
@settings(max_examples=1000, deadline=None)
def test_guard_breaks_what_a_full_rescan_breaks(pieces: list[str]) -> None:
    assert _guard(pieces) == reference_guard(pieces)


@given(st.text(alphabet=ALPHABET, max_size=200), HIDDEN_SETS)
@settings(max_examples=300, deadline=None)
def test_remove_tokens_with_the_callers_tokens_is_the_same(
    text: str, hidden: frozenset[CitationRef]
) -> None:
    assert remove_tokens(text, hidden, scan_tokens(text)) == remove_tokens(text, hidden)
