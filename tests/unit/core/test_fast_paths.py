"""The core's shortcuts against the plain computations they stand for, on random drafts.

Each shortcut keeps the published bytes; these properties check it where a reader might doubt it
(``random_outputs`` puts tokens of every resolution in every kind of string).
"""

from __future__ import annotations

import random
from typing import Any
from unittest.mock import patch

import pytest
from fixtures import ALICE, BOB, NOW, lookup, make_draft, to_json_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from random_outputs import output

from worker.core import verdict
from worker.core.citations.evidence import CitationRef, EvidenceKind, Resolution
from worker.core.citations.redaction import remove_tokens
from worker.core.citations.tokens import Tokens, find_tokens
from worker.core.claims import redacted as claim_status
from worker.core.claims.policy import LostSupportPolicy, TenantPolicy
from worker.core.claims.redacted import hidden_places, redact_output
from worker.core.claims.status import check_claim_units
from worker.core.claims.units import claim_units
from worker.core.contract import LedgerOutcome
from worker.core.failures import Failure, FailureCode, checked_failure
from worker.core.messages.models import (
    CitationKey,
    CitationOut,
    ClaimOut,
    CouldNotGround,
    GroundedAnswer,
    LedgerBatch,
    LedgerRow,
    ReasonOut,
    RegenerateRequest,
    cap_reasons,
)
from worker.core.messages.wire import dumps, message_bytes
from worker.core.outputs.validation import DraftKind
from worker.core.verdict import evaluate, prepare

POLICIES = [TenantPolicy(version="p", lost_support=lost) for lost in LostSupportPolicy]


def _draft(r: random.Random) -> tuple[Any, TenantPolicy]:
    kind, out = output(r)
    draft = make_draft(out, kind=kind, principal=r.choice([ALICE, BOB]))
    return draft, r.choice(POLICIES)


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_redaction_rebuilds_only_where_hidden_refs_are(r: random.Random) -> None:
    """Rebuilding only the places that cite a hidden ref publishes what rebuilding everything
    (``places=None``) publishes, every later step (rule 5's support, the render gate) alike."""
    draft, policy = _draft(r)
    prepared = prepare(draft, policy)
    if prepared.output is None:
        return
    evidence = lookup(draft.tenant_id, prepared.refs_to_resolve)
    ev = evaluate(prepared, evidence, policy, NOW)
    with patch.object(verdict, "hidden_places", lambda paths: None):
        everything = evaluate(prepared, evidence, policy, NOW)
    assert ev.redacted_output == everything.redacted_output
    assert ev.claims == everything.claims


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_messages_written_from_plain_values_are_the_models_bytes(r: random.Random) -> None:
    draft, policy = _draft(r)
    prepared = prepare(draft, policy)
    ev = evaluate(prepared, lookup(draft.tenant_id, prepared.refs_to_resolve), policy, NOW)
    # The verdict's parts are in their wire form already: each must be exactly what its model
    # writes (no field more, none missing, an optional ``None`` absent).
    claims = tuple(
        ClaimOut(
            text=c["text"],
            citations=tuple(CitationKey(**k) for k in c["citations"]),
            grounding_status=c["grounding_status"],
            support=c.get("support"),
        )
        for c in ev.claims
    )
    sources = tuple(CitationOut(**c) for c in ev.citations)
    rows = tuple(LedgerRow(**row) for row in ev.ledger_rows)
    for models, parts in ((claims, ev.claims), (sources, ev.citations), (rows, ev.ledger_rows)):
        assert dumps([m.model_dump(exclude_none=True) for m in models]) == dumps(parts)
    common = {"event_id": "e", "turn_id": "t", "draft_id": "d", "tenant_id": "acme"}
    answer = {"attempt": 0, "user_id": "u", "kind": DraftKind.ANSWER, "policy_version": "p"}
    output = ev.redacted_output or {}
    assert message_bytes(
        GroundedAnswer,
        **common,
        **answer,
        output=output,
        claims=ev.claims,
        citations=ev.citations,
        validated_at="now",
    ) == to_json_bytes(
        GroundedAnswer(
            **common, **answer, output=output, claims=claims, citations=sources, validated_at="now"
        )
    )
    batch = {**common, "attempt": 1, "outcome": LedgerOutcome.REGENERATE, "policy_version": "p"}
    assert message_bytes(LedgerBatch, **batch, rows=ev.ledger_rows) == to_json_bytes(
        LedgerBatch(**batch, rows=rows)
    )
    reasons, truncated = cap_reasons(ev.failures)
    request = {
        **common,
        "kind": DraftKind.REPORT,
        "reasons_truncated": truncated,
        "previous_output": ev.redacted_output,
        "policy_version": "p",
        "deadline": "later",
    }
    assert message_bytes(
        RegenerateRequest,
        **request,
        principal=draft.principal,
        reasons=reasons,
    ) == to_json_bytes(RegenerateRequest(**request, principal=draft.principal, reasons=reasons))
    event = {**answer, **common, "attempts": 2, "reasons_truncated": truncated, "at": "now"}
    assert message_bytes(CouldNotGround, **event, reasons=reasons) == to_json_bytes(
        CouldNotGround(**event, reasons=tuple(ReasonOut(code=f.code, path=f.path) for f in reasons))
    )


def test_a_key_that_does_not_parse_back_from_a_path_is_still_redacted() -> None:
    """Schema keys are identifiers; any other key is rebuilt, never assumed clean."""
    secret = CitationRef(EvidenceKind.DOC, 4242)
    output: dict[str, Any] = {"a.b": "x [DOC-4242]", "a[0]": ["y [DOC-4242]"], "c": "z"}
    places = hidden_places(["a.b", "a[0][0]"])
    redacted = redact_output(output, [], frozenset({secret}), "hedged", places=places)
    # Rule 5: the words beside a hidden-only citation go too (hedged), wherever they stand.
    assert redacted == {"a.b": "hedged", "a[0]": ["hedged"], "c": "z"}
    assert redacted["c"] is output["c"]


TOKEN_PIECES = ["[OBS-1]", "[OBS-01]", "[DOC-2]", "[EVT-3]", "[OBS-" + "9" * 1001 + "]", " ", "x"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(TOKEN_PIECES), max_size=12).map("".join),
    st.booleans(),
    st.integers(0, 40),
    st.integers(0, 40),
)
def test_distinct_refs_between_is_the_tokens_inside_without_repeats(
    text: str, read_first: bool, a: int, b: int
) -> None:
    """Looked up in C once the text was read, read on the spot otherwise; overlong ids left out."""
    start, end = sorted((min(a, len(text)), min(b, len(text))))
    tokens = Tokens()
    if read_first:
        tokens.refs(text)
    inside = [t.ref for t in find_tokens(text) if start <= t.start and t.end <= end]
    expected = tuple(dict.fromkeys(inside))
    assert tokens.distinct_refs_between(text, start, end) == expected
    assert None not in expected


HIDING_PIECES = [
    *TOKEN_PIECES, "[DOC-0002]", "[DOC-", "]", "[", "[OBS-1", "\n", ".",
    "[EVT-0]", "[EVT-000]", "[DOC-20]", "[DOC-" + "0" * 1500 + "2]", "-0", "[OBS-10]",
]  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.sampled_from(HIDING_PIECES), max_size=16).map("".join),
    st.sets(
        st.sampled_from(
            [
                CitationRef(EvidenceKind.DOC, 2),
                CitationRef(EvidenceKind.OBS, 1),
                CitationRef(EvidenceKind.EVT, 0),
            ]
        )
    ),
)
def test_hidden_tokens_cut_by_the_pattern_are_the_scanned_ones(
    text: str, hidden: set[CitationRef]
) -> None:
    """Redaction finds a string's hidden tokens by the hidden refs' token texts (leading zeros
    read off, id 0, a hidden id's digits inside a longer id, an overlong run of zeros before
    one); the result is ``remove_tokens``'s, which scans every token of the grammar."""
    refs = frozenset(hidden)
    assert claim_status.remove_hidden(text, claim_status.hidden_of(refs)) == remove_tokens(
        text, refs
    )


def test_checked_failure_is_the_validated_failure_and_its_fields_set_stays_its_own() -> None:
    """``checked_failure`` (slots set directly, one fields-set shared by every such failure)
    against pydantic's own construction: equal, the same dumps, and a copy or a refused
    assignment leaves the shared set as it was."""
    code = FailureCode.UNCITED_CLAIM
    built = checked_failure(code, "answer_markdown", "assertion sentence 1 has no citation")
    other = checked_failure(code, "claims[0]", "an assertion without any citation")
    plain = Failure(
        code=code, path="answer_markdown", detail="assertion sentence 1 has no citation"
    )
    assert built == plain
    assert repr(built) == repr(plain)
    assert built.model_dump() == plain.model_dump()
    assert built.model_dump_json(exclude_unset=True) == plain.model_dump_json(exclude_unset=True)
    assert built.model_fields_set == plain.model_fields_set == {"code", "path", "detail"}
    copied = built.model_copy(update={"citation": "OBS-1"})
    assert copied.model_fields_set == {"code", "path", "detail", "citation"}
    with pytest.raises(ValidationError):
        other.citation = "OBS-2"  # type: ignore[misc]
    assert built.model_fields_set == other.model_fields_set == {"code", "path", "detail"}


def test_an_unsupported_claims_failure_is_the_validated_failure() -> None:
    """``unsupported_claim`` is built unvalidated too (a draft of many unsupported units builds
    one per unit): what ``check_claim_units`` gives equals pydantic's construction of it."""
    source = "The vessel Aurora waited near buoy 7."
    units = claim_units({"answer_markdown": "Aurora waited near buoy 8 [OBS-1]."}, "answer")
    failures: list[Failure] = []
    ref = CitationRef(EvidenceKind.OBS, 1)
    check_claim_units(
        tuple(units),
        {ref: {"kind": "OBS", "id": 1}},
        frozenset(),
        {ref: Resolution.RESOLVED},
        TenantPolicy(),
        failures,
        {ref: source},
    )
    assert len(failures) == 1
    plain = Failure(
        code=FailureCode.UNSUPPORTED_CLAIM,
        path="answer_markdown",
        detail="assertion sentence 1: no cited source has 8",
    )
    assert failures[0] == plain
    assert failures[0].model_dump_json(exclude_unset=True) == plain.model_dump_json(
        exclude_unset=True
    )
    assert failures[0].model_fields_set == plain.model_fields_set
