"""Typed claims (contract §3 rule 7b): every fence of the check, one test each.

The pure function first (declared claims, facts, validated output -> one disposition per claim),
then the policy's validation at load, then the path through the verdict and the turn machine.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from fixtures import (
    OBS_ENTER,
    encode,
    envelope,
    message,
    run,
    to_json_bytes,
    topics,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from worker.core.claims.policy import PolicyBook, TenantPolicy
from worker.core.claims.typed import (
    ClaimCheck,
    DeclaredClaim,
    Fact,
    canonical_decimal,
    check_claims,
    claim_equals,
)
from worker.core.contract import Disposition
from worker.core.envelope.draft import Draft, EnvelopeRejection, parse_envelope
from worker.core.failures import FailureCode
from worker.core.messages.models import GroundedAnswer, LedgerBatch, RegenerateRequest
from worker.core.turns.machine import TurnPhase

D = Disposition
FLAG = DeclaredClaim.model_validate(
    {"answer_field": "patch.flag", "entity": "vessel:aurora", "field": "flag"}
)
FLAG_FROM = DeclaredClaim.model_validate(
    {"answer_field": "patch.flag", "entity": {"from": "patch.entity_id"}, "field": "flag"}
)
CONFIDENCE = DeclaredClaim.model_validate(
    {"answer_field": "confidence", "entity": "model:run", "field": "confidence"}
)


def fact(
    value: Any,
    *,
    iteration: int = 0,
    measured_at: str | None = None,
    entity: str = "vessel:aurora",
    field: str = "flag",
    call: str = "c-1",
) -> Fact:
    moment = None if measured_at is None else datetime.fromisoformat(measured_at)
    return Fact(entity, field, value, "vessel_status", call, iteration, moment)


def flag_output(flag: Any = "cleared", entity_id: str = "vessel:aurora") -> dict[str, Any]:
    return {"patch": {"entity_id": entity_id, "flag": flag, "reason": "r"}, "confidence": 0.8}


def one(claim: DeclaredClaim, facts: list[Fact], output: dict[str, Any]) -> ClaimCheck:
    (check,) = check_claims([claim], facts, output)
    return check


# --- latest settles, earlier is history ---------------------------------------------------------


def test_the_seed_case_cleared_where_the_tool_said_review_is_contradicted() -> None:
    check = one(FLAG, [fact("review")], flag_output("cleared"))
    assert check.disposition is D.CONTRADICTED
    assert check.superseded is False
    assert check.settled == fact("review")


def test_highest_iteration_settles_whatever_the_list_order() -> None:
    facts = [fact("review", iteration=2), fact("cleared", iteration=1)]
    assert one(FLAG, facts, flag_output("review")).disposition is D.SUPPORTED
    assert one(FLAG, facts[::-1], flag_output("review")).disposition is D.SUPPORTED


def test_same_iteration_latest_measured_at_settles() -> None:
    facts = [
        fact("review", measured_at="2026-12-02T12:00:00+01:00"),  # 11:00 UTC: the later one
        fact("cleared", measured_at="2026-12-02T10:30:00Z"),
    ]
    assert one(FLAG, facts, flag_output("review")).disposition is D.SUPPORTED
    assert one(FLAG, facts[::-1], flag_output("review")).disposition is D.SUPPORTED


def test_a_fact_without_measured_at_is_older_than_one_with() -> None:
    facts = [fact("review", measured_at="2026-12-02T10:00:00Z"), fact("cleared")]
    assert one(FLAG, facts, flag_output("review")).disposition is D.SUPPORTED


def test_same_iteration_and_time_the_last_in_the_list_settles() -> None:
    at = "2026-12-02T10:00:00Z"
    facts = [fact("cleared", measured_at=at), fact("review", measured_at=at)]
    assert one(FLAG, facts, flag_output("review")).disposition is D.SUPPORTED
    assert one(FLAG, facts[::-1], flag_output("cleared")).disposition is D.SUPPORTED
    assert one(FLAG, [fact("cleared"), fact("review")], flag_output("review")).disposition is (
        D.SUPPORTED
    )


def test_a_superseded_value_is_contradicted_with_superseded_true() -> None:
    facts = [fact("cleared", iteration=0), fact("review", iteration=1, call="c-2")]
    check = one(FLAG, facts, flag_output("cleared"))
    assert (check.disposition, check.superseded) == (D.CONTRADICTED, True)
    assert check.settled is not None
    assert check.settled.tool_call_id == "c-2"


def test_a_value_no_fact_ever_had_is_contradicted_not_superseded() -> None:
    facts = [fact("cleared", iteration=0), fact("review", iteration=1)]
    check = one(FLAG, facts, flag_output("watch"))
    assert (check.disposition, check.superseded) == (D.CONTRADICTED, False)


# --- uncollected and advisory are never failures ------------------------------------------------


def test_no_fact_for_the_entity_and_field_is_uncollected() -> None:
    facts = [fact("review", entity="vessel:borealis"), fact("review", field="status")]
    assert one(FLAG, facts, flag_output()).disposition is D.UNCOLLECTED
    assert one(FLAG, [], flag_output()).disposition is D.UNCOLLECTED


@pytest.mark.parametrize("settled", [None, "unknown"])
def test_a_settled_null_or_unknown_is_uncollected_even_after_a_value(settled: Any) -> None:
    facts = [fact("review", iteration=0), fact(settled, iteration=1)]
    assert one(FLAG, facts, flag_output("cleared")).disposition is D.UNCOLLECTED


@pytest.mark.parametrize("claimed", [None, "unknown"])
def test_the_models_null_or_unknown_is_advisory(claimed: Any) -> None:
    assert one(FLAG, [fact("review")], flag_output(claimed)).disposition is D.ADVISORY


def test_unknown_is_exact_and_case_sensitive() -> None:
    assert one(FLAG, [fact("review")], flag_output("Unknown")).disposition is D.CONTRADICTED
    assert one(FLAG, [fact("Unknown")], flag_output("review")).disposition is D.CONTRADICTED


STATUS = DeclaredClaim(answer_field="patch.status", entity="case:88", field="status")


def case_update(status: str | None) -> dict[str, Any]:
    return {
        "proposal_type": "case_update",
        "summary": "Escalate the case: Aurora entered the corridor [OBS-50412].",
        "grounding": {"reasoning": "It entered the corridor.", "observations": [50412]},
        "confidence": 0.8,
        "gate": "Q9",
        "patch": {"case_id": "CASE-88", "status": status},
    }


@pytest.mark.parametrize(
    ("facts", "status", "disposition"),
    [
        ([], "open", "uncollected"),
        ([{"value": None}], "open", "uncollected"),
        ([{"value": "unknown"}], "closed", "uncollected"),
        ([{}], None, "advisory"),
    ],
)
def test_uncollected_and_advisory_are_never_a_failure(
    facts: list[dict[str, Any]], status: str | None, disposition: str
) -> None:
    wire = [
        {
            "entity": "case:88",
            "field": "status",
            "value": "escalated",
            "tool_name": "t",
            "tool_call_id": "c",
            "iteration": 0,
            **f,
        }
        for f in facts
    ]
    env = envelope(case_update(status), kind="proposal")
    env["facts"] = wire
    draft = parse_envelope(b"t-1", encode(env), max_bytes=1 << 20)
    assert isinstance(draft, Draft)
    decision = run(draft, policy=TenantPolicy(claims=(STATUS,)))
    assert decision.outcome == "grounded"
    checks = message(decision, "validated")["claim_checks"]
    assert [c["disposition"] for c in checks] == [disposition]


# --- equality and the one leniency --------------------------------------------------------------


@pytest.mark.parametrize(
    ("claimed", "settled", "equal"),
    [
        ("30", 30, True),
        (30, "30", False),
        ("30", 30.0, True),
        ("30.0", 30, False),
        (" 30", 30, False),
        ("+30", 30, False),
        ("3e1", 30, False),
        ("0.5", 0.5, True),
        (".5", 0.5, False),
        ("-2.25", -2.25, True),
        (30.0, 30, True),
        (True, 1, False),
        (1, True, False),
        ("true", True, False),
        (True, True, True),
        (None, None, True),
        ([1, "a"], [1.0, "a"], True),
        (["30"], [30], False),
        ({"a": 1, "b": [True]}, {"b": [True], "a": 1}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ("review", "Review", False),
    ],
)
def test_json_equality_with_the_one_leniency(claimed: Any, settled: Any, equal: bool) -> None:
    assert claim_equals(claimed, settled) is equal


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (30, "30"),
        (-5, "-5"),
        (30.0, "30"),
        (0.1, "0.1"),
        (-0.0, "0"),
        (1e21, "1" + "0" * 21),
        (1e-7, "0.0000001"),
        (10**30, "1" + "0" * 30),
    ],
)
def test_canonical_decimal_form(number: float, text: str) -> None:
    assert canonical_decimal(number) == text


def test_a_numeric_string_supports_a_numeric_fact_but_not_the_reverse() -> None:
    assert one(CONFIDENCE, [numeric(0.8)], {"confidence": 0.8}).disposition is D.SUPPORTED
    check = one(CONFIDENCE, [numeric("0.8")], {"confidence": 0.8})
    assert check.disposition is D.CONTRADICTED


def numeric(value: Any) -> Fact:
    return Fact("model:run", "confidence", value, "scorer", "c-9", 0)


# --- omitted, dot paths, entities ---------------------------------------------------------------


def test_omitted_when_the_output_lacks_the_field() -> None:
    answer = {"answer_markdown": "Aurora entered the corridor [OBS-50412]."}
    assert one(FLAG, [fact("review")], answer).disposition is D.OMITTED
    assert one(FLAG, [fact("review")], {"patch": {"entity_id": "x"}}).disposition is D.OMITTED


def test_omitted_comes_before_uncollected() -> None:
    assert one(FLAG_FROM, [], {"summary": "s"}).disposition is D.OMITTED


def test_a_path_that_meets_a_non_object_is_omitted() -> None:
    assert one(FLAG, [fact("review")], {"patch": ["cleared"]}).disposition is D.OMITTED
    assert one(FLAG, [fact("review")], {"patch": "cleared"}).disposition is D.OMITTED


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("claims.text", "claims is an array"),
        ("claims.0.text", "identifiers"),
        ("claims[0].text", "identifiers"),
        ("sections.citations", "sections is an array"),
        ("patch.mappings.source_field", "patch.mappings is an array"),
        ("patch.nope", "patch.nope is not a field"),
        ("flag", "flag is not a field"),
        ("patch.flag.colour", "patch.flag is not an object"),
        ("patch..flag", "identifiers"),
        ("", "identifiers"),
        # Prose fields of rule 7: read as claim units, hedged and redacted, never typed.
        ("answer_markdown", "answer_markdown is prose"),
        ("title", "title is prose"),
        ("summary", "summary is prose"),
        ("grounding.reasoning", "grounding.reasoning is prose"),
        # An object holding prose would be compared, or shown as the entity, whole.
        ("grounding", r"grounding holds prose \(grounding.reasoning"),
    ],
)
def test_a_dot_path_through_an_array_or_to_no_field_is_refused_at_load(
    path: str, message: str
) -> None:
    for claim in (
        {"answer_field": path, "entity": "e", "field": "f"},
        {"answer_field": "patch.flag", "entity": {"from": path}, "field": "f"},
    ):
        book = {"tenants": {"acme": {"claims": [claim]}}}
        with pytest.raises(ValidationError, match=message):
            PolicyBook.model_validate_json(json.dumps(book))


@pytest.mark.parametrize(
    "path",
    ["patch.flag", "confidence", "tool_calls_made", "grounding.observations", "base_rates"],
)
def test_paths_to_any_schema_field_are_accepted_and_arrays_compare_whole(path: str) -> None:
    claim = DeclaredClaim(answer_field=path, entity="e", field="f")
    assert claim.answer_field == path
    tools = DeclaredClaim(answer_field="tool_calls_made", entity="run", field="tools")
    same = Fact("run", "tools", ["a", "b"], "t", "c", 0)
    assert one(tools, [same], {"tool_calls_made": ["a", "b"]}).disposition is D.SUPPORTED
    assert one(tools, [same], {"tool_calls_made": ["b", "a"]}).disposition is D.CONTRADICTED


@pytest.mark.parametrize(
    "claim",
    [
        {"answer_field": "patch.flag", "entity": "", "field": "flag"},
        {"answer_field": "patch.flag", "entity": "e", "field": ""},
        {"answer_field": "patch.flag", "entity": {"from": "patch.entity_id", "x": 1}, "field": "f"},
        {"answer_field": "patch.flag", "entity": 7, "field": "flag"},
        {"answer_field": "patch.flag", "field": "flag"},
        {"answer_field": "patch.flag", "entity": "e", "field": "flag", "extra": True},
    ],
)
def test_malformed_claims_are_refused_at_load(claim: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        PolicyBook.model_validate({"default": {"claims": [claim]}})


def test_a_claim_declared_twice_is_refused_at_load() -> None:
    claim = {"answer_field": "patch.flag", "entity": {"from": "patch.entity_id"}, "field": "flag"}
    with pytest.raises(ValidationError, match="more than once"):
        PolicyBook.model_validate({"default": {"claims": [claim, dict(claim)]}})


def test_the_entity_is_taken_from_the_output() -> None:
    facts = [fact("review", entity="vessel:aurora"), fact("cleared", entity="vessel:borealis")]
    aurora = one(FLAG_FROM, facts, flag_output("cleared", "vessel:aurora"))
    borealis = one(FLAG_FROM, facts, flag_output("cleared", "vessel:borealis"))
    assert (aurora.entity, aurora.disposition) == ("vessel:aurora", D.CONTRADICTED)
    assert (borealis.entity, borealis.disposition) == ("vessel:borealis", D.SUPPORTED)


@pytest.mark.parametrize("entity_id", [None, "", 7, ["vessel:aurora"]])
def test_an_entity_the_output_does_not_name_as_a_string_is_uncollected(entity_id: Any) -> None:
    output = {"patch": {"flag": "cleared", "entity_id": entity_id}}
    check = one(FLAG_FROM, [fact("review")], output)
    assert (check.entity, check.disposition) == (None, D.UNCOLLECTED)


def test_a_citation_token_in_an_entity_is_not_carried_out() -> None:
    entity = "vessel:aurora [DOC-4242]"
    check = one(FLAG_FROM, [fact("review", entity=entity)], flag_output("cleared", entity))
    assert check.disposition is D.CONTRADICTED  # joined on the raw value
    assert check.entity is not None
    assert "4242" not in check.entity


# --- one disposition per claim, whatever the order ----------------------------------------------

_CLAIMS = [
    FLAG,
    FLAG_FROM,
    CONFIDENCE,
    DeclaredClaim(answer_field="patch.reason", entity="vessel:aurora", field="reason"),
    DeclaredClaim(answer_field="gate", entity="model:run", field="gate"),
    DeclaredClaim(answer_field="patch.flag", entity="vessel:borealis", field="flag"),
    DeclaredClaim(answer_field="confidence", entity="vessel:borealis", field="confidence"),
]
_VALUES = st.one_of(
    st.none(),
    st.just("unknown"),
    st.sampled_from(["review", "cleared", "watch", "30", "0.8"]),
    st.integers(-3, 40),
    st.sampled_from([0.8, 30.0, True, False]),
)
_FACTS = st.lists(
    st.builds(
        Fact,
        st.sampled_from(["vessel:aurora", "vessel:borealis", "model:run"]),
        st.sampled_from(["flag", "confidence", "reason", "gate"]),
        _VALUES,
        st.just("tool"),
        st.sampled_from(["c-1", "c-2"]),
        st.integers(0, 3),
        st.one_of(
            st.none(),
            st.datetimes(
                min_value=datetime(2026, 1, 1),
                max_value=datetime(2026, 1, 2),
                timezones=st.just(UTC),
            ),
        ),
    ),
    max_size=8,
)
_OUTPUTS = st.fixed_dictionaries(
    {},
    optional={
        "patch": st.fixed_dictionaries(
            {},
            optional={
                "flag": _VALUES,
                "entity_id": st.sampled_from(["vessel:aurora", "vessel:borealis"]),
                "reason": _VALUES,
            },
        ),
        "confidence": _VALUES,
        "gate": _VALUES,
    },
)


@settings(max_examples=300, deadline=None)
@given(
    order=st.permutations(list(range(len(_CLAIMS)))),
    facts=_FACTS,
    output=_OUTPUTS,
)
def test_the_disposition_set_does_not_depend_on_the_order_of_declared_claims(
    order: list[int], facts: list[Fact], output: dict[str, Any]
) -> None:
    straight = check_claims(_CLAIMS, facts, output)
    shuffled = check_claims([_CLAIMS[i] for i in order], facts, output)
    assert len(straight) == len(_CLAIMS)  # silence is never an option
    by_claim = dict(zip(_CLAIMS, straight, strict=True))
    assert {_CLAIMS[i]: c for i, c in zip(order, shuffled, strict=True)} == by_claim


# --- facts on the envelope ----------------------------------------------------------------------

GOOD_FACT = {
    "entity": "vessel:aurora",
    "field": "flag",
    "value": "review",
    "tool_name": "vessel_status",
    "tool_call_id": "call-1",
    "iteration": 0,
    "measured_at": "2026-12-02T11:00:00Z",
}


def parse(facts: Any, *, drop: bool = False) -> Draft | EnvelopeRejection:
    env = envelope({"answer_markdown": "ok [OBS-50412]."})
    if not drop:
        env["facts"] = facts
    return parse_envelope(b"t-1", encode(env), max_bytes=1 << 20)


def test_facts_are_parsed_in_order() -> None:
    second = {**GOOD_FACT, "value": None, "iteration": 1, "measured_at": None, "extra": 1}
    draft = parse([GOOD_FACT, second])
    assert isinstance(draft, Draft)
    assert draft.facts == (
        Fact(
            "vessel:aurora",
            "flag",
            "review",
            "vessel_status",
            "call-1",
            0,
            datetime(2026, 12, 2, 11, tzinfo=UTC),
        ),
        Fact("vessel:aurora", "flag", None, "vessel_status", "call-1", 1, None),
    )


@pytest.mark.parametrize("facts", [None, []])
def test_null_or_empty_facts_are_no_facts(facts: Any) -> None:
    for draft in (parse(facts), parse(None, drop=True)):
        assert isinstance(draft, Draft)
        assert draft.facts == ()


@pytest.mark.parametrize(
    "facts",
    [
        {"entity": "x"},
        "review",
        [GOOD_FACT, "review"],
        [{k: v for k, v in GOOD_FACT.items() if k != "value"}],
        [{**GOOD_FACT, "entity": ""}],
        [{**GOOD_FACT, "field": 3}],
        [{**GOOD_FACT, "tool_name": None}],
        [{k: v for k, v in GOOD_FACT.items() if k != "tool_call_id"}],
        [{**GOOD_FACT, "iteration": -1}],
        [{**GOOD_FACT, "iteration": True}],
        [{**GOOD_FACT, "iteration": 1.0}],
        [{**GOOD_FACT, "measured_at": "yesterday"}],
        [{**GOOD_FACT, "measured_at": "2026-12-02T11:00:00"}],  # no offset: cannot be ordered
        [{**GOOD_FACT, "measured_at": 1764673200000}],
    ],
)
def test_malformed_facts_are_a_malformed_envelope(facts: Any) -> None:
    got = parse(facts)
    assert isinstance(got, EnvelopeRejection)
    assert got.error_class == "malformed_envelope"
    assert "facts" in got.message
    assert "aurora" not in got.message


def test_a_fact_value_with_an_unreadable_number_is_a_malformed_envelope() -> None:
    env = envelope({"answer_markdown": "ok [OBS-50412]."})
    env["facts"] = [{**GOOD_FACT, "value": {"n": [10**1001]}}]
    got = parse_envelope(b"t-1", encode(env), max_bytes=1 << 20)
    assert isinstance(got, EnvelopeRejection)
    assert got.error_class == "malformed_envelope"


# --- through the verdict and the turn machine ---------------------------------------------------

POLICY = TenantPolicy(version="p-claims", claims=(FLAG_FROM, CONFIDENCE))
NO_CLAIMS = TenantPolicy(version="p-claims")


def make_proposal(flag: Any, facts: list[dict[str, Any]] | None = None, **kw: Any) -> Draft:
    output = {
        "proposal_type": "entity_flag",
        "summary": f"Flag Aurora as {flag} [OBS-{OBS_ENTER.id}].",
        "grounding": {"reasoning": "It entered the corridor.", "observations": [OBS_ENTER.id]},
        "confidence": 0.8,
        "gate": "Q9",
        "patch": {"entity_id": "vessel:aurora", "flag": flag, "reason": "corridor"},
    }
    env = envelope(output, kind="proposal", **kw)
    if facts is not None:
        env["facts"] = facts
    parsed = parse_envelope(env["turn_id"].encode(), encode(env), max_bytes=1 << 20)
    assert isinstance(parsed, Draft), parsed
    return parsed


REVIEW_FACTS = [
    {**GOOD_FACT, "value": "cleared", "iteration": 0, "tool_call_id": "call-0"},
    {**GOOD_FACT, "value": "review", "iteration": 1, "tool_call_id": "call-7"},
]


def test_contradicted_goes_to_regenerate_with_code_path_and_the_settled_value() -> None:
    decision = run(make_proposal("cleared", REVIEW_FACTS), policy=POLICY)
    assert decision.outcome == "regenerate"
    request = message(decision, "regenerate")
    (reason,) = request["reasons"]
    assert (reason["code"], reason["path"]) == ("contradicted_claim", "patch.flag")
    assert '"review"' in reason["detail"]
    assert "call-7" in reason["detail"]
    assert "earlier fact" in reason["detail"]  # cleared was the iteration-0 value
    ledger = message(decision, "ledger")
    assert ledger["outcome"] == "regenerate"
    assert ledger["claim_checks"] == [
        {
            "answer_field": "patch.flag",
            "entity": "vessel:aurora",
            "field": "flag",
            "disposition": "contradicted",
            "superseded": True,
        },
        {
            "answer_field": "confidence",
            "entity": "model:run",
            "field": "confidence",
            "disposition": "uncollected",
        },
    ]


def test_a_second_contradiction_ends_could_not_ground_with_code_and_path_only() -> None:
    first = run(make_proposal("cleared", REVIEW_FACTS, draft_id="d-1"), policy=POLICY)
    assert first.state is not None
    assert first.state.phase is TurnPhase.REGENERATING
    second = run(
        make_proposal("cleared", REVIEW_FACTS, draft_id="d-2", attempt=1),
        state=first.state,
        policy=POLICY,
    )
    assert second.outcome == "could_not_ground"
    event = message(second, "could_not_ground")
    assert event["reasons"] == [{"code": "contradicted_claim", "path": "patch.flag"}]
    raw = next(o.value for o in second.outbound if o.topic.value == "could_not_ground")
    for leak in (b"review", b"call-7", b"vessel_status", b"detail"):
        assert leak not in raw


def test_a_fixed_regeneration_is_grounded_with_claim_checks_supported() -> None:
    first = run(make_proposal("cleared", REVIEW_FACTS, draft_id="d-1"), policy=POLICY)
    fixed = run(
        make_proposal("review", REVIEW_FACTS, draft_id="d-2", attempt=1),
        state=first.state,
        policy=POLICY,
    )
    assert topics(fixed) == ["validated", "ledger"]
    answer = message(fixed, "validated")
    assert answer["claim_checks"][0] == {
        "answer_field": "patch.flag",
        "entity": "vessel:aurora",
        "field": "flag",
        "disposition": "supported",
    }
    assert message(fixed, "ledger")["claim_checks"] == answer["claim_checks"]


def test_contradicted_claim_sorts_after_every_other_failure() -> None:
    draft = make_proposal("cleared", REVIEW_FACTS)
    bad = draft.model_copy(
        update={"output": {**draft.output, "summary": "Flag it [OBS-123456789]."}}  # type: ignore[dict-item]
    )
    decision = run(bad, policy=POLICY)
    codes = [r["code"] for r in message(decision, "regenerate")["reasons"]]
    assert codes == ["dangling_citation", "contradicted_claim"]
    assert FailureCode.CONTRADICTED_CLAIM.value == "contradicted_claim"


def test_without_declared_claims_the_messages_are_byte_identical() -> None:
    plain = run(make_proposal("cleared"), policy=NO_CLAIMS)
    with_facts = run(make_proposal("cleared", REVIEW_FACTS), policy=NO_CLAIMS)
    assert plain.outbound == with_facts.outbound
    for out in plain.outbound:
        assert b"claim_checks" not in out.value


def test_an_output_that_fails_the_schema_carries_no_claim_checks() -> None:
    draft = make_proposal("cleared", REVIEW_FACTS)
    broken = draft.model_copy(update={"output": {**draft.output, "gate": "Q99"}})  # type: ignore[dict-item]
    decision = run(broken, policy=POLICY)
    assert decision.outcome == "regenerate"
    assert "claim_checks" not in message(decision, "ledger")


def test_a_hidden_token_in_the_entity_reaches_no_message() -> None:
    entity = "vessel:aurora [DOC-4242]"
    facts = [{**GOOD_FACT, "entity": entity, "value": "review [DOC-4242]"}]
    draft = make_proposal("cleared", facts)
    output = {**draft.output, "patch": {**draft.output["patch"], "entity_id": entity}}  # type: ignore[index, dict-item]
    decision = run(draft.model_copy(update={"output": output}), policy=POLICY)
    assert decision.outcome == "regenerate"
    assert message(decision, "ledger")["claim_checks"][0]["entity"] == "vessel:aurora"
    for out in decision.outbound:
        if out.topic.value != "ledger":  # the ledger names hidden ids by kind and id, by design
            assert b"4242" not in out.value, out.topic


def test_no_declared_claims_no_checks() -> None:
    assert check_claims((), [fact("review")], flag_output()) == ()


def test_messages_with_claim_checks_are_valid_wire_messages() -> None:
    first = run(make_proposal("cleared", REVIEW_FACTS, draft_id="d-1"), policy=POLICY)
    fixed = run(
        make_proposal("review", REVIEW_FACTS, draft_id="d-2", attempt=1),
        state=first.state,
        policy=POLICY,
    )
    models = {
        "validated": GroundedAnswer,
        "ledger": LedgerBatch,
        "regenerate": RegenerateRequest,
    }
    for out in (*first.outbound, *fixed.outbound):
        model = models[out.topic.value].model_validate_json(out.value)
        assert to_json_bytes(model) == out.value
