"""Claim units and assertion sentences (contract §3.7)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.claims.units import ClaimUnit, UnitKind, claim_units, sentence_spans

OBS, DOC, EVT = EvidenceKind.OBS, EvidenceKind.DOC, EvidenceKind.EVT
TOKEN = re.compile(r"\[(OBS|DOC|EVT)-([0-9]+)\]", re.ASCII)


def sentences(markdown: str) -> list[str]:
    return [markdown[s:e] for s, e in sentence_spans(markdown)]


def ref(kind: EvidenceKind, ident: int) -> CitationRef:
    return CitationRef(kind, ident)


# --- sentence boundaries -----------------------------------------------------------------------


def test_exact_spans_include_trailing_tokens() -> None:
    md = "Vessel X loitered. [OBS-1][OBS-2] It left at dawn [DOC-3]! Next one?"
    assert sentence_spans(md) == [(0, 33), (34, 58)]
    assert sentences(md) == ["Vessel X loitered. [OBS-1][OBS-2]", "It left at dawn [DOC-3]!"]


def test_tokens_directly_after_a_terminator_without_space() -> None:
    assert sentences("In the corridor.[OBS-1] Then south.") == [
        "In the corridor.[OBS-1]",
        "Then south.",
    ]


def test_tokens_separated_by_spaces_and_a_soft_wrap_stay_with_their_sentence() -> None:
    md = "In the corridor. [OBS-1] [OBS-2]\n[DOC-3] Then south."
    assert sentences(md) == ["In the corridor. [OBS-1] [OBS-2]\n[DOC-3]", "Then south."]


def test_terminators_after_closing_quotes_and_brackets() -> None:
    """Contract v3: a quotation closed right after its terminator ends the sentence; a
    parenthesis inside a sentence ends nothing; an all-emphasis sentence followed by another is
    a run-in label and belongs to it."""
    md = 'He said "stop." Then left (at dawn.) **Bold.** _Done._ Last'
    assert sentences(md) == [
        'He said "stop."',
        "Then left (at dawn.) **Bold.**",
        "_Done._ Last",
    ]


@pytest.mark.parametrize(
    "md",
    [
        "It drifted 12.5 nm in 3.14 hours [OBS-1].",
        "Assets, e.g. tugs, i.e. small craft, were seen [OBS-1].",
        "Dr. Smith vs. Mr. Jones reported it [OBS-1].",
        "The U.S. Navy logged it [OBS-1].",
        "See No. 5 and Fig. 3 and pp. 4 [OBS-1].",
        "Tugs, barges, etc. were present [OBS-1].",
        "Acme Inc. reported it [OBS-1].",
        "Signed by J. Smith and K. L. Jones [OBS-1].",
        "Arrived at 5 p.m. on Monday [OBS-1].",
        "Version `v1. x` was used [OBS-1].",
        "Read [the report.](http://example.com/a.b) today [OBS-1].",
        "Smith et al. found it [OBS-1].",
        "It sailed on Jan. 5 at 5 min. past noon [OBS-1].",
    ],
)
def test_periods_that_do_not_end_a_sentence(md: str) -> None:
    assert sentences(md) == [md]


@pytest.mark.parametrize(
    ("md", "expected"),
    [
        ("The answer is no. The ship left.", ["The answer is no.", "The ship left."]),
        ("Tugs, etc. The ship left.", ["Tugs, etc.", "The ship left."]),
        ("It ended in 2023. The ship left.", ["It ended in 2023.", "The ship left."]),
        ("It came 1st. The ship left.", ["It came 1st.", "The ship left."]),
        ("It was on St. Kitts [OBS-1]. Then left.", ["It was on St. Kitts [OBS-1].", "Then left."]),
        ("In sector A. [OBS-1] Then B.", ["In sector A. [OBS-1]", "Then B."]),
        ("Wait... Then go.", ["Wait...", "Then go."]),
        ("Wait… Then go.", ["Wait…", "Then go."]),
        ("Really?! Yes.", ["Yes."]),
        ("It was here. . Then there.", ["It was here. .", "Then there."]),
    ],
)
def test_periods_that_do_end_a_sentence(md: str, expected: list[str]) -> None:
    assert sentences(md) == expected


def test_questions_are_not_assertions() -> None:
    """Contract v3: a question ends in ``?`` outside parentheses and quotations; one inside them
    asks nothing of the sentence around it."""
    md = 'Did it refuel? [OBS-4] Was it "late?" It was [OBS-5]. Why (really?)'
    assert sentences(md) == ['Was it "late?"', "It was [OBS-5].", "Why (really?)"]
    assert sentences("Did it refuel? Was it late？ 是吗？") == []


def test_a_line_ending_in_a_colon_is_not_an_assertion() -> None:
    md = "It left early [OBS-1]. The findings:\nThe ship returned [OBS-2]."
    assert sentences(md) == ["It left early [OBS-1].", "The ship returned [OBS-2]."]
    assert sentences("Sources: [OBS-1]\nIt left.") == ["It left."]
    assert sentences("Note: it left [OBS-1].") == ["Note: it left [OBS-1]."]


def test_headings_are_not_assertions() -> None:
    md = "# Findings\n## Vessel X loitered.\nIt loitered [OBS-1].\n#hashtag is text."
    assert sentences(md) == ["It loitered [OBS-1].", "#hashtag is text."]


def test_setext_headings_are_not_assertions() -> None:
    md = "Findings\n========\nIt loitered [OBS-1].\n\nSummary\n---\nIt left [OBS-2]."
    assert sentences(md) == ["It loitered [OBS-1].", "It left [OBS-2]."]


def test_a_thematic_break_ends_a_block() -> None:
    md = "It loitered [OBS-1]\n***\nIt left"
    assert sentences(md) == ["It loitered [OBS-1]", "It left"]


def test_fenced_code_is_skipped() -> None:
    md = (
        "Before [OBS-1].\n```python\nx = 1. Not a claim.\n```\n~~~\nAlso code.\n~~~\nAfter [OBS-2]."
    )
    assert sentences(md) == ["Before [OBS-1].", "After [OBS-2]."]


def test_a_fence_closes_only_with_a_run_at_least_as_long() -> None:
    md = "````\ncode.\n```\nstill code.\n````\nProse [OBS-1]."
    assert sentences(md) == ["Prose [OBS-1]."]


def test_an_unclosed_fence_runs_to_the_end_as_the_renderer_shows_it() -> None:
    """Contract v3, rule 7: a fence ends where the renderer ends it (an unclosed one, at the end;
    rule 5's pass still takes the words beside a hidden-only citation out of the code)."""
    md = "Intro [OBS-1].\n```\nThe ship sank.\nIt was late."
    assert sentences(md) == ["Intro [OBS-1]."]


def test_indented_code_is_exempt_and_an_indented_continuation_line_is_prose() -> None:
    """Contract v3, rule 7: indented code is code; a paragraph's indented next line is not."""
    assert sentences("    The ship sank [OBS-1].\n\n\tIt was late.") == []
    assert sentences("Intro [OBS-1].\n    The ship sank.") == ["Intro [OBS-1].", "The ship sank."]


def test_list_items_are_sentences_and_markers_are_excluded() -> None:
    md = "Findings:\n- First item [OBS-1]\n* Second. Third [OBS-2].\n1. Fourth\n2) Fifth\n+ Sixth"
    assert sentences(md) == [
        "First item [OBS-1]",
        "Second.",
        "Third [OBS-2].",
        "Fourth",
        "Fifth",
        "Sixth",
    ]


def test_a_list_item_continues_on_its_next_line() -> None:
    md = "- The ship sat in\n  the corridor [OBS-1].\n- Next item"
    assert sentences(md) == ["The ship sat in\n  the corridor [OBS-1].", "Next item"]


def test_a_soft_wrap_does_not_end_a_sentence_but_a_blank_line_does() -> None:
    md = "The ship sat\nin the corridor [OBS-1]\n\nIt left"
    assert sentence_spans(md) == [(0, 36), (38, 45)]


def test_blockquote_markers_are_not_part_of_sentences() -> None:
    md = "> It sat [OBS-1]. It left\n> at dawn [OBS-2]."
    assert sentences(md) == ["It sat [OBS-1].", "It left\n> at dawn [OBS-2]."]


def test_table_rows_are_one_sentence_each_without_the_header_and_the_delimiter() -> None:
    """Contract v3, rule 7: a table's header row is exempt (rule 5's pass still hedges one beside
    a hidden-only citation); a line right under a table is a row of it, as GFM renders it."""
    md = "| Vessel | Hours |\n|---|:---:|\n| X. Y | 12.5 [OBS-1] |\n| Z | 3 |\nAfter [OBS-2]."
    assert sentences(md) == ["| X. Y | 12.5 [OBS-1] |", "| Z | 3 |", "After [OBS-2]."]


def test_citation_only_fragments_join_the_previous_sentence() -> None:
    md = "It sat. [OBS-1]\n\n- It left.\n  — [OBS-2]\n- [OBS-3]"
    assert sentences(md) == ["It sat. [OBS-1]", "It left.\n  — [OBS-2]"]


def test_inline_code_spans_are_opaque() -> None:
    md = "Run `a. B? c` now [OBS-1]. Then ``x ` y. Z`` done."
    assert sentences(md) == ["Run `a. B? c` now [OBS-1].", "Then ``x ` y. Z`` done."]


def test_an_unclosed_backtick_is_plain_text() -> None:
    assert sentences("It `sat. Then left.") == ["It `sat.", "Then left."]


def test_empty_and_blank_text_has_no_sentences() -> None:
    assert sentence_spans("") == []
    assert sentence_spans(" \n\n \t") == []
    assert sentence_spans("[OBS-1][DOC-2]") == []
    assert sentence_spans("---") == []


def test_crlf_line_endings() -> None:
    md = "It sat [OBS-1].\r\n\r\nIt left [OBS-2].\r\n"
    assert sentences(md) == ["It sat [OBS-1].", "It left [OBS-2]."]


def test_spans_never_cut_a_token() -> None:
    md = "A. [OBS-1]. B [DOC-2]? C: [EVT-3]\nD [OBS-4]"
    for start, end in sentence_spans(md):
        for m in TOKEN.finditer(md):
            assert m.end() <= start or m.start() >= end or start <= m.start() < m.end() <= end


MARKDOWN = st.text(alphabet="ab .?!:-#>|`\n[OBS-1]e.g", max_size=200)


@given(MARKDOWN)
@settings(max_examples=500, deadline=None)
def test_spans_are_ordered_disjoint_trimmed_and_never_cut_tokens(md: str) -> None:
    spans = sentence_spans(md)
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(md)
        assert not md[start].isspace()
        assert not md[end - 1].isspace()
        previous_end = end
        for m in TOKEN.finditer(md):
            assert m.end() <= start or m.start() >= end or start <= m.start() < m.end() <= end


# --- claim units -------------------------------------------------------------------------------


def test_answer_units_are_sentences_then_claims() -> None:
    output = {
        "answer_markdown": "# Summary\nIt sat [OBS-1][OBS-1]. Why? It left [DOC-2].",
        "citations": [{"kind": "EVT", "id": 9}],
        "claims": [
            {
                "text": "It sat [OBS-1].",
                "citations": [{"kind": "OBS", "id": 1}, {"kind": "EVT", "id": 3}],
            },
            {"text": "Uncited.", "citations": []},
        ],
    }
    assert claim_units(output, "answer") == [
        ClaimUnit(
            UnitKind.SENTENCE,
            "answer_markdown",
            "It sat [OBS-1][OBS-1].",
            (10, 32),
            (ref(OBS, 1),),
            0,
        ),
        ClaimUnit(
            UnitKind.SENTENCE, "answer_markdown", "It left [DOC-2].", (38, 54), (ref(DOC, 2),), 1
        ),
        ClaimUnit(
            UnitKind.CLAIM, "claims[0]", "It sat [OBS-1].", None, (ref(OBS, 1), ref(EVT, 3)), 0
        ),
        ClaimUnit(UnitKind.CLAIM, "claims[1]", "Uncited.", None, (), 1),
    ]


def test_a_sentence_without_citations_is_still_a_unit() -> None:
    (unit,) = claim_units({"answer_markdown": "It sat."}, "answer")
    assert unit == ClaimUnit(UnitKind.SENTENCE, "answer_markdown", "It sat.", (0, 7), (), 0)


def test_report_units_are_sections_with_assertions_then_timeline() -> None:
    output = {
        "title": "AAR [EVT-1]",
        "sections": [
            {
                "heading": "Intro [DOC-1]",
                "body_markdown": "It sat [OBS-2].",
                "citations": [{"kind": "OBS", "id": 2}, {"kind": "EVT", "id": 4}],
            },
            {"heading": "Questions", "body_markdown": "Why did it sit?\n\n## Sub", "citations": []},
            {"heading": "Bare", "body_markdown": "It left.", "citations": []},
        ],
        "timeline": [
            {
                "at": "2026-12-01T00:00:00Z",
                "text": "Arrived [EVT-5]",
                "citations": [{"kind": "EVT", "id": 6}],
            },
            {"at": "2026-12-01T01:00:00Z", "text": "Why?", "citations": []},
        ],
        "status": "DRAFT",
    }
    assert claim_units(output, "report") == [
        ClaimUnit(
            UnitKind.SECTION,
            "sections[0]",
            "It sat [OBS-2].",
            None,
            (ref(DOC, 1), ref(OBS, 2), ref(EVT, 4)),
            0,
        ),
        ClaimUnit(UnitKind.SECTION, "sections[2]", "It left.", None, (), 2),
        ClaimUnit(
            UnitKind.TIMELINE, "timeline[0]", "Arrived [EVT-5]", None, (ref(EVT, 5), ref(EVT, 6)), 0
        ),
        ClaimUnit(UnitKind.TIMELINE, "timeline[1]", "Why?", None, (), 1),
    ]


def test_a_proposal_is_one_unit_through_grounding() -> None:
    output = {
        "proposal_type": "entity_flag",
        "summary": "Flag vessel X [DOC-1]",
        "patch": {"note": "[EVT-9]"},
        "grounding": {"reasoning": "Loitered [OBS-2] [DOC-1]", "observations": [50412, 2]},
        "confidence": 0.95,
        "gate": "Q10",
        "auto_appliable": False,
    }
    assert claim_units(output, "proposal") == [
        ClaimUnit(
            UnitKind.PROPOSAL,
            "grounding",
            "Flag vessel X [DOC-1]",
            None,
            (ref(DOC, 1), ref(OBS, 2), ref(OBS, 50412)),
            0,
        )
    ]


def test_a_proposal_without_grounding_has_no_refs() -> None:
    (unit,) = claim_units({"summary": "Flag it"}, "proposal")
    assert unit.refs == ()


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown output kind"):
        claim_units({}, "memo")
