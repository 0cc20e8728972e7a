"""Agent-output schemas and rule 2 of contract §3."""

from __future__ import annotations

from typing import Any

import pytest
from fixtures import good_answer, good_proposal, good_report
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.failures import FailureCode
from worker.core.outputs.schemas import ADAPTERS
from worker.core.outputs.validation import (
    MAX_DEPTH,
    SCHEMA_FIELDS,
    ValidatedOutput,
    _scan,
    format_path,
    validate_output,
)


def paths(kind: str, obj: Any) -> list[tuple[str, str | None]]:
    result = validate_output(kind, obj)
    failures = result.failures if isinstance(result, ValidatedOutput) else result
    return [(f.code.value, f.path) for f in failures]


def test_valid_outputs_echo_the_agents_dict() -> None:
    for kind, obj in (
        ("answer", good_answer()),
        ("report", good_report()),
        ("proposal", good_proposal()),
    ):
        result = validate_output(kind, obj)
        assert isinstance(result, ValidatedOutput)
        assert result.value is obj
        assert result.failures == ()


def test_schema_fields() -> None:
    assert SCHEMA_FIELDS["answer"] == {
        "answer_markdown",
        "citations",
        "claims",
        "tool_calls_made",
        "withheld",
        "no_grounding",
    }
    assert SCHEMA_FIELDS["report"] == {"title", "sections", "timeline", "base_rates", "status"}
    assert SCHEMA_FIELDS["proposal"] == {
        "proposal_type",
        "summary",
        "patch",
        "grounding",
        "confidence",
        "gate",
        "auto_appliable",
    }


def test_minimal_answer_and_required_fields() -> None:
    assert paths("answer", {"answer_markdown": ""}) == []
    assert paths("answer", {}) == [("schema_invalid", "answer_markdown")]
    assert paths("report", {"title": "t"}) == [("schema_invalid", "status")]


@pytest.mark.parametrize(
    ("mutation", "path"),
    [
        (lambda o: o["citations"].append(5), "citations[2]"),
        (lambda o: o["citations"].append({"kind": "OBS", "id": True}), "citations[2].id"),
        (lambda o: o["citations"].append({"kind": "OBS", "id": "5"}), "citations[2].id"),
        (lambda o: o["citations"].append({"kind": "OBS", "id": -1}), "citations[2].id"),
        (lambda o: o["citations"].append({"kind": "OBS", "id": 1.0}), "citations[2].id"),
        (lambda o: o["citations"].append({"kind": "obs", "id": 1}), "citations[2].kind"),
        (
            lambda o: o["claims"][0]["citations"].append({"kind": "OBS", "id": 1, "quote": "q"}),
            "claims[0].citations[1].quote",
        ),
        (lambda o: o["claims"][0].update(confidence=-0.1), "claims[0].confidence"),
        (lambda o: o["claims"][0].update(confidence=float("inf")), "claims[0].confidence"),
        (lambda o: o["claims"][0].update(confidence="0.5"), "claims[0].confidence"),
        (lambda o: o.update(no_grounding=0), "no_grounding"),
        (lambda o: o.update(answer_markdown=["x"]), "answer_markdown"),
        (
            lambda o: o.update(withheld=[{"reason": "r", "metric": "m", "n": 1}]),
            "withheld[0].<field>",
        ),
    ],
)
def test_answer_schema_invalid(mutation: Any, path: str) -> None:
    obj = good_answer()
    mutation(obj)
    assert paths("answer", obj) == [("schema_invalid", path)]


def test_report_schema_invalid_paths() -> None:
    report = good_report()
    report["sections"][1]["citations"][0] = 2741
    report["timeline"][0]["at"] = "yesterday"
    report["base_rates"][0]["sample_n"] = 1.5
    assert paths("report", report) == [
        ("schema_invalid", "sections[1].citations[0]"),
        ("schema_invalid", "timeline[0].at"),
        ("schema_invalid", "base_rates[0].sample_n"),
    ]


def test_published_status() -> None:
    for status in ("PUBLISHED", "draft", ""):
        assert paths("report", good_report() | {"status": status}) == [
            ("published_status", "status")
        ]
    assert paths("report", good_report() | {"status": 1}) == [("schema_invalid", "status")]


@pytest.mark.parametrize(
    ("ptype", "patch"),
    [
        ("case_update", {"case_id": "c1", "status": "escalated", "priority": "high", "note": "n"}),
        ("case_update", {"case_id": "c1"}),
        (
            "report_section",
            {"report_id": "r", "section_index": 2, "heading": "h", "body_markdown": "b"},
        ),
        ("report_section", {"report_id": "r", "heading": "h", "body_markdown": "b"}),
        (
            "source_mapping",
            {
                "source_id": "s",
                "entity_type": "vessel",
                "mappings": [{"source_field": "a", "target_field": "b"}],
            },
        ),
        ("entity_flag", {"entity_id": "e", "flag": "watch", "reason": "r"}),
        (
            "adjudication",
            {"subject_id": "s", "decision": "merge", "rationale": "r", "merge_into": "s2"},
        ),
    ],
)
def test_patch_shapes(ptype: str, patch: dict[str, Any]) -> None:
    proposal = good_proposal() | {"proposal_type": ptype, "patch": patch}
    assert paths("proposal", proposal) == []


def test_patch_is_checked_against_its_proposal_type() -> None:
    proposal = good_proposal() | {"proposal_type": "case_update"}
    assert paths("proposal", proposal) == [
        ("schema_invalid", "patch.case_id"),
        ("schema_invalid", "patch.entity_id"),
        ("schema_invalid", "patch.flag"),
        ("schema_invalid", "patch.reason"),
    ]
    mapping = good_proposal() | {
        "proposal_type": "source_mapping",
        "patch": {"source_id": "s", "entity_type": "v", "mappings": []},
    }
    assert paths("proposal", mapping) == [("schema_invalid", "patch.mappings")]


def test_proposal_type_and_grounding() -> None:
    assert paths("proposal", good_proposal() | {"proposal_type": "[DOC-4242]"}) == [
        ("schema_invalid", "proposal_type")
    ]
    result = validate_output("proposal", good_proposal() | {"proposal_type": "[DOC-4242]"})
    assert isinstance(result, list)
    assert "4242" not in (result[0].detail or "")
    bad = good_proposal()
    bad["grounding"]["observations"] = [50418, {"kind": "OBS", "id": 1}, True]
    assert paths("proposal", bad) == [
        ("schema_invalid", "grounding.observations[1]"),
        ("schema_invalid", "grounding.observations[2]"),
    ]
    assert paths("proposal", good_proposal() | {"confidence": 1.01}) == [
        ("schema_invalid", "confidence")
    ]


def test_auto_apply() -> None:
    q9 = good_proposal() | {"gate": "Q9"}
    assert paths("proposal", q9) == [("auto_apply_not_allowed", "auto_appliable")]
    low = good_proposal() | {"confidence": 0.89}
    assert paths("proposal", low) == [("auto_apply_not_allowed", "auto_appliable")]
    assert validate_output("proposal", low, auto_apply_threshold=0.8).failures == ()  # type: ignore[union-attr]
    off = good_proposal() | {"gate": "Q8", "auto_appliable": False}
    assert paths("proposal", off) == []


def test_order_schema_then_status() -> None:
    report = good_report() | {"status": "PUBLISHED", "extra": 1}  # not a schema key: <field>
    assert paths("report", report) == [
        ("schema_invalid", "<field>"),
        ("published_status", "status"),
    ]


def nested(levels: int) -> dict[str, Any]:
    """An answer whose deepest container is at ``levels`` (the output is level 1)."""
    inner: Any = []
    for _ in range(levels - 2):
        inner = [inner]
    return {"answer_markdown": "x", "tool_calls_made": inner}


def test_nesting_limit() -> None:
    ok = validate_output("answer", nested(64))
    assert isinstance(ok, list)  # the shape is wrong, but not because of depth
    assert all("nesting" not in (f.detail or "") for f in ok)
    too_deep = validate_output("answer", nested(65))
    assert isinstance(too_deep, list)
    assert len(too_deep) == 1
    assert too_deep[0].code is FailureCode.SCHEMA_INVALID
    assert too_deep[0].detail == "nesting deeper than 64 levels"
    assert too_deep[0].path is not None
    assert too_deep[0].path.startswith("tool_calls_made[0][0]")


def test_very_deep_input_does_not_recurse() -> None:
    obj = nested(100_000)
    result = validate_output("answer", obj)
    assert isinstance(result, list)


def test_unknown_keys_never_reach_a_path() -> None:
    """Adversarial review: an identifier-shaped key the agent invented is model text too."""
    obj = good_answer() | {
        "[DOC-4242] Sealed Dossier": 1,
        "plain_key": 2,
        "Falcon_priced_4_2B_per_DOC_73002": 3,
    }
    assert paths("answer", obj) == [("schema_invalid", "<field>")]  # one path, deduplicated


@pytest.mark.parametrize(
    ("kind", "obj", "path", "detail"),
    [
        (
            "answer",
            {"answer_markdown": "x", "Falcon_priced_4_2B": 1},
            "<field>",
            "unknown field; allowed here: answer_markdown, citations, claims, no_grounding, "
            "tool_calls_made, withheld",
        ),
        (
            "answer",
            {"answer_markdown": "x", "claims": [{"text": "a", "DOC_73002": 1}]},
            "claims[0].<field>",
            "unknown field; allowed here: citations, confidence, text",
        ),
        (
            "report",
            {
                "title": "t",
                "status": "DRAFT",
                "sections": [{"heading": "h", "body_markdown": "b", "x": 1}],
            },
            "sections[0].<field>",
            "unknown field; allowed here: body_markdown, citations, heading",
        ),
    ],
)
def test_an_unknown_field_is_named_by_what_may_stand_there(
    kind: str, obj: dict[str, Any], path: str, detail: str
) -> None:
    """The path hides the invented key (model text); the detail, which only the agent reads,
    lists the names the schema allows at that place."""
    result = validate_output(kind, obj)
    assert isinstance(result, list)
    assert [(f.path, f.detail) for f in result] == [(path, detail)]


def test_format_path() -> None:
    assert format_path(("timeline", 2, "text")) == "timeline[2].text"
    assert format_path(("grounding", "observations", 0)) == "grounding.observations[0]"
    assert format_path(()) == ""


def test_unknown_kind_and_non_object() -> None:
    assert paths("essay", {}) == [("schema_invalid", None)]
    assert paths("answer", ["x"]) == [("schema_invalid", None)]


def _schema_depth(node: Any, defs: dict[str, Any]) -> int:
    """Containers an instance of a JSON Schema can nest (the object itself is level 1)."""
    if "$ref" in node:
        return _schema_depth(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    alternatives = node.get("anyOf") or node.get("oneOf") or node.get("allOf")
    if alternatives:
        return max(_schema_depth(a, defs) for a in alternatives)
    kind = node.get("type")
    if kind == "object":
        assert node.get("additionalProperties") is False, node  # no free-form value
        return 1 + max((_schema_depth(p, defs) for p in node["properties"].values()), default=0)
    if kind == "array":
        return 1 + _schema_depth(node["items"], defs)
    assert kind in {"string", "integer", "number", "boolean", "null"}, node  # no Any
    return 0


@pytest.mark.parametrize("kind", ["answer", "report", "proposal"])
def test_a_schema_valid_output_is_never_too_deep(kind: str) -> None:
    """validate_output walks for depth only when the schema rejects an output: this is why."""
    schema = ADAPTERS[kind].json_schema()
    assert _schema_depth(schema, schema.get("$defs", {})) <= 6 < MAX_DEPTH


_DIGITS = st.sampled_from(["7", "1" * 1000, "2" * 1001, "0" * 1006, "x", " ", "[OBS-", "]"])
_TEXT = st.lists(_DIGITS, max_size=4).map("".join)


@given(markdown=_TEXT, quote=_TEXT, claim=_TEXT, ident=st.sampled_from([1, 2**70, 10**999]))
@settings(max_examples=200, deadline=None)
def test_long_digit_run_flag_is_the_walks(
    markdown: str, quote: str, claim: str, ident: int
) -> None:
    obj = {
        "answer_markdown": markdown,
        "citations": [{"kind": "OBS", "id": ident, "quote": quote}],
        "claims": [{"text": claim, "citations": []}],
    }
    result = validate_output("answer", obj)
    assert isinstance(result, ValidatedOutput)
    assert result.long_digit_run is _scan(obj)[1]
