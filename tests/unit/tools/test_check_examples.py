"""``grounding-worker check`` on every example of ``schemas/examples/``, offline (demo corpus, under
the demo policy book, whose tenant globex declares typed claims)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from worker.cli import app

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "schemas" / "examples"
CORPUS = ROOT / "worker" / "demo" / "corpus.json"
POLICY = ROOT / "deploy" / "demo-policies.json"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text(encoding="utf-8"))
#: Ids the example readers may not see (acl or revocation): they must never be printed.
HIDDEN_IDS = ("9002", "9003", "9004", "9005", "9006", "1002", "1003", "1004", "1005")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["check", "--policy", str(POLICY), *args])
    return result.exit_code, result.stdout, result.stderr


def test_every_example_has_an_expected_verdict() -> None:
    examples = {p.name for p in EXAMPLES.glob("*.json")} - {"expected.json"}
    assert examples == set(EXPECTED)
    assert len(examples) >= 10


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_json_verdict_is_exactly_the_expected_one(name: str) -> None:
    code, out, _ = run("--json", "--evidence", str(CORPUS), str(EXAMPLES / name))
    assert json.loads(out) == EXPECTED[name]
    assert code == EXPECTED[name]["exit_code"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_readable_verdict_names_the_outcome_and_no_hidden_id(name: str) -> None:
    code, out, _ = run("--show-messages", "--evidence", str(CORPUS), str(EXAMPLES / name))
    assert code == EXPECTED[name]["exit_code"]
    assert out.startswith(f"outcome: {EXPECTED[name]['outcome']}")
    for hidden in HIDDEN_IDS:
        assert hidden not in out


def test_the_expected_file_covers_every_route() -> None:
    outcomes = {v["outcome"] for v in EXPECTED.values()}
    assert outcomes == {"grounded", "regenerate", "could_not_ground", "dead_letter"}
    codes = {f["code"] for v in EXPECTED.values() for f in v.get("failures", [])}
    assert {
        "dangling_citation",
        "published_status",
        "uncited_claim",
        "agent_no_grounding",
        "malformed_output",
        "unsupported_claim",
    } <= codes
    unsupported = EXPECTED["answer_regenerate_unsupported_number.json"]
    assert unsupported["failures"] == [
        {"code": "unsupported_claim", "path": "answer_markdown", "citation": None}
    ]
    support = unsupported["claims"][0]["support"]
    assert (support["level"], support["missing_numbers"], support["closest"]) == (
        "unsupported",
        ["940 ms"],
        "OBS-1001",
    )
    hedged = EXPECTED["answer_hedged_hidden_doc.json"]
    assert [c["status"] for c in hedged["claims"]] == ["cited", "hedged"]
    assert hedged["redacted"] == {"ids": 1, "occurrences": 2}
    buried = EXPECTED["report_regenerate_buried_dangling.json"]["failures"]
    assert buried == [
        {"code": "dangling_citation", "path": "timeline[2].text", "citation": "EVT-599"}
    ]
    contradicted = EXPECTED["proposal_regenerate_contradicted_claim.json"]
    assert contradicted["failures"] == [
        {"code": "contradicted_claim", "path": "patch.flag", "citation": None}
    ]
    assert contradicted["claim_checks"][0] == {
        "answer_field": "patch.flag",
        "entity": "conveyor:site-b-4",
        "field": "flag",
        "disposition": "contradicted",
        "superseded": True,
    }
    supported = EXPECTED["proposal_grounded_typed_claims.json"]["claim_checks"]
    assert [c["disposition"] for c in supported] == ["supported", "omitted"]


def test_claim_checks_appear_only_for_a_tenant_that_declares_claims() -> None:
    for name, report in EXPECTED.items():
        declared = report.get("tenant_id") == "globex"
        assert ("claim_checks" in report) is declared, name


def test_readable_report_lists_the_claim_checks() -> None:
    path = str(EXAMPLES / "proposal_regenerate_contradicted_claim.json")
    code, out, _ = run("--evidence", str(CORPUS), path)
    assert code == 1
    assert "  contradicted_claim       patch.flag\n" in out
    assert "claim checks: 2 (1 contradicted, 1 omitted)" in out
    assert "contradicted (superseded)" in out


def _field(output: Any, field: str) -> Any:
    """``claims[2].text`` of ``output``."""
    value = output
    for name, index in re.findall(r"([A-Za-z_]+)(?:\[(\d+)\])?", field):
        value = value[name]
        if index:
            value = value[int(index)]
    return value


@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if e.get("claims")))
def test_each_unit_says_where_it_is_in_the_draft(name: str) -> None:
    """``field``, ``start`` and ``end`` locate the unit in the draft as sent: a sentence's own
    words in ``answer_markdown``, the whole string of an item, a section or a summary."""
    draft = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    units = EXPECTED[name]["claims"]
    for unit in units:
        text = _field(draft["output"], unit["field"])
        assert isinstance(text, str)
        piece = text[unit["start"] : unit["end"]]
        assert piece.strip()
        if unit["kind"] != "sentence":
            assert (unit["start"], unit["end"]) == (0, len(text))
    sentences = [u for u in units if u["kind"] == "sentence"]
    assert [u["start"] for u in sentences] == sorted(u["start"] for u in sentences)
    for a, b in itertools.pairwise(sentences):
        assert a["end"] <= b["start"]  # sentences never overlap
