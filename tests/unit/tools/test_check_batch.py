"""``check`` on a batch, offline: a directory of drafts or a JSON Lines file, one table row (or JSON
result) per draft, totals, and one exit code for agent CI."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from worker.cli import app
from worker.faults import StoreUnavailable
from worker.settings import Settings
from worker.tools import check_cli
from worker.tools.check_batch import batch_exit_code
from worker.tools.check_cli import run_check

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "schemas" / "examples"
CORPUS = str(ROOT / "worker" / "demo" / "corpus.json")
POLICY = str(ROOT / "deploy" / "demo-policies.json")
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text(encoding="utf-8"))


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["check", "--policy", POLICY, "--evidence", CORPUS, *args])
    return result.exit_code, result.stdout, result.stderr


def envelope(name: str) -> str:
    """An example draft on one line."""
    return json.dumps(json.loads((EXAMPLES / name).read_text(encoding="utf-8")))


def copy_examples(directory: Path, *names: str) -> Path:
    directory.mkdir()
    for name in names:
        shutil.copy(EXAMPLES / name, directory / name)
    return directory


def test_the_shipped_examples_directory_is_one_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run("schemas/examples")
    # expected.json is no draft: the worker would dead-letter it, so the batch exits 2.
    assert (code, err) == (2, "")
    assert out == (
        "draft                                                         outcome           failures\n"
        "schemas/examples/answer_could_not_ground_no_grounding.json    could_not_ground"
        "  agent_no_grounding\n"
        "schemas/examples/answer_grounded.json                         grounded          -\n"
        "schemas/examples/answer_hedged_hidden_doc.json                grounded          -\n"
        "schemas/examples/answer_malformed_prose.json                  regenerate"
        "        malformed_output\n"
        "schemas/examples/answer_regenerate_dangling.json              regenerate"
        "        dangling_citation\n"
        "schemas/examples/answer_regenerate_uncited_claim.json         regenerate"
        "        uncited_claim\n"
        "schemas/examples/answer_regenerate_unsupported_number.json    regenerate"
        "        unsupported_claim\n"
        "schemas/examples/dead_letter_unsupported_schema_version.json  dead_letter"
        "       unsupported_schema_version\n"
        "schemas/examples/expected.json                                dead_letter"
        "       unsupported_schema_version\n"
        "schemas/examples/proposal_grounded.json                       grounded          -\n"
        "schemas/examples/proposal_grounded_typed_claims.json          grounded          -\n"
        "schemas/examples/proposal_regenerate_contradicted_claim.json  regenerate"
        "        contradicted_claim\n"
        "schemas/examples/report_regenerate_buried_dangling.json       regenerate"
        "        dangling_citation\n"
        "schemas/examples/report_regenerate_published_status.json      regenerate"
        "        published_status\n"
        "total: 14 draft(s) (4 grounded, 7 regenerate, 1 could_not_ground, 2 dead_letter)\n"
        "failure codes: agent_no_grounding 1, contradicted_claim 1, dangling_citation 2,"
        " malformed_output 1, published_status 1, uncited_claim 1, unsupported_claim 1\n"
        "dead-letter classes: unsupported_schema_version 2\n"
    )


def test_the_shipped_examples_as_json_are_each_exactly_the_expected_report() -> None:
    code, out, _ = run("--json", str(EXAMPLES))
    assert code == 2
    body = json.loads(out)
    names = [Path(r["file"]).name for r in body["results"]]
    assert names == sorted([*EXPECTED, "expected.json"])
    for result in body["results"]:
        name = Path(result.pop("file")).name
        assert result.pop("line") is None
        if name == "expected.json":
            assert result == {
                "outcome": "dead_letter",
                "exit_code": 2,
                "dead_letter_class": "unsupported_schema_version",
                "reason": "schema_version missing or not one this worker knows",
            }
        else:
            assert result == EXPECTED[name], name
    assert body["summary"] == {
        "drafts": 14,
        "outcomes": {
            "grounded": 4,
            "regenerate": 7,
            "could_not_ground": 1,
            "dead_letter": 2,
            "unreadable": 0,
        },
        "failure_codes": {
            "agent_no_grounding": 1,
            "contradicted_claim": 1,
            "dangling_citation": 2,
            "malformed_output": 1,
            "published_status": 1,
            "uncited_claim": 1,
            "unsupported_claim": 1,
        },
        "dead_letter_classes": {"unsupported_schema_version": 2},
        "exit_code": 2,
    }


def test_a_directory_of_grounded_drafts_exits_0(tmp_path: Path) -> None:
    names = [n for n, report in sorted(EXPECTED.items()) if report["outcome"] == "grounded"]
    drafts = copy_examples(tmp_path / "drafts", *names)
    (drafts / "notes.txt").write_text("not a draft: only *.json files are read")
    (drafts / "nested").mkdir()
    shutil.copy(EXAMPLES / "answer_malformed_prose.json", drafts / "nested" / "deeper.json")
    code, out, _ = run(str(drafts))
    assert code == 0
    width = len(f"{drafts}/proposal_grounded_typed_claims.json  ")
    assert out.splitlines() == [
        f"{'draft':<{width}}outcome   failures",
        *(f"{drafts / n!s:<{width}}grounded  -" for n in names),
        "total: 4 draft(s) (4 grounded)",
    ]


def test_a_directory_mixing_grounded_and_not_grounded_exits_1(tmp_path: Path) -> None:
    drafts = copy_examples(
        tmp_path / "d",
        "answer_grounded.json",
        "answer_regenerate_dangling.json",
        "answer_could_not_ground_no_grounding.json",
    )
    code, out, _ = run(str(drafts))
    assert code == 1
    d = str(drafts)
    assert out.splitlines() == [
        "draft" + " " * (len(d) + 39) + "outcome           failures",
        f"{d}/answer_could_not_ground_no_grounding.json  could_not_ground  agent_no_grounding",
        f"{d}/answer_grounded.json" + " " * 23 + "grounded          -",
        f"{d}/answer_regenerate_dangling.json" + " " * 12 + "regenerate        dangling_citation",
        "total: 3 draft(s) (1 grounded, 1 regenerate, 1 could_not_ground)",
        "failure codes: agent_no_grounding 1, dangling_citation 1",
    ]


def test_jsonl_reports_each_line_and_a_bad_line_is_its_dead_letter(tmp_path: Path) -> None:
    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text(
        "\n".join(
            [
                envelope("answer_grounded.json"),
                "",  # blank: skipped, still counted
                envelope("answer_regenerate_uncited_claim.json"),
                '{"turn_id": "t-9", "oops"',  # not JSON
                envelope("answer_hedged_hidden_doc.json") + "\r",  # CRLF line
                "   ",
            ]
        )
        + "\n"
    )
    code, out, err = run(str(drafts))
    assert (code, err) == (2, "")
    j = str(drafts)
    assert out.splitlines() == [
        "draft" + " " * (len(j) - 1) + "outcome      failures",
        f"{j}:1  grounded     -",
        f"{j}:3  regenerate   uncited_claim",
        f"{j}:4  dead_letter  malformed_envelope",
        f"{j}:5  grounded     -",
        "total: 4 draft(s) (2 grounded, 1 regenerate, 1 dead_letter)",
        "failure codes: uncited_claim 1",
        "dead-letter classes: malformed_envelope 1",
    ]
    code, out, _ = run("--json", str(drafts))
    assert code == 2
    body = json.loads(out)
    assert [(r["file"], r["line"], r["outcome"]) for r in body["results"]] == [
        (j, 1, "grounded"),
        (j, 3, "regenerate"),
        (j, 4, "dead_letter"),
        (j, 5, "grounded"),
    ]
    assert body["results"][2] == {
        "file": j,
        "line": 4,
        "outcome": "dead_letter",
        "exit_code": 2,
        "dead_letter_class": "malformed_envelope",
        "reason": body["results"][2]["reason"],
    }
    assert body["results"][2]["reason"]
    assert {k: v for k, v in body["results"][1].items() if k not in {"file", "line"}} == (
        EXPECTED["answer_regenerate_uncited_claim.json"]
    )
    assert body["summary"]["outcomes"] == {
        "grounded": 2,
        "regenerate": 1,
        "could_not_ground": 0,
        "dead_letter": 1,
        "unreadable": 0,
    }


def test_jsonl_without_unusable_lines_exits_1_or_0(tmp_path: Path) -> None:
    drafts = tmp_path / "ci.jsonl"
    drafts.write_text(envelope("answer_grounded.json") + "\n" + envelope("proposal_grounded.json"))
    code, out, _ = run(str(drafts))
    assert code == 0
    assert out.splitlines()[-1] == "total: 2 draft(s) (2 grounded)"
    with drafts.open("a") as f:
        f.write("\n" + envelope("report_regenerate_published_status.json") + "\n")
    code, out, _ = run(str(drafts))
    assert code == 1
    assert out.splitlines()[-2:] == [
        "total: 3 draft(s) (2 grounded, 1 regenerate)",
        "failure codes: published_status 1",
    ]


def test_jsonl_of_bare_outputs_takes_the_reader_from_the_options(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs.jsonl"
    hedged = json.loads((EXAMPLES / "answer_hedged_hidden_doc.json").read_text())["output"]
    outputs.write_text(json.dumps(hedged) + "\nThe latency went up, I believe.\n")
    args = ["--json", str(outputs), "--tenant", "acme", "--user", "u-ana"]
    code, out, _ = run(*args, "--group", "analysts")
    assert code == 1
    results = json.loads(out)["results"]
    assert [(r["line"], r["outcome"], r["user_id"]) for r in results] == [
        (1, "grounded", "u-ana"),
        (2, "regenerate", "u-ana"),
    ]
    assert results[0]["redacted"] == {"ids": 0, "occurrences": 0}  # analysts see DOC-9002
    assert results[1]["failures"] == [{"code": "malformed_output", "path": None, "citation": None}]


def test_an_unreadable_file_is_its_row_and_exits_2(tmp_path: Path) -> None:
    drafts = copy_examples(tmp_path / "d", "answer_grounded.json")
    (drafts / "broken.json").symlink_to(tmp_path / "gone.json")
    code, out, _ = run(str(drafts))
    assert code == 2
    d = str(drafts)
    assert out.splitlines() == [
        "draft" + " " * (len(d) + 18) + "outcome     failures",
        f"{d}/answer_grounded.json  grounded    -",
        f"{d}/broken.json" + " " * 11 + "unreadable  cannot read: No such file or directory",
        "total: 2 draft(s) (1 grounded, 1 unreadable)",
    ]
    code, out, _ = run("--json", d)
    assert code == 2
    body = json.loads(out)
    assert body["results"][1] == {
        "file": f"{d}/broken.json",
        "line": None,
        "outcome": "unreadable",
        "exit_code": 2,
        "reason": "cannot read: No such file or directory",
    }
    assert body["summary"]["outcomes"]["unreadable"] == 1


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "no drafts in {p}: it has no *.json file"),
        (lambda p: p.with_suffix(".jsonl").write_text("\n  \n"), "no drafts in {p}: every line"),
        (lambda p: None, "cannot read {p}: No such file or directory"),
    ],
)
def test_a_batch_without_drafts_exits_2(tmp_path: Path, make: Any, message: str) -> None:
    path = tmp_path / "drafts"
    make(path)
    target = path if path.is_dir() else path.with_suffix(".jsonl")
    code, out, err = run(str(target))
    assert (code, out) == (2, "")
    assert err.startswith("check: " + message.format(p=target))


def test_show_messages_in_a_batch_needs_json(tmp_path: Path) -> None:
    drafts = copy_examples(tmp_path / "d", "answer_hedged_hidden_doc.json")
    code, out, err = run("--show-messages", str(drafts))
    assert (code, out) == (2, "")
    assert err == "check: --show-messages on a directory or .jsonl file needs --json\n"
    code, out, _ = run("--show-messages", "--json", str(drafts))
    assert code == 0
    messages = json.loads(out)["results"][0]["messages"]
    assert [m["topic"] for m in messages] == ["validated"]
    assert "9002" not in json.dumps(messages)


def test_batch_options_apply_to_every_draft(tmp_path: Path) -> None:
    drafts = copy_examples(
        tmp_path / "d", "answer_regenerate_uncited_claim.json", "answer_regenerate_dangling.json"
    )
    code, out, _ = run("--json", "--after-regeneration", str(drafts))
    assert code == 1
    results = json.loads(out)["results"]
    assert [(r["outcome"], r["state"]) for r in results] == [
        ("could_not_ground", "regenerating"),
        ("could_not_ground", "regenerating"),
    ]


def test_stores_lost_mid_batch_stop_it_with_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drafts = copy_examples(tmp_path / "d", "answer_grounded.json", "proposal_grounded.json")
    real = check_cli.check
    calls: list[int] = []

    async def flaky(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 2:
            raise StoreUnavailable("postgres: connection refused")
        return await real(*args, **kwargs)

    monkeypatch.setattr(check_cli, "check", flaky)
    out, err = io.StringIO(), io.StringIO()
    code = run_check(
        Settings(),
        draft=drafts,
        evidence=Path(CORPUS),
        tenant=None,
        user=None,
        groups=(),
        kind="answer",
        attempt=None,
        after_regeneration=False,
        policy=None,
        show_messages=False,
        json_output=False,
        out=out,
        err=err,
    )
    assert (code, out.getvalue()) == (3, "")
    assert err.getvalue() == (
        "check: evidence stores unavailable (StoreUnavailable) at"
        f" {drafts}/proposal_grounded.json: postgres: connection refused\n"
    )


@pytest.mark.parametrize(
    ("codes", "want"),
    [
        ([0, 0], 0),
        ([0, 1, 0], 1),
        ([1, 0, 2, 1], 2),
        ([2], 2),
        ([], 2),
    ],
)
def test_batch_exit_code_unusable_beats_not_grounded_beats_grounded(
    codes: list[int], want: int
) -> None:
    assert batch_exit_code([{"exit_code": c} for c in codes]) == want


def test_a_single_file_keeps_its_own_report_and_exit_code() -> None:
    name = "dead_letter_unsupported_schema_version.json"
    code, out, _ = run("--json", str(EXAMPLES / name))
    assert (code, json.loads(out)) == (2, EXPECTED[name])
    code, out, _ = run(str(EXAMPLES / "answer_regenerate_dangling.json"))
    assert code == 1
    assert out.startswith("outcome: regenerate  (answer, first draft of the turn")
