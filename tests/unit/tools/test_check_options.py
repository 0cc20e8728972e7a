"""``check`` options: bare outputs, the turn state to evaluate in, and unusable input (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from worker.cli import app

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "schemas" / "examples"
CORPUS = str(ROOT / "worker" / "demo" / "corpus.json")


def run(*args: str) -> tuple[int, dict[str, object] | None, str]:
    result = CliRunner().invoke(app, ["check", *args])
    body = json.loads(result.stdout) if result.stdout.strip().startswith("{") else None
    return result.exit_code, body, result.stderr


def output_of(name: str) -> object:
    return json.loads((EXAMPLES / name).read_text())["output"]


def test_bare_output_with_tenant_user_and_groups(tmp_path: Path) -> None:
    bare = tmp_path / "out.json"
    bare.write_text(json.dumps(output_of("answer_hedged_hidden_doc.json")))
    args = ["--json", "--evidence", CORPUS, str(bare), "--tenant", "acme", "--user", "u-ana"]
    code, body, _ = run(*args, "--group", "analysts")
    assert code == 0
    assert body is not None
    assert body["redacted"] == {"ids": 0, "occurrences": 0}  # analysts may see DOC-9002
    code, body, _ = run(*args)  # no groups: DOC-9002 is hidden, its sentence hedged
    assert code == 0
    assert body is not None
    assert [c["status"] for c in body["claims"]] == ["cited", "hedged"]  # type: ignore[index]


def test_bare_prose_is_the_model_raw_text(tmp_path: Path) -> None:
    prose = tmp_path / "reply.txt"
    prose.write_text("```json\n" + json.dumps(output_of("answer_grounded.json")) + "\n```\n")
    code, body, _ = run(
        "--json", "--evidence", CORPUS, str(prose), "--tenant", "acme", "--user", "u-ana"
    )
    assert code == 0
    assert body is not None
    assert body["outcome"] == "grounded"
    prose.write_text("The latency went up, I believe.")
    code, body, _ = run(
        "--json", "--evidence", CORPUS, str(prose), "--tenant", "acme", "--user", "u-ana"
    )
    assert code == 1
    assert body is not None
    assert body["failures"] == [{"code": "malformed_output", "path": None, "citation": None}]


def test_bare_kind(tmp_path: Path) -> None:
    bare = tmp_path / "proposal.json"
    bare.write_text(json.dumps(output_of("proposal_grounded.json")))
    code, body, _ = run(
        "--json",
        "--evidence",
        CORPUS,
        str(bare),
        "--tenant",
        "acme",
        "--user",
        "u-ana",
        "--kind",
        "proposal",
    )
    assert code == 0
    assert body is not None
    assert body["kind"] == "proposal"


@pytest.mark.parametrize("flag", [["--attempt", "1"], ["--after-regeneration"]])
def test_second_draft_failure_is_final(flag: list[str]) -> None:
    path = str(EXAMPLES / "answer_regenerate_uncited_claim.json")
    code, body, _ = run("--json", "--evidence", CORPUS, path, *flag)
    assert code == 1
    assert body is not None
    assert body["outcome"] == "could_not_ground"
    assert body["state"] == ("regenerating" if flag == ["--after-regeneration"] else "open")


def test_second_draft_grounded_is_grounded() -> None:
    path = str(EXAMPLES / "answer_grounded.json")
    code, body, _ = run("--json", "--evidence", CORPUS, path, "--after-regeneration")
    assert code == 0
    assert body is not None
    assert body["outcome"] == "grounded"


def test_show_messages_never_includes_the_ledger() -> None:
    path = str(EXAMPLES / "answer_hedged_hidden_doc.json")
    code, body, _ = run("--json", "--show-messages", "--evidence", CORPUS, path)
    assert code == 0
    assert body is not None
    messages = body["messages"]
    assert [m["topic"] for m in messages] == ["validated"]  # type: ignore[index,union-attr]
    assert "9002" not in json.dumps(messages)


def test_policy_file_changes_the_lost_support_rule(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(
        json.dumps({"tenants": {"acme": {"version": "p-refuse", "lost_support": "refuse"}}})
    )
    path = str(EXAMPLES / "answer_hedged_hidden_doc.json")
    code, body, _ = run("--json", "--evidence", CORPUS, "--policy", str(policy), path)
    assert code == 1
    assert body is not None
    assert body["outcome"] == "could_not_ground"
    assert body["failures"] == [
        {"code": "unsupported_answer", "path": "answer_markdown", "citation": None}
    ]


def test_policy_file_with_typed_claims_shows_their_checks(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    claim = {"answer_field": "patch.status", "entity": {"from": "patch.case_id"}, "field": "status"}
    policy.write_text(json.dumps({"tenants": {"acme": {"claims": [claim]}}}))
    draft = json.loads((EXAMPLES / "proposal_grounded.json").read_text())
    draft["facts"] = [
        {
            "entity": "CASE-88",
            "field": "status",
            "value": "monitoring",
            "tool_name": "case_lookup",
            "tool_call_id": "call-3",
            "iteration": 0,
        }
    ]
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(draft))
    code, body, _ = run("--json", "--evidence", CORPUS, "--policy", str(policy), str(path))
    assert code == 1
    assert body is not None
    assert body["failures"] == [
        {"code": "contradicted_claim", "path": "patch.status", "citation": None}
    ]
    assert body["claim_checks"] == [
        {
            "answer_field": "patch.status",
            "entity": "CASE-88",
            "field": "status",
            "disposition": "contradicted",
        }
    ]
    code, _, _ = run("--json", "--evidence", CORPUS, str(path))  # default policy: no claims
    assert code == 0


def test_policy_file_with_a_claim_through_an_array_exits_2_saying_why(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    claim = {"answer_field": "claims.text", "entity": "e", "field": "f"}
    policy.write_text(json.dumps({"default": {"claims": [claim]}}))
    path = str(EXAMPLES / "answer_grounded.json")
    code, _, err = run("--evidence", CORPUS, "--policy", str(policy), path)
    assert code == 2
    assert "default.claims.0.answer_field" in err
    assert "claims is an array" in err


@pytest.mark.parametrize(
    "args",
    [
        ["no-such-file.json"],
        ["--tenant", "acme", "EXAMPLE"],
        ["--user", "u-ana", "EXAMPLE"],
        ["--group", "analysts", "EXAMPLE"],
        ["--kind", "report", "EXAMPLE"],
        ["--tenant", "acme", "--user", "u-ana", "--kind", "memo", "EXAMPLE"],
        ["--attempt", "-1", "EXAMPLE"],
        ["--policy", "no-such-policy.json", "EXAMPLE"],
    ],
)
def test_unusable_options_exit_2(args: list[str]) -> None:
    path = str(EXAMPLES / "answer_grounded.json")
    code, _, _ = run("--evidence", CORPUS, *[path if a == "EXAMPLE" else a for a in args])
    assert code == 2


def test_bad_evidence_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "evidence.json"
    bad.write_text('{"tenants": {"acme": {}}}')
    code, _, err = run("--evidence", str(bad), str(EXAMPLES / "answer_grounded.json"))
    assert code == 2
    assert "evidence file" in err


@pytest.mark.parametrize(
    ("content", "error_class"),
    [
        (b"not json at all", "malformed_envelope"),
        (b'{"schema_version": 1, "turn_id": "t-1"}', "malformed_envelope"),
        (b'{"turn_id": "t-1"}', "unsupported_schema_version"),
    ],
)
def test_dead_letter_classes_exit_2(tmp_path: Path, content: bytes, error_class: str) -> None:
    path = tmp_path / "draft.json"
    path.write_bytes(content)
    code, body, _ = run("--json", "--evidence", CORPUS, str(path))
    assert code == 2
    assert body == {
        "outcome": "dead_letter",
        "exit_code": 2,
        "dead_letter_class": error_class,
        "reason": body["reason"] if body else None,
    }


BIG_ID = "9" * 400


def _with_big_id(tmp_path: Path) -> Path:
    draft = json.loads((EXAMPLES / "answer_grounded.json").read_text())
    draft["output"]["answer_markdown"] = f"Checkout p95 latency rose to 840 ms [OBS-{BIG_ID}]."
    draft["output"]["citations"] = [{"kind": "OBS", "id": int(BIG_ID)}]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(draft))
    return path


def test_an_id_past_64_bits_is_dangling_as_the_worker_says_not_a_malformed_envelope(
    tmp_path: Path,
) -> None:
    code, body, _ = run("--json", "--evidence", CORPUS, str(_with_big_id(tmp_path)))
    assert code == 1
    assert body is not None
    assert body["outcome"] == "regenerate"
    assert {f["code"] for f in body["failures"]} == {"dangling_citation"}  # type: ignore[union-attr]


@pytest.mark.parametrize("as_json", [False, True])
def test_show_messages_writes_an_id_past_64_bits_without_a_traceback(
    tmp_path: Path, as_json: bool
) -> None:
    args = ["--show-messages", "--evidence", CORPUS, str(_with_big_id(tmp_path))]
    result = CliRunner().invoke(app, ["check", *(["--json"] if as_json else []), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 1
    assert BIG_ID in result.stdout  # the agent's own id, in the regenerate request it would get
