"""The fourth adversarial round: one regression test per shape (contract v4, rules 2 and 5).

Every shape publishes, for alice (who may not see DOC 73002), either nothing of the words
written next to the hidden citation only, or the draft fails; no hidden id, title or look-alike
of the id shows in cmark-gfm's rendering of anything published. Corpus and helpers: the review
corpus of ``test_isolation_review`` (DOC 73006 and OBS 73100 visible, DOC 73002 hidden).
"""

from __future__ import annotations

import json
from typing import Any

import cmarkgfm
import pytest
from fixtures import POLICY, message, topics
from test_isolation_review import decide_for, user_facing

from worker.core.citations.rendered import shows_lookalike
from worker.core.citations.visible import visible_text
from worker.core.claims.policy import LostSupportPolicy, TenantPolicy

HIDDEN = "[DOC-73002]"
#: Words only the hidden citation stands beside, in every shape below.
SECRET_WORDS = ("priced", "4.2B", "Falcon is")
VISIBLE_LINE = "Vessel Aurora met its escort [OBS-73100]."


def published_strings(decision: Any) -> list[str]:
    """Every string of every user-facing message."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for o in decision.outbound:
        if o.topic.value != "ledger":
            walk(json.loads(o.value))
    return out


def assert_nothing_hidden_shows(decision: Any) -> None:
    """No hidden id, title or secret word in the bytes, nor in what cmark-gfm renders."""
    raw = user_facing(decision)
    assert "73002" not in raw
    assert "Falcon pricing" not in raw
    for text in published_strings(decision):
        shown = visible_text(text)
        for word in SECRET_WORDS:
            assert word not in shown, (word, text)
        assert not shows_lookalike(text), text
        assert "73002" not in shown


@pytest.fixture(autouse=True)
def _each_way(hidden_lookups: str) -> str:
    """Every test here twice: hidden ids and titles looked for one by one, and in one pass."""
    return hidden_lookups


# --- md: a token group crosses a block boundary ---------------------------------------------------

GROUPS_ACROSS_BLOCKS = {
    "heading_then_visible_line": f"# Falcon is priced at 4.2B {HIDDEN}\n[OBS-73100] {VISIBLE_LINE}",
    "question_blank_then_visible": (
        f"Is Falcon priced at 4.2B? {HIDDEN}\n\n[OBS-73100] {VISIBLE_LINE}"
    ),
    "indented_code_then_visible": (
        f"{VISIBLE_LINE}\n\n    Falcon is priced at 4.2B {HIDDEN}\n[OBS-73100] Aurora met it."
    ),
}


@pytest.mark.parametrize("shape", sorted(GROUPS_ACROSS_BLOCKS))
def test_a_group_never_crosses_a_block(shape: str) -> None:
    decision = decide_for({"answer_markdown": GROUPS_ACROSS_BLOCKS[shape]})
    assert_nothing_hidden_shows(decision)


# --- md: a sentence wrapped over two lines, a row, a lead-in --------------------------------------

WRAPPED = {
    "question": f"{VISIBLE_LINE}\n\nIs Falcon priced\nat 4.2B? {HIDDEN}",
    "setext_heading": f"Falcon is priced\nat 4.2B {HIDDEN}\n===\n\n{VISIBLE_LINE}",
    "html_comment": f"{VISIBLE_LINE}\n\n<!-- Falcon is priced\nat 4.2B {HIDDEN} -->",
    "image_alt": f"{VISIBLE_LINE}\n\n![Falcon is priced\nat 4.2B {HIDDEN}](chart.png)",
    "link_reference_title": (
        f"{VISIBLE_LINE} [chart]\n\n"
        f'[chart]: https://example.com/c "Falcon is priced\nat 4.2B {HIDDEN}"'
    ),
    "lead_in_swallows_next_line": (
        f"{VISIBLE_LINE}\n\nFalcon is priced at 4.2B:\n{HIDDEN} per unit."
    ),
    "table_header_row": (
        f"| Falcon is priced | at 4.2B {HIDDEN} |\n|---|---|\n| Aurora [OBS-73100] | met |"
    ),
    "table_header_escaped_pipe": (
        f"| Falcon is \\| priced | at 4.2B {HIDDEN} |\n|---|---|\n| Aurora [OBS-73100] | met |"
    ),
    "table_data_row": f"| a | b |\n|---|---|\n| Falcon is priced | at 4.2B {HIDDEN} |\n",
}


@pytest.mark.parametrize("shape", sorted(WRAPPED))
def test_a_sentence_is_cut_only_at_terminators_and_block_ends(shape: str) -> None:
    decision = decide_for({"answer_markdown": WRAPPED[shape]})
    assert_nothing_hidden_shows(decision)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", f"Falcon is priced\nat 4.2B {HIDDEN}"),
        ("heading", f"Falcon is priced\nat 4.2B {HIDDEN}"),
    ],
)
def test_a_report_title_or_heading_wrapped_over_two_lines_loses_both_lines(
    field: str, value: str
) -> None:
    section = {"heading": "Escort", "body_markdown": VISIBLE_LINE, "citations": []}
    output: dict[str, Any] = {
        "title": "Weekly report",
        "status": "DRAFT",
        "sections": [section],
        "timeline": [],
    }
    if field == "title":
        output["title"] = value
    else:
        section["heading"] = value
    decision = decide_for(output, kind="report")
    assert decision.outcome == "grounded"
    assert_nothing_hidden_shows(decision)


def test_tokens_after_a_terminator_and_a_soft_break_hedge_the_sentence_they_close() -> None:
    """``Claim.`` then a line opening with the hidden token: the token belongs to the sentence
    before it (rule 7), so that sentence goes, and the next one, citing a visible source, stays."""
    markdown = f"Falcon is priced at 4.2B.\n{HIDDEN} {VISIBLE_LINE}"
    decision = decide_for({"answer_markdown": markdown})
    assert decision.outcome == "grounded"
    published = message(decision, "validated")["output"]["answer_markdown"]
    assert published == f"{POLICY.hedge_sentence} {VISIBLE_LINE}"
    assert_nothing_hidden_shows(decision)


# --- md: a sentence that lost a citation keeps its words only if supported -----------------------


def test_a_heading_citing_a_hidden_and_a_visible_source_loses_the_hidden_only_figure() -> None:
    markdown = f"## Falcon is priced at 4.2B {HIDDEN} [OBS-73100]\n\n{VISIBLE_LINE}"
    decision = decide_for({"answer_markdown": markdown})
    assert decision.outcome == "grounded"
    assert_nothing_hidden_shows(decision)
    assert message(decision, "validated")["output"]["answer_markdown"] == (
        f"## {POLICY.hedge_sentence}\n\n{VISIBLE_LINE}"
    )


def test_a_sentence_sharing_a_few_words_with_the_visible_source_is_hedged_not_weak() -> None:
    """``Vessel Aurora`` is in the visible source; the rest is the hidden one's: ``weak`` once
    published it, now the sentence must be ``supported`` to keep its words."""
    markdown = f"Vessel Aurora is priced at 4.2B by Falcon [OBS-73100] {HIDDEN}."
    decision = decide_for({"answer_markdown": markdown})
    assert decision.outcome == "grounded"
    answer = message(decision, "validated")
    assert answer["output"]["answer_markdown"] == POLICY.hedge_sentence
    assert [c["grounding_status"] for c in answer["claims"]] == ["hedged"]
    assert_nothing_hidden_shows(decision)


def test_a_sentence_its_visible_source_supports_keeps_its_words() -> None:
    markdown = f"Vessel Aurora met its escort [OBS-73100] {HIDDEN}."
    decision = decide_for({"answer_markdown": markdown})
    answer = message(decision, "validated")
    assert answer["output"]["answer_markdown"] == "Vessel Aurora met its escort [OBS-73100]."
    assert [(c["grounding_status"], c["support"]) for c in answer["claims"]] == [
        ("cited", "supported")
    ]


def test_under_refuse_a_lost_citation_that_is_not_supported_ends_the_turn() -> None:
    policy = TenantPolicy(version="p", lost_support=LostSupportPolicy.REFUSE)
    markdown = f"Vessel Aurora is priced at 4.2B by Falcon [OBS-73100] {HIDDEN}."
    decision = decide_for({"answer_markdown": markdown}, policy=policy, attempt=1)
    assert topics(decision) == ["could_not_ground", "ledger"]
    reasons = message(decision, "could_not_ground")["reasons"]
    assert reasons == [{"code": "unsupported_answer", "path": "answer_markdown"}]


# --- lookalike: rule 2 on what cmark-gfm shows ---------------------------------------------------

#: Each renders, in cmark-gfm with raw HTML allowed, as ``[DOC-73002]`` (or draws it so).
RENDERED_LOOKALIKES = {
    "processing_instruction": "[DOC-<?x?>73002]",
    "cdata": "[DOC-<![CDATA[]]>73002]",
    "declaration": "[DOC-<!X y>73002]",
    "comment_holding_gt": "[DOC-<!-- a > b -->73002]",
    "gt_in_quoted_attribute": '[DOC-<span title="a>b">73002]',
    "brackets_in_quoted_attribute": '[DOC-<span title="[]">73002]',
    "attributes_over_two_lines": '[DOC-<span\ntitle="x">73002]',
    "empty_link_before_digits": "[DOC-[](#)73002]",
    "link_around_kind": "[[DOC-](#)73002]",
    "link_around_digits": "[DOC-[73002](#)]",
    "cyrillic_digits": "[DOC-73ООЗ]".replace("З", "З"),
    "cyrillic_ze_and_o": "[DOC-7З00\u0032]",
    "modifier_minus": "[DOC˗73002]",
    "box_drawing_dash": "[DOC─73002]",
    "canadian_syllabics_d": "[ᗪOC-73002]",
    "long_reference_in_html_block": "<div>\n&#0000000000091;DOC-73002&#93;\n</div>",
    "right_to_left_override": "See \u202e[20037-COD]\u202c now",
}


@pytest.mark.parametrize("shape", sorted(RENDERED_LOOKALIKES))
def test_a_rendered_lookalike_is_schema_invalid(shape: str) -> None:
    text = RENDERED_LOOKALIKES[shape]
    assert shows_lookalike(text), text
    decision = decide_for({"answer_markdown": f"{VISIBLE_LINE}\n\n{text}"}, attempt=1)
    assert topics(decision) == ["could_not_ground", "ledger"]
    assert message(decision, "could_not_ground")["reasons"] == [
        {"code": "schema_invalid", "path": "answer_markdown"}
    ]
    assert "73002" not in user_facing(decision)


@pytest.mark.parametrize(
    "text",
    [
        "Plain prose with no citation at all.",
        f"{VISIBLE_LINE} And a [link](https://example.com/DOC-73002).",
        "Code `[DOC-73006]` and a real token [DOC-73006].",
        "An array [1, 2] and a [note] and [DOC-x].",
    ],
)
def test_what_shows_no_lookalike_passes_rule_2(text: str) -> None:
    assert not shows_lookalike(text)


def test_the_gate_renders_with_cmark_gfm_and_raw_html() -> None:
    """The renderer in the loop is cmark-gfm itself (tables on, raw HTML passed through)."""
    html = cmarkgfm.markdown_to_html_with_extensions(
        "<b>x</b>\n\n| a |\n|---|\n| b |",
        options=cmarkgfm.Options.CMARK_OPT_UNSAFE,
        extensions=["table"],
    )
    assert "<b>x</b>" in html
    assert "<td>b</td>" in html
    assert visible_text("<b>[DOC-</b>73002]") == "[DOC-73002]\n"


def test_a_token_the_reader_never_sees_does_not_pay_for_a_lookalike_of_its_id() -> None:
    """A real token inside an HTML comment, and a look-alike of the same id where it shows:
    counting tokens alone would let the look-alike pass (found by the property test)."""
    markdown = f"<!-- note {HIDDEN} -->\n\n{VISIBLE_LINE} [DOC-[](#)73002]"
    assert shows_lookalike(markdown)
    decision = decide_for({"answer_markdown": markdown}, attempt=1)
    assert message(decision, "could_not_ground")["reasons"] == [
        {"code": "schema_invalid", "path": "answer_markdown"}
    ]


def test_a_hidden_id_written_as_a_plain_number_is_not_named_in_a_reason() -> None:
    """The agent's own number, but a hidden id's digits: the worker's reason for an unsupported
    claim does not repeat them (rule 5: no hidden id in what the worker writes to a regenerate
    request): it falls back to a detail that names no value."""
    markdown = "Vessel Aurora met its escort near buoy 73002 and pier 4417 [OBS-73100]."
    decision = decide_for(
        {"answer_markdown": markdown, "citations": [{"kind": "DOC", "id": 73002}]}
    )
    (reason,) = message(decision, "regenerate")["reasons"]
    assert reason == {
        "code": "unsupported_claim",
        "path": "answer_markdown",
        "detail": "assertion sentence 1: the cited sources do not say it",
    }
