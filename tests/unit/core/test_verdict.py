"""The verdict on single drafts: every rule and failure code of contract §3, with exact paths."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fixtures import (
    ALICE,
    BOB,
    DOC_HANDBOOK,
    DOC_SEALED,
    NOW,
    OBS_ENTER,
    OBS_LOITER,
    POLICY,
    SEALED_TEXT,
    SEALED_TITLE,
    TENANT,
    good_answer,
    good_proposal,
    good_report,
    make_draft,
    message,
    run,
    run_output,
    topics,
    user_facing_bytes,
    verdict,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.claims.policy import LostSupportPolicy, SupportPolicy, TenantPolicy
from worker.core.failures import FailureCode


def codes_paths(output: Any, **kw: Any) -> list[tuple[str, str | None]]:
    policy = kw.pop("policy", POLICY)
    _, ev = verdict(make_draft(output, **kw), policy)
    return [(f.code.value, f.path) for f in ev.failures]


def assert_no_sealed(blob: bytes) -> None:
    text = blob.decode("utf-8")
    for needle in ("DOC-4242", SEALED_TITLE, SEALED_TEXT, "SEALED-OMEGA", '"id":4242', "4242"):
        assert needle not in text, needle


# --- grounded ------------------------------------------------------------------------------------


def test_grounded_answer_message() -> None:
    decision = run_output(good_answer())
    assert decision.outcome == "grounded"
    assert topics(decision) == ["validated", "ledger"]
    msg = message(decision, "validated")
    assert msg["status"] == "grounded"
    assert (msg["turn_id"], msg["draft_id"], msg["attempt"]) == ("t-1", "d-1", 0)
    assert (msg["tenant_id"], msg["user_id"], msg["kind"]) == (TENANT, "alice", "answer")
    assert msg["policy_version"] == "p-7"
    assert msg["validated_at"] == "2026-12-02T12:00:00.000Z"
    # A quote that checked tolerant is published in its source's own words (contract v4 rule 5).
    expected = good_answer()
    expected["citations"][1]["quote"] = "closed to tankers after dusk"
    assert msg["output"] == expected
    assert [c["grounding_status"] for c in msg["claims"]] == ["cited"] * 4
    assert [c["support"] for c in msg["claims"]] == ["supported"] * 4
    assert msg["claims"][0]["citations"] == [{"kind": "OBS", "id": 50412}]
    assert msg["citations"] == [
        {
            "kind": "OBS",
            "id": 50412,
            "quote": "Aurora entered the northern corridor at 04:10",
            "quote_check": "exact",
        },
        {"kind": "OBS", "id": 50418, "quote_check": "none"},
        {"kind": "EVT", "id": 2741, "quote_check": "none"},
        {
            "kind": "DOC",
            "id": 9931,
            "title": "Corridor Handbook",
            "quote": "closed to tankers after dusk",
            "quote_check": "tolerant",
        },
    ]


def test_grounded_report_and_proposal() -> None:
    assert run_output(good_report(), kind="report").outcome == "grounded"
    assert run_output(good_proposal(), kind="proposal").outcome == "grounded"


def test_ledger_rows_metadata_only() -> None:
    decision = run_output(good_answer())
    batch = message(decision, "ledger")
    assert batch["outcome"] == "grounded"
    assert batch["rows"][0] == {
        "kind": "OBS",
        "source_id": "50412",
        "resolution": "resolved",
        "quote_check": "exact",
        "paths": ["answer_markdown", "citations[0]"],
        "support": "supported",
    }
    assert {r["source_id"] for r in batch["rows"]} == {"50412", "50418", "2741", "9931"}


# --- rule 1: canonicalization --------------------------------------------------------------------


def test_fenced_string_output_is_canonicalized() -> None:
    raw = "```json\n" + json.dumps(good_answer()) + "\n```"
    assert run_output(raw).outcome == "grounded"


def test_prose_output_is_malformed_with_redacted_excerpt() -> None:
    raw = "I think the corridor was mined [DOC-4242] and closed [OBS-50412]. " + "x" * 3000
    decision = run_output(raw)
    assert decision.outcome == "regenerate"
    req = message(decision, "regenerate")
    (reason,) = req["reasons"]
    assert reason["code"] == "malformed_output"
    assert "[DOC-4242]" not in reason["raw_excerpt"]
    assert "[OBS-50412]" not in reason["raw_excerpt"]
    assert len(reason["raw_excerpt"]) == 2000
    assert "previous_output" not in req
    assert message(decision, "ledger")["rows"] == []


# --- rule 2: schema ------------------------------------------------------------------------------


def test_unknown_field_and_bare_numeric_citation() -> None:
    out = good_answer()
    out["claims"][0]["citations"] = [50418]
    out["extra"] = "[DOC-4242]"
    assert codes_paths(out) == [
        ("schema_invalid", "claims[0].citations[0]"),
        ("schema_invalid", "<field>"),
    ]


def test_schema_invalid_resolves_nothing() -> None:
    out = good_answer()
    out["claims"][0]["confidence"] = 1.5
    prepared, ev = verdict(make_draft(out))
    assert prepared.refs_to_resolve == frozenset()
    assert [(f.code, f.path) for f in ev.failures] == [
        (FailureCode.SCHEMA_INVALID, "claims[0].confidence")
    ]
    assert ev.redacted_output is None


def test_published_report() -> None:
    report = good_report()
    report["status"] = "PUBLISHED"
    assert codes_paths(report, kind="report") == [("published_status", "status")]
    decision = run_output(report, kind="report")
    assert decision.outcome == "regenerate"
    assert message(decision, "regenerate")["previous_output"]["status"] == "PUBLISHED"


def test_published_status_reported_with_citation_failures() -> None:
    report = good_report()
    report["status"] = "FINAL"
    report["timeline"][1]["text"] = "Loitering begins [EVT-6]"
    assert codes_paths(report, kind="report") == [
        ("published_status", "status"),
        ("dangling_citation", "timeline[1].text"),
    ]


@pytest.mark.parametrize(
    ("gate", "confidence", "allowed"),
    [("Q10", 0.95, True), ("Q10", 0.9, True), ("Q9", 0.99, False), ("Q10", 0.5, False)],
)
def test_auto_apply(gate: str, confidence: float, allowed: bool) -> None:
    proposal = good_proposal() | {"gate": gate, "confidence": confidence}
    expected = [] if allowed else [("auto_apply_not_allowed", "auto_appliable")]
    assert codes_paths(proposal, kind="proposal") == expected


def test_auto_apply_uses_tenant_threshold() -> None:
    proposal = good_proposal() | {"confidence": 0.95}
    strict = TenantPolicy(auto_apply_threshold=0.99)
    assert codes_paths(proposal, kind="proposal", policy=strict) == [
        ("auto_apply_not_allowed", "auto_appliable")
    ]


def test_more_than_1000_distinct_citations() -> None:
    text = " ".join(f"Fact {i} [OBS-{i}]." for i in range(1001))
    assert codes_paths({"answer_markdown": text}) == [("schema_invalid", "answer_markdown")]
    ok = " ".join(f"Fact {i} [OBS-{i % 1000}]." for i in range(1001))
    assert ("schema_invalid", "answer_markdown") not in codes_paths({"answer_markdown": ok})


def test_overlong_token_id() -> None:
    out = {
        "answer_markdown": "Fine [OBS-50412].",
        "claims": [{"text": "x [OBS-" + "9" * 1001 + "]"}],
    }
    assert codes_paths(out) == [("schema_invalid", "claims[0].text")]


# --- rule 3-4: extraction and resolution ---------------------------------------------------------


def test_dangling_buried_in_timeline_section_and_grounding() -> None:
    report = good_report()
    report["timeline"][1]["text"] = "Loitering begins [EVT-2741] [EVT-6]"
    report["sections"][0]["citations"].append({"kind": "DOC", "id": 31337})
    assert codes_paths(report, kind="report") == [
        ("dangling_citation", "sections[0].citations[1]"),
        ("dangling_citation", "timeline[1].text"),
    ]
    _, ev = verdict(make_draft(report, kind="report"))
    assert [f.citation for f in ev.failures] == ["DOC-31337", "EVT-6"]

    proposal = good_proposal()
    proposal["grounding"]["observations"] = [99999, 50418]
    assert codes_paths(proposal, kind="proposal") == [
        ("dangling_citation", "grounding.observations[0]")
    ]


def test_more_than_1000_distinct_citations_fail_at_the_first_one_past_the_limit() -> None:
    tokens = " ".join(f"[OBS-{i}]" for i in range(1, 1000))  # 999 distinct, one repeated below
    out = {
        "answer_markdown": f"It moved {tokens} [OBS-1].",
        "claims": [
            {"text": "Again [OBS-2] and [OBS-1000] and [OBS-1001] [OBS-1002].", "citations": []}
        ],
    }
    prepared, ev = verdict(make_draft(out))
    assert prepared.refs_to_resolve == frozenset()
    assert prepared.units == ()
    assert [(f.code.value, f.path, f.detail) for f in ev.failures] == [
        ("schema_invalid", "claims[0].text", "more than 1000 distinct citations")
    ]
    out["claims"][0]["text"] = "Again [OBS-2] and [OBS-1000]."  # exactly 1,000: fine
    prepared, ev = verdict(make_draft(out))
    assert len(prepared.refs_to_resolve) == 1000
    assert "schema_invalid" not in {f.code.value for f in ev.failures}


def test_other_tenant_and_huge_ids_are_dangling() -> None:
    huge = 2**64 + 5
    out = {"answer_markdown": f"A [DOC-5555]. B [OBS-{huge}]. C [OBS-50412]."}
    prepared, ev = verdict(make_draft(out))
    assert CitationRef(EvidenceKind.OBS, huge) not in prepared.refs_to_resolve
    assert [(f.code.value, f.citation) for f in ev.failures] == [
        ("dangling_citation", "DOC-5555"),
        ("dangling_citation", f"OBS-{huge}"),
    ]
    decision = run(make_draft(out))
    rows = message(decision, "ledger")["rows"]
    assert rows[1]["source_id"] == str(huge)
    assert str(huge) in message(decision, "regenerate")["previous_output"]["answer_markdown"]


def test_not_in_retrieval_and_empty_retrieval() -> None:
    out = {"answer_markdown": "A [OBS-50412]. B [OBS-50418] [DOC-4242]."}
    assert codes_paths(out, retrieval=[OBS_ENTER]) == [("not_in_retrieval", "answer_markdown")]
    assert codes_paths(out, retrieval=[]) == [
        ("not_in_retrieval", "answer_markdown"),
        ("not_in_retrieval", "answer_markdown"),
    ]
    assert codes_paths(out, retrieval=[OBS_ENTER, OBS_LOITER]) == []


def test_hidden_is_never_not_in_retrieval() -> None:
    out = {"answer_markdown": "A [OBS-50412] [DOC-4242]."}
    _, ev = verdict(make_draft(out, retrieval=[OBS_ENTER]))
    assert ev.failures == ()
    assert {r["resolution"].value for r in ev.ledger_rows} == {"resolved", "acl_redacted"}


# --- rule 5: redaction ---------------------------------------------------------------------------


def hidden_everywhere() -> dict[str, Any]:
    out = good_answer()
    out["answer_markdown"] += " Aurora also entered the corridor [OBS-50412][DOC-4242]."
    out["citations"].append({"kind": "DOC", "id": 4242, "quote": SEALED_TEXT})
    out["claims"][0]["citations"].append({"kind": "DOC", "id": 4242})
    out["claims"][0]["text"] += " [DOC-4242]"
    return out


def test_hidden_document_vanishes_from_every_message() -> None:
    decision = run_output(hidden_everywhere())
    assert decision.outcome == "grounded"
    assert_no_sealed(user_facing_bytes(decision))
    msg = message(decision, "validated")
    # claims[0] is "Aurora loitered near buoy 7. [DOC-4242]": its sentence carries a group of
    # hidden-only tokens, so its words go by the policy (rule 5) though OBS-50418 also cites it.
    assert [c["grounding_status"] for c in msg["claims"]] == ["cited"] * 4 + ["hedged"]
    assert msg["output"]["claims"][0]["text"] == POLICY.hedge_sentence
    assert {(c["kind"], c["id"]) for c in msg["citations"]} == {
        ("OBS", 50412),
        ("OBS", 50418),
        ("EVT", 2741),
        ("DOC", 9931),
    }
    ledger = message(decision, "ledger")
    sealed = [r for r in ledger["rows"] if r["source_id"] == "4242"]
    assert sealed == [
        {
            "kind": "DOC",
            "source_id": "4242",
            "resolution": "acl_redacted",
            "quote_check": "none",
            "paths": [
                "answer_markdown",
                "citations[2]",
                "claims[0].text",
                "claims[0].citations[1]",
            ],
            "support": "none",
        }
    ]
    assert SEALED_TITLE not in json.dumps(ledger)


def test_hidden_document_vanishes_from_regenerate_request() -> None:
    out = hidden_everywhere()
    out["answer_markdown"] += " Unknown [EVT-6]."
    decision = run_output(out)
    assert decision.outcome == "regenerate"
    assert_no_sealed(user_facing_bytes(decision))


def test_revoked_is_redacted_and_future_revocation_is_not() -> None:
    out = {"answer_markdown": "A [OBS-50412][OBS-60001]. B [OBS-60002]."}
    decision = run_output(out)
    msg = message(decision, "validated")
    assert msg["output"]["answer_markdown"] == "A [OBS-50412]. B [OBS-60002]."
    assert "REVOKED-SUMMARY" not in user_facing_bytes(decision).decode()
    rows = {r["source_id"]: r["resolution"] for r in message(decision, "ledger")["rows"]}
    assert rows == {"50412": "resolved", "60001": "revoked", "60002": "resolved"}


def test_removing_a_token_never_joins_a_new_one() -> None:
    out = {"answer_markdown": "Joined [OBS-50412] [DOC-5[DOC-4242]1]."}
    # DOC-51 does not exist: if a new token formed it would be dangling and fail the draft. (The
    # support check is off: the residue ``1]`` is a number no source has.)
    decision = run_output(out, policy=TenantPolicy(support=SupportPolicy.OFF))
    text = message(decision, "validated")["output"]["answer_markdown"]
    assert "[DOC-51]" not in text
    assert "4242" not in text


# --- rule 6: quotes ------------------------------------------------------------------------------


def test_quote_mismatch_path_and_citation() -> None:
    out = good_answer()
    out["citations"][1]["quote"] = "open to tankers at night"
    _, ev = verdict(make_draft(out))
    assert [(f.code.value, f.path, f.citation) for f in ev.failures] == [
        ("quote_mismatch", "citations[1].quote", "DOC-9931")
    ]


def test_hidden_quote_is_not_checked() -> None:
    out = {
        "answer_markdown": "A [OBS-50412].",
        "citations": [{"kind": "DOC", "id": 4242, "quote": "not in it at all"}],
    }
    _, ev = verdict(make_draft(out))
    assert ev.failures == ()


# --- rule 7: claims ------------------------------------------------------------------------------


def test_uncited_units() -> None:
    out = {
        "answer_markdown": "# Heading\n\nAurora entered [OBS-50412]. Not cited at all. Is it?",
        "claims": [{"text": "ok", "citations": [{"kind": "OBS", "id": 1}]}, {"text": "none"}],
    }
    assert codes_paths(out) == [
        ("dangling_citation", "claims[0].citations[0]"),
        ("uncited_claim", "answer_markdown"),
        ("uncited_claim", "claims[1]"),
    ]
    report = good_report()
    report["timeline"].append({"at": "2026-12-01T06:00:00Z", "text": "Departed", "citations": []})
    report["sections"].append({"heading": "Gap", "body_markdown": "Nobody saw it."})
    assert codes_paths(report, kind="report") == [
        ("uncited_claim", "sections[2]"),
        ("uncited_claim", "timeline[2]"),
    ]


def only_hidden_support() -> dict[str, Any]:
    return {
        "answer_markdown": (
            "Aurora entered the corridor [OBS-50412]. "
            "The navy mined the corridor overnight [DOC-4242]."
        ),
        "claims": [
            {"text": "Mines were laid by the navy.", "citations": [{"kind": "DOC", "id": 4242}]}
        ],
    }


def test_claim_with_only_hidden_support_is_hedged() -> None:
    decision = run_output(only_hidden_support())
    assert decision.outcome == "grounded"
    blob = user_facing_bytes(decision).decode()
    for words in ("navy", "mined", "Mines were laid"):
        assert words not in blob
    msg = message(decision, "validated")
    hedge = POLICY.hedge_sentence
    assert msg["output"]["answer_markdown"] == f"Aurora entered the corridor [OBS-50412]. {hedge}"
    assert msg["output"]["claims"] == [{"text": hedge, "citations": []}]
    assert [(c["text"], c["grounding_status"], c["citations"]) for c in msg["claims"]] == [
        ("Aurora entered the corridor [OBS-50412].", "cited", [{"kind": "OBS", "id": 50412}]),
        (hedge, "hedged", []),
        (hedge, "hedged", []),
    ]
    assert_no_sealed(user_facing_bytes(decision))


def test_hedged_words_absent_from_previous_output() -> None:
    out = only_hidden_support()
    out["answer_markdown"] += " Unknown [EVT-6]."
    decision = run_output(out)
    assert decision.outcome == "regenerate"
    blob = user_facing_bytes(decision).decode()
    assert "navy" not in blob
    assert "Mines" not in blob


def test_omit_policy_removes_units() -> None:
    policy = TenantPolicy(version="p-omit", lost_support=LostSupportPolicy.OMIT)
    decision = run_output(only_hidden_support(), policy=policy)
    msg = message(decision, "validated")
    assert msg["output"] == {
        "answer_markdown": "Aurora entered the corridor [OBS-50412].",
        "claims": [],
    }
    assert [c["grounding_status"] for c in msg["claims"]] == ["cited"]


def test_refuse_policy_ends_the_turn() -> None:
    policy = TenantPolicy(version="p-refuse", lost_support=LostSupportPolicy.REFUSE)
    decision = run_output(only_hidden_support(), policy=policy)
    assert decision.outcome == "could_not_ground"
    cng = message(decision, "could_not_ground")
    assert cng["reasons"] == [
        {"code": "unsupported_answer", "path": "answer_markdown"},
        {"code": "unsupported_answer", "path": "claims[0]"},
    ]
    assert cng["attempts"] == 1
    assert message(decision, "ledger")["outcome"] == "could_not_ground"


def test_proposal_grounded_only_by_hidden_evidence_is_refused() -> None:
    proposal = good_proposal()
    proposal["summary"] = "Flag Aurora."
    proposal["grounding"] = {"reasoning": "See the sealed file.", "observations": [60001]}
    decision = run_output(proposal, kind="proposal")
    assert decision.outcome == "could_not_ground"
    assert message(decision, "could_not_ground")["reasons"] == [
        {"code": "unsupported_answer", "path": "grounding"}
    ]


def test_unit_with_hidden_and_dangling_is_not_cited() -> None:
    out = {"answer_markdown": "Secret fact here [DOC-4242][DOC-31337]. Fine [OBS-50412]."}
    decision = run_output(out)
    assert decision.outcome == "regenerate"
    prev = message(decision, "regenerate")["previous_output"]["answer_markdown"]
    assert "Secret fact" not in prev
    assert prev.startswith(POLICY.hedge_sentence)


def test_agent_no_grounding() -> None:
    out = {"answer_markdown": "Nothing in scope supports an answer.", "no_grounding": True}
    decision = run_output(out)
    assert decision.outcome == "could_not_ground"
    reasons = message(decision, "could_not_ground")["reasons"]
    assert {"code": "agent_no_grounding", "path": "no_grounding"} in reasons


# --- principals ----------------------------------------------------------------------------------


def test_two_principals_see_disjoint_hidden_sets() -> None:
    # Each sentence says what its visible observation says (rule 6b), beside a memo one of the
    # two readers may not see.
    out = {
        "answer_markdown": "Aurora entered the northern corridor [OBS-50412][DOC-777]. "
        "Aurora loitered near buoy 7 [OBS-50418][DOC-888]."
    }
    alice = run(make_draft(out, principal=ALICE))
    bob = run(make_draft(out, principal=BOB))
    a_out = message(alice, "validated")
    b_out = message(bob, "validated")
    a_ids = {c["id"] for c in a_out["citations"]}
    b_ids = {c["id"] for c in b_out["citations"]}
    assert 777 in a_ids
    assert 888 not in a_ids
    assert 888 in b_ids
    assert 777 not in b_ids
    assert "Ops Ledger Sigma" not in user_facing_bytes(alice).decode()
    assert "DOC-888" not in user_facing_bytes(alice).decode()
    assert "Alice Private Memo" not in user_facing_bytes(bob).decode()
    assert "DOC-777" not in user_facing_bytes(bob).decode()
    a_hidden = {
        r["source_id"] for r in message(alice, "ledger")["rows"] if r["resolution"] != "resolved"
    }
    b_hidden = {
        r["source_id"] for r in message(bob, "ledger")["rows"] if r["resolution"] != "resolved"
    }
    assert a_hidden == {"888"}
    assert b_hidden == {"777"}
    assert a_hidden.isdisjoint(b_hidden)


def test_title_only_for_documents() -> None:
    decision = run_output(good_answer())
    for c in message(decision, "validated")["citations"]:
        assert ("title" in c) == (c["kind"] == "DOC")


def test_evaluate_is_pure_in_time() -> None:
    draft = make_draft(good_answer())
    assert verdict(draft, now=NOW) == verdict(draft, now=NOW)
    assert DOC_HANDBOOK != DOC_SEALED  # distinct fixtures, used above


# --- property: nothing hidden survives -----------------------------------------------------------

_POOL = ["OBS-50412", "OBS-50418", "EVT-2741", "DOC-9931", "DOC-777", "DOC-888", "DOC-4242",
         "OBS-60001", "OBS-60002", "DOC-5555", "EVT-6"]  # fmt: skip
_SECRETS = {
    "DOC-777": ("Alice Private Memo", "ALICE-ONLY"),
    "DOC-888": ("Ops Ledger Sigma", "OPS-ONLY"),
    "DOC-4242": (SEALED_TITLE, "SEALED-OMEGA"),
    "OBS-60001": ("REVOKED-SUMMARY", "REVOKED-SUMMARY"),
}


def _refs_in(value: Any) -> set[str]:
    """Every ``KIND-id`` a decoded message names through a {kind, id} object."""
    found: set[str] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "kind" in node and "id" in node:
                found.add(f"{node['kind']}-{node['id']}")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


_sentence = st.tuples(
    st.sampled_from(["Aurora moved", "The corridor closed", "Fuel ran low", "Mines were laid"]),
    st.lists(st.sampled_from(_POOL), max_size=3),
)


@settings(max_examples=150, deadline=None)
@given(
    sentences=st.lists(_sentence, min_size=1, max_size=6),
    structured=st.lists(st.sampled_from(_POOL), max_size=4),
    quoted=st.booleans(),
    principal=st.sampled_from([ALICE, BOB]),
    attempt=st.integers(0, 1),
    lost=st.sampled_from(list(LostSupportPolicy)),
)
def test_no_hidden_ref_survives(
    sentences: list[tuple[str, list[str]]],
    structured: list[str],
    quoted: bool,
    principal: Any,
    attempt: int,
    lost: LostSupportPolicy,
) -> None:
    text = " ".join(w + " " + "".join(f"[{r}]" for r in refs) + "." for w, refs in sentences)
    entries: list[dict[str, Any]] = []
    for label in structured:
        kind, ident = label.split("-")
        entry: dict[str, Any] = {"kind": kind, "id": int(ident)}
        if quoted:
            entry["quote"] = _SECRETS.get(label, ("", "the corridor"))[1]
        entries.append(entry)
    out = {"answer_markdown": text, "citations": entries}
    policy = TenantPolicy(version="p", lost_support=lost)
    draft = make_draft(out, principal=principal, attempt=attempt)
    decision = run(draft, policy=policy)
    visible_docs = {"DOC-777"} if principal is ALICE else {"DOC-888"}
    secrets = {k: v for k, v in _SECRETS.items() if k not in visible_docs}
    for o in decision.outbound:
        if o.topic.value == "ledger":
            assert '"title"' not in o.value.decode()
            assert '"quote"' not in o.value.decode()
            continue
        blob = o.value.decode()
        doc = json.loads(blob)
        for label, (title, marker) in secrets.items():
            assert label not in blob
            assert title not in blob
            assert marker not in blob
            assert label not in _refs_in(doc)
    again = run(make_draft(out, principal=principal, attempt=attempt), policy=policy)
    assert again.outbound == decision.outbound


def test_a_sentence_with_a_hidden_only_group_is_hedged_though_it_cites_a_visible_source() -> None:
    """Contract rule 5: words next to a group of tokens all of whose ids are hidden are never
    published, even when another group of the same sentence cites a visible source."""
    out = {
        "answer_markdown": "Aurora entered the northern corridor [OBS-50412] after the navy "
        "mined it [DOC-4242]. Aurora loitered near buoy 7 [OBS-50418][DOC-4242]."
    }
    decision = run_output(out)
    msg = message(decision, "validated")
    assert [c["grounding_status"] for c in msg["claims"]] == ["hedged", "cited"]
    text = msg["output"]["answer_markdown"]
    assert "navy" not in text
    assert "mined" not in text
    assert text.startswith(POLICY.hedge_sentence)
    # A mixed group ([OBS-50418][DOC-4242]) is not hidden-only: that sentence keeps its words.
    assert text.endswith("Aurora loitered near buoy 7 [OBS-50418].")
    assert_no_sealed(user_facing_bytes(decision))
