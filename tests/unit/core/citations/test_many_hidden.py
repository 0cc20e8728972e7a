"""A draft may cite a thousand hidden sources: what is looked for per hidden id or per hidden
title is found in one pass over a string however many there are (``FEW_HIDDEN`` ids and
``FEW_TITLES`` titles are still looked for one by one), and the answer is the same either way."""

from __future__ import annotations

import itertools
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.citations.redaction import remove_tokens
from worker.core.citations.rendered import FEW_TITLES, render_gate, titles_to_hide
from worker.core.citations.tokens import FEW_HIDDEN, hidden_tokens, holds_token_of, scan_tokens
from worker.core.claims import redacted
from worker.core.claims.hidden_words import hidden_only_group, word_spans

POOL = [CitationRef(kind, i) for kind, i in itertools.product(EvidenceKind, (0, 2, 3, 10, 20))]
PIECES = [
    "[DOC-2]", "[DOC-0002]", "[DOC-20]", "[OBS-10]", "[OBS-010]", "[EVT-0]", "[EVT-000]",
    "[EVT-3]", "[DOC-" + "0" * 1500 + "2]", "[DOC-", "]", "[", "-0", " ", "\n", ".", "a",
    "Falcon [DOC-3] waited. ", "[OBS-2][DOC-3]", "| x [DOC-10] |\n",
]  # fmt: skip
TEXTS = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)
MANY = st.sets(st.sampled_from(POOL), min_size=FEW_HIDDEN + 1)
ANY = st.sets(st.sampled_from(POOL))


def holds(text: str, refs: frozenset[CitationRef]) -> bool:
    return any(t.ref in refs for t in scan_tokens(text))


@settings(max_examples=1000, deadline=None)
@given(TEXTS, ANY)
def test_a_string_holding_a_hidden_token_is_never_passed_over(
    text: str, refs: set[CitationRef]
) -> None:
    """Few hidden ids: one scan each (a superset: ``-0`` anywhere counts); many: the string's
    tokens read once, exactly those it holds."""
    hidden = frozenset(refs)
    tokens = hidden_tokens(hidden)
    if holds(text, hidden):
        assert tokens.may_hold(text)
    if len(hidden) > FEW_HIDDEN:
        assert tokens.marks == ()
        assert tokens.may_hold(text) is holds(text, hidden)
        assert holds_token_of(text, tokens.texts) is holds(text, hidden)
    else:
        assert set(tokens.marks) == {*tokens.texts, "-0"}


@settings(max_examples=1000, deadline=None)
@given(TEXTS, MANY)
def test_many_hidden_tokens_are_cut_in_one_pass_as_the_scan_cuts_them(
    text: str, refs: set[CitationRef]
) -> None:
    hidden = frozenset(refs)
    assert redacted.remove_hidden(text, redacted.hidden_of(hidden)) == remove_tokens(text, hidden)


@settings(max_examples=500, deadline=None)
@given(TEXTS, MANY)
def test_rule_5_reads_a_string_alike_with_many_hidden_ids(
    text: str, refs: set[CitationRef]
) -> None:
    """The hidden-only groups and the sentences that lost a citation, found with the string's
    tokens read once, are those found with one scan per hidden id."""
    hidden = frozenset(refs)
    spans = word_spans(text, hidden, "x", lambda _t, _r: False)
    only = hidden_only_group(text, hidden)
    with patch("worker.core.citations.tokens.FEW_HIDDEN", len(POOL)):
        assert hidden_tokens(hidden).marks  # one scan each
        assert word_spans(text, hidden, "x", lambda _t, _r: False) == spans
        assert hidden_only_group(text, list(hidden)) is only


WORDS = ["fleet", "report", "quarterly", "aurora", "vessel", "north", "2026", "of", "the"]
TITLES = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=2, max_size=5).map(" ".join),
    min_size=FEW_TITLES + 1,
    max_size=40,
)


@settings(max_examples=500, deadline=None)
@given(TITLES, st.lists(st.sampled_from([*WORDS, "[DOC-3]", "*", "`"]), max_size=30))
def test_many_hidden_titles_are_found_in_one_pass_as_one_scan_each_finds_them(
    titles: list[str], words: list[str]
) -> None:
    forms = titles_to_hide(titles, [])
    gate = render_gate(frozenset(), forms)
    text = " ".join(words)
    if len(forms) > FEW_TITLES:
        assert gate.finder is not None
    one_by_one = gate._replace(finder=None)
    assert gate.names_title(text) is one_by_one.names_title(text)
    assert gate.shows(text) is one_by_one.shows(text)


def test_hidden_titles_are_kept_once_each_in_the_order_given() -> None:
    forms = titles_to_hide(["Fleet report", "Fleet  report", "North vessel log"], [])
    assert forms == (" fleet report ", " north vessel log ")


def test_one_of_many_hidden_titles_is_found_where_it_shows_and_only_there() -> None:
    titles = [f"Quarterly fleet report number {n}" for n in ("one", "two", "three", "four")] + [
        f"North vessel log of {month}" for month in ("May", "June", "July", "August", "Sept")
    ]
    gate = render_gate(frozenset(), titles_to_hide(titles, []))
    assert gate.finder is not None
    assert gate.shows("See the **quarterly** fleet report number three [OBS-1].")
    assert gate.shows("The north vessel log of *June*.")
    assert not gate.shows("The north vessel log of April, fleet report number three.")
