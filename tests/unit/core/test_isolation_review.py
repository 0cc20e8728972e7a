"""The holes an adversarial review found, one regression test each (all failed before).

Corpus of the review: tenant ``acme``; DOC 73006 (visible to the analysts) whose text names
DOC 73002 and whose title does too; DOC 73002 (ops only, hidden from alice); OBS 73100 (public)
whose summary names the hidden OBS 73101 and EVT 73102. Alice is the reader.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fixtures import ALICE, NOW, POLICY, TENANT, make_draft, message, topics

from worker.core.citations.evidence import CitationRef, EvidenceKind, EvidenceRecord, Principal
from worker.core.claims.policy import TenantPolicy
from worker.core.turns.machine import Decision, decide
from worker.core.verdict import evaluate, prepare

DOC_VISIBLE, DOC_HIDDEN = CitationRef(EvidenceKind.DOC, 73006), CitationRef(EvidenceKind.DOC, 73002)
OBS_PUBLIC, OBS_HIDDEN = CitationRef(EvidenceKind.OBS, 73100), CitationRef(EvidenceKind.OBS, 73101)
EVT_HIDDEN = CitationRef(EvidenceKind.EVT, 73102)
HIDDEN_IDS = ("73002", "73101", "73102")
REVIEW: dict[CitationRef, EvidenceRecord] = {
    DOC_VISIBLE: EvidenceRecord(
        ref=DOC_VISIBLE,
        acl=("group:analysts",),
        title="Runbook index [DOC-73002]",
        text="See [DOC-73002] for the Falcon price.",
    ),
    DOC_HIDDEN: EvidenceRecord(
        ref=DOC_HIDDEN, acl=("group:ops",), title="Falcon pricing", text="FALCON-SECRET 4.2B"
    ),
    OBS_PUBLIC: EvidenceRecord(
        ref=OBS_PUBLIC, acl=None, text="Vessel Aurora met [OBS-73101] after [EVT-73102]."
    ),
    OBS_HIDDEN: EvidenceRecord(ref=OBS_HIDDEN, acl=("user:bob",), text="HIDDEN-OBS"),
    EVT_HIDDEN: EvidenceRecord(ref=EVT_HIDDEN, acl=("user:bob",), text="HIDDEN-EVT"),
}


def decide_for(output: Any, principal: Principal = ALICE, **kw: Any) -> Decision:
    policy = kw.pop("policy", POLICY)
    draft = make_draft(output, principal=principal, **kw)
    prepared = prepare(draft, policy)
    found = {r: REVIEW[r] for r in prepared.refs_to_resolve if r in REVIEW}
    ev = evaluate(prepared, found, policy, NOW)
    return decide(None, prepared, ev, policy, NOW, "test")


def user_facing(decision: Decision) -> str:
    return "\n".join(o.value.decode() for o in decision.outbound if o.topic.value != "ledger")


def assert_no_hidden_id(decision: Decision) -> None:
    text = user_facing(decision)
    for ident in HIDDEN_IDS:
        assert ident not in text, ident


def codes_paths(decision: Decision) -> list[tuple[str, str]]:
    topic = "regenerate" if "regenerate" in topics(decision) else "could_not_ground"
    return [(r["code"], r.get("path")) for r in message(decision, topic)["reasons"]]


@pytest.fixture(autouse=True)
def _each_way(hidden_lookups: str) -> str:
    """Every test here twice: hidden ids and titles looked for one by one, and in one pass."""
    return hidden_lookups


# --- 1. the grounded answer's citations[].quote and title -----------------------------------------


def test_published_quote_and_title_are_scrubbed_of_a_hidden_id() -> None:
    output = {
        "answer_markdown": "The Falcon price is listed in the runbook [DOC-73006].",
        "citations": [
            {"kind": "DOC", "id": 73006, "quote": "See [DOC-73002] for the Falcon price."}
        ],
    }
    decision = decide_for(output)
    assert decision.outcome == "grounded"
    answer = message(decision, "validated")
    assert answer["citations"] == [
        {
            "kind": "DOC",
            "id": 73006,
            "title": "Runbook index",
            "quote": "See for the Falcon price.",
            "quote_check": "exact",
        }
    ]
    assert_no_hidden_id(decision)


def test_a_tolerant_quote_of_a_summary_naming_hidden_ids_is_scrubbed() -> None:
    output = {
        "answer_markdown": "Aurora met another vessel [OBS-73100].",
        "citations": [
            {
                "kind": "OBS",
                "id": 73100,
                "quote": "vessel  AURORA met [OBS-73101] after [EVT-73102]",
            }
        ],
    }
    decision = decide_for(output)
    assert decision.outcome == "grounded"
    (citation,) = message(decision, "validated")["citations"]
    assert citation["quote_check"] == "tolerant"
    # Published in the source's own words (contract v4, rule 5), then scrubbed of hidden ids.
    assert citation["quote"] == "Vessel Aurora met after"
    assert_no_hidden_id(decision)


def test_a_tolerant_quote_with_a_zero_width_payload_is_published_as_the_source_says_it() -> None:
    """Zero-width characters between the letters (a payload a reader never sees, but a program
    reading the answer could) are dropped by the tolerant check, so the quote matches; what is
    published is the source's own text, without them (contract v4, rule 5)."""
    payload = "\u200b\u200c\u200d\u2060"
    output = {
        "answer_markdown": "Aurora met another vessel [OBS-73100].",
        "citations": [
            {"kind": "OBS", "id": 73100, "quote": f"Vessel {payload}Aurora{payload} met"}
        ],
    }
    decision = decide_for(output)
    assert decision.outcome == "grounded"
    assert message(decision, "validated")["citations"] == [
        {"kind": "OBS", "id": 73100, "quote": "Vessel Aurora met", "quote_check": "tolerant"}
    ]
    for char in payload:
        assert char not in user_facing(decision)


def test_a_title_naming_an_id_the_draft_never_cited_loses_the_token() -> None:
    output = {"answer_markdown": "The runbook lists it [DOC-73006]."}
    decision = decide_for(output)
    (citation,) = message(decision, "validated")["citations"]
    assert citation["title"] == "Runbook index"
    assert_no_hidden_id(decision)


# --- 2. a line starting with three backticks is not always a fence --------------------------------


def test_a_backtick_line_whose_info_string_holds_a_backtick_is_prose_and_is_hedged() -> None:
    output = {
        "answer_markdown": (
            "```Falcon``` is priced at 4.2B [DOC-73002].\n\nAurora sailed [OBS-73100]."
        )
    }
    decision = decide_for(output)
    assert decision.outcome == "grounded"
    answer = message(decision, "validated")
    assert "Falcon" not in json.dumps(answer)
    assert "4.2B" not in json.dumps(answer)
    assert [c["grounding_status"] for c in answer["claims"]] == ["hedged", "cited"]
    assert_no_hidden_id(decision)


def test_an_uncited_sentence_behind_backticks_is_an_uncited_claim() -> None:
    output = {"answer_markdown": "```Falcon``` is priced at 4.2B.\n\nAurora sailed [OBS-73100]."}
    decision = decide_for(output)
    assert decision.outcome == "regenerate"
    assert codes_paths(decision) == [("uncited_claim", "answer_markdown")]


def test_a_real_fence_still_hides_its_code() -> None:
    output = {"answer_markdown": "```python\nx = 1. y = 2.\n```\n\nAurora sailed [OBS-73100]."}
    decision = decide_for(output)
    assert decision.outcome == "grounded"
    assert len(message(decision, "validated")["claims"]) == 1


# --- 3. a table's header row: exempt from needing a citation, never from rule 5 ----------------


def test_a_table_header_supported_only_by_a_hidden_id_loses_its_words() -> None:
    output = {
        "answer_markdown": (
            "| Falcon is priced at 4.2B [DOC-73002] |\n|---|\n| Aurora sailed [OBS-73100] |"
        )
    }
    decision = decide_for(output)
    assert decision.outcome == "grounded"
    answer = message(decision, "validated")
    assert "Falcon" not in json.dumps(answer)
    assert [c["grounding_status"] for c in answer["claims"]] == ["cited"]
    assert_no_hidden_id(decision)


def test_an_uncited_table_header_needs_no_citation() -> None:
    """Contract v3, rule 7: a table's header row is exempt (it was a unit before v3)."""
    output = {
        "answer_markdown": "| Falcon is priced at 4.2B |\n|---|\n| Aurora sailed [OBS-73100] |"
    }
    decision = decide_for(output)
    assert decision.outcome == "grounded"
    answer = message(decision, "validated")
    assert [c["text"] for c in answer["claims"]] == ["| Aurora sailed [OBS-73100] |"]


# --- 4. a hedged report section loses its heading -------------------------------------------------


def test_a_section_hedged_for_lost_support_loses_its_heading_too() -> None:
    output = {
        "title": "Weekly",
        "status": "DRAFT",
        "sections": [
            {
                "heading": "Falcon acquisition priced at 4.2B [DOC-73002]",
                "body_markdown": "It closes in May.",
                "citations": [],
            },
            {"heading": "Aurora", "body_markdown": "Aurora sailed [OBS-73100].", "citations": []},
        ],
        "timeline": [],
    }
    decision = decide_for(output, kind="report")
    assert decision.outcome == "grounded"
    sections = message(decision, "validated")["output"]["sections"]
    assert sections[0] == {
        "heading": "",
        "body_markdown": POLICY.hedge_sentence,
        "citations": [],
    }
    assert sections[1]["heading"] == "Aurora"
    assert "Falcon" not in user_facing(decision)
    assert_no_hidden_id(decision)


# --- 5. look-alike tokens -------------------------------------------------------------------------

LOOKALIKES = [
    "[DOC-７３００２]",
    "［DOC-73002］",
    "[DOC-73\u200b002]",
    "[DOC-73002\u200d]",
    "&#91;DOC-73002&#93;",
    "&lsqb;DOC-73002&rsqb;",
    "\\[DOC-73002\\]",
    "\\u005bDOC-73002\\u005d",
    "[doc-73002]",
    "[DOC 73002]",
    "[ DOC-73002 ]",
    "[DОC-73002]",  # a Cyrillic O
    "[DOC–73002]",  # an en dash
    "【DOC-73002】",
]


@pytest.mark.parametrize("lookalike", LOOKALIKES)
def test_a_lookalike_token_fails_the_draft_with_its_path_and_is_never_published(
    lookalike: str,
) -> None:
    output = {
        "answer_markdown": "Aurora sailed [OBS-73100].",
        "claims": [
            {"text": f"Falcon costs 4.2B {lookalike}.", "citations": [{"kind": "OBS", "id": 73100}]}
        ],
    }
    decision = decide_for(output)
    assert decision.outcome == "regenerate"
    assert codes_paths(decision) == [("schema_invalid", "claims[0].text")]
    request = message(decision, "regenerate")
    assert "previous_output" not in request  # a schema failure publishes no output
    assert_no_hidden_id(decision)


@pytest.mark.parametrize("lookalike", LOOKALIKES)
def test_a_lookalike_in_a_final_draft_ends_could_not_ground_with_code_and_path(
    lookalike: str,
) -> None:
    decision = decide_for({"answer_markdown": f"Falcon costs 4.2B {lookalike}."}, attempt=1)
    assert decision.outcome == "could_not_ground"
    assert codes_paths(decision) == [("schema_invalid", "answer_markdown")]
    assert_no_hidden_id(decision)


def test_a_lookalike_in_a_raw_excerpt_is_removed() -> None:
    raw = "Sorry, no JSON here: \\u005bDOC-73002\\u005d and &#91;DOC-73002&#93; and [DOC-73002]."
    decision = decide_for(raw)
    assert codes_paths(decision) == [("malformed_output", None)]
    (reason,) = message(decision, "regenerate")["reasons"]
    assert reason["raw_excerpt"] == "Sorry, no JSON here: and and."
    assert_no_hidden_id(decision)


def test_an_escaped_bracket_before_a_real_token_is_the_token() -> None:
    """``\\[DOC-73006]`` renders as ``[DOC-73006]``: the token is extracted and resolved."""
    decision = decide_for({"answer_markdown": "The runbook lists it \\[DOC-73006]."})
    assert decision.outcome == "grounded"


def test_other_tenants_see_nothing_of_each_other_in_one_review_corpus() -> None:
    """Two principals over one corpus: the ops reader sees DOC 73002, the analyst does not."""
    output = {"answer_markdown": "Falcon is priced at 4.2B [DOC-73002]. Aurora sailed [OBS-73100]."}
    ops = Principal(user_id="olga", groups=("ops",))
    seen = message(decide_for(output, principal=ops), "validated")
    assert "[DOC-73002]" in seen["output"]["answer_markdown"]
    hidden = decide_for(output)
    assert "Falcon" not in user_facing(hidden)
    assert_no_hidden_id(hidden)
    assert TENANT == "acme"


def test_policy_omit_removes_a_hidden_table_header() -> None:
    policy = TenantPolicy(version="p-omit", lost_support="omit")
    output = {
        "answer_markdown": "| Falcon 4.2B [DOC-73002] |\n|---|\n| Aurora sailed [OBS-73100] |"
    }
    decision = decide_for(output, policy=policy)
    answer = message(decision, "validated")
    assert "Falcon" not in answer["output"]["answer_markdown"]
    assert "| Aurora sailed [OBS-73100] |" in answer["output"]["answer_markdown"]
