"""Rule 7's block structure through ``check`` (contract v3): each unit's exact place and status.

The shapes where the hand-written line scanner and a CommonMark renderer differed, and the
exempt positions, on the demo corpus: OBS-1001 is visible to u-cy, DOC-9 is absent (dangling).
The pure-core spans are in ``tests/unit/core/claims/test_markdown_blocks.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from worker.cli import app

ROOT = Path(__file__).resolve().parents[3]
CORPUS = str(ROOT / "worker" / "demo" / "corpus.json")
CITED = "Checkout p95 latency rose from 180 ms to 840 ms [OBS-1001]."
FALCON = "Falcon is priced at 4.2B [DOC-9]."
UNCITED = "Falcon is priced at 4.2B."


def check(markdown: str, tmp_path: Path) -> dict[str, Any]:
    draft = {
        "schema_version": 1,
        "draft_id": "d-blocks",
        "turn_id": "t-blocks",
        "attempt": 0,
        "tenant_id": "acme",
        "principal": {"user_id": "u-cy", "groups": []},
        "kind": "answer",
        "output": {"answer_markdown": markdown, "citations": [{"kind": "OBS", "id": 1001}]},
    }
    path, policy = tmp_path / "draft.json", tmp_path / "policy.json"
    path.write_text(json.dumps(draft))
    policy.write_text(json.dumps({"default": {"version": "t"}}))
    result = CliRunner().invoke(
        app, ["check", "--json", "--policy", str(policy), "--evidence", CORPUS, str(path)]
    )
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def units(body: dict[str, Any], markdown: str) -> list[tuple[str, str]]:
    return [(markdown[c["start"] : c["end"]], c["status"]) for c in body["claims"]]


def failures(body: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(f["code"], f["path"]) for f in body["failures"]]


#: Markdown -> (its units' texts and statuses, the draft's failures).
CASES: dict[str, tuple[str, list[tuple[str, str]], list[tuple[str, str | None]]]] = {
    "fence in a quote ends with the quote": (
        f"> ```\n> code\n\n2. {FALCON}",
        [(FALCON, "failed")],
        [("dangling_citation", "answer_markdown")],
    ),
    "fence in a list item ends with the item": (
        f"1. {CITED}\n   ```\n   x\n2. {UNCITED}",
        [(CITED, "cited"), (UNCITED, "uncited")],
        [("uncited_claim", "answer_markdown")],
    ),
    "fence opened on a list marker line": (
        f"- ```\n  {UNCITED}\n- {CITED}",
        [(CITED, "cited")],
        [],
    ),
    "quote then a rule": (
        f"> {UNCITED}\n---\n\n{CITED}",
        [(UNCITED, "uncited"), (CITED, "cited")],
        [("uncited_claim", "answer_markdown")],
    ),
    "table without leading pipes": (
        f"Metric | Value\n--|--\np95 | {CITED}\np50 | 180 ms",
        [(f"p95 | {CITED}", "cited"), ("p50 | 180 ms", "uncited")],
        [("uncited_claim", "answer_markdown")],
    ),
    "ordinary table header": (
        "| Metric | Value |\n|---|---|\n| p95 | 840 ms [OBS-1001] |",
        [("| p95 | 840 ms [OBS-1001] |", "cited")],
        [],
    ),
    "a pipe paragraph": (
        f"| {UNCITED}\n\n{CITED}",
        [(f"| {UNCITED}", "uncited"), (CITED, "cited")],
        [("uncited_claim", "answer_markdown")],
    ),
    "link reference definition": (
        f'[falcon]: https://example.com/f "{UNCITED}"\n\n{CITED}',
        [(CITED, "cited")],
        [],
    ),
    "image on its own line": (
        f"![{UNCITED}](chart.png)\n\n{CITED}",
        [(CITED, "cited")],
        [],
    ),
    "indented code": (
        f"{CITED}\n\n    {UNCITED}",
        [(CITED, "cited")],
        [],
    ),
    "a paragraph that is one code span": (
        f"`{UNCITED}`\n\n{CITED}",
        [(CITED, "cited")],
        [],
    ),
    "HTML comment and thematic break": (
        f"<!-- {UNCITED} -->\n\n* * *\n\n{CITED}",
        [(CITED, "cited")],
        [],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_units_are_the_blocks_a_renderer_shows(tmp_path: Path, case: str) -> None:
    markdown, expected_units, expected_failures = CASES[case]
    body = check(markdown, tmp_path)
    assert units(body, markdown) == expected_units
    assert failures(body) == expected_failures
    assert body["outcome"] == ("regenerate" if expected_failures else "grounded")
