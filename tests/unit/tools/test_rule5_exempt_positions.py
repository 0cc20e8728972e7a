"""Contract rule 5 where rule 7 asks for no citation: a heading, a question, a lead-in, a code
line, a table header, a report's title or section heading that carries a hidden-only citation
loses its words by the policy (hedge, omit, refuse), never just its token.

Run through ``check`` on the demo corpus: u-cy (no groups) may not see DOC-9002, whose text is
about EU card refunds; u-ana (analysts) may, and gets the words.
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
HEDGE = "This statement could not be verified against sources you can access."
SECRET = "EU card refunds tripled"
CITED = "Checkout p95 latency rose from 180 ms to 840 ms [OBS-1001]."


def answer(markdown: str, user: str = "u-cy") -> dict[str, Any]:
    groups = ["analysts"] if user == "u-ana" else []
    return {
        "schema_version": 1,
        "draft_id": "d-r5",
        "turn_id": "t-r5",
        "attempt": 0,
        "tenant_id": "acme",
        "principal": {"user_id": user, "groups": groups},
        "kind": "answer",
        "output": {"answer_markdown": markdown, "citations": [{"kind": "OBS", "id": 1001}]},
    }


def run(draft: dict[str, Any], tmp_path: Path, lost_support: str = "hedge") -> dict[str, Any]:
    path, policy = tmp_path / "draft.json", tmp_path / "policy.json"
    path.write_text(json.dumps(draft))
    policy.write_text(json.dumps({"default": {"version": "t", "lost_support": lost_support}}))
    result = CliRunner().invoke(
        app,
        ["check", "--json", "--show-messages", "--policy", str(policy), "--evidence", CORPUS,
         str(path)],
    )  # fmt: skip
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def published(body: dict[str, Any]) -> str:
    (message,) = [m for m in body["messages"] if m["topic"] == "validated"]
    return json.dumps(message["value"]["output"], ensure_ascii=False)


POSITIONS = {
    "heading": f"## {SECRET} [DOC-9002]\n\n{CITED}",
    "question": f"Have {SECRET} [DOC-9002]? {CITED}",
    "lead-in": f"{SECRET} [DOC-9002]:\n\n- {CITED}",
    "code line": f"```\n{SECRET} [DOC-9002]\n```\n\n{CITED}",
    "table header": f"| {SECRET} [DOC-9002] | Value |\n|---|---|\n| p95 | 840 ms [OBS-1001] |",
    "after a stop": f"{CITED} U.S. {SECRET}. [DOC-9002] {CITED}",
}
#: Where the worker's Markdown reading and a CommonMark renderer used to differ (an attacker's
#: review): whatever the reading, the words beside a hidden-only citation never leave.
DIVERGENCES = {
    "fence opened in a list item": f"1. a\n   ```\n   x\n2. {SECRET} [DOC-9002].\n\n{CITED}",
    "fence opened in a quote": f"> ```\n> x\n\n{SECRET} [DOC-9002].\n\n{CITED}",
    "quote then a rule": f"> {SECRET} [DOC-9002].\n---\n\n{CITED}",
    "table without pipes": f"a | b\n--|--\n{SECRET} [DOC-9002] | 840 ms [OBS-1001]",
    "second sentence of a cited cell": f"| a |\n|---|\n| 840 ms [OBS-1001]. {SECRET} [DOC-9002]. |",
    "question in parentheses": f"{SECRET} (closing in May?) [DOC-9002]. {CITED}",
    "CJK stops": f"{CITED} 欧盟退款三倍。{SECRET} [DOC-9002]。{CITED}",
    "stop before a line break tag": f"{CITED}<br>{SECRET} [DOC-9002]. {CITED}",
}


@pytest.mark.parametrize("where", POSITIONS)
def test_hidden_words_in_an_exempt_position_are_hedged(tmp_path: Path, where: str) -> None:
    body = run(answer(POSITIONS[where]), tmp_path)
    assert body["outcome"] == "grounded"
    text = published(body)
    assert SECRET not in text
    assert "9002" not in text
    assert HEDGE in text
    assert "840 ms" in text  # the visible claim stays


@pytest.mark.parametrize("where", POSITIONS)
def test_a_reader_who_may_see_the_source_gets_the_words(tmp_path: Path, where: str) -> None:
    body = run(answer(POSITIONS[where], user="u-ana"), tmp_path)
    assert SECRET in published(body)


def test_omit_removes_the_words_and_refuse_ends_the_turn(tmp_path: Path) -> None:
    body = run(answer(POSITIONS["heading"]), tmp_path, "omit")
    text = published(body)
    assert SECRET not in text
    assert HEDGE not in text
    body = run(answer(POSITIONS["heading"]), tmp_path, "refuse")
    assert body["outcome"] == "could_not_ground"
    assert SECRET not in json.dumps(body["messages"])


def test_a_reports_title_and_a_cited_sections_heading(tmp_path: Path) -> None:
    draft = answer("")
    draft["kind"] = "report"
    draft["output"] = {
        "title": f"{SECRET} [DOC-9002]",
        "sections": [
            {
                "heading": f"Why {SECRET} [DOC-9002]",
                "body_markdown": CITED,
                "citations": [],
            }
        ],
        "timeline": [],
        "status": "DRAFT",
    }
    body = run(draft, tmp_path)
    assert body["outcome"] == "grounded"
    text = published(body)
    assert SECRET not in text
    assert "9002" not in text
    assert "840 ms" in text


@pytest.mark.parametrize("where", DIVERGENCES)
def test_no_reading_of_the_markdown_publishes_hidden_words(tmp_path: Path, where: str) -> None:
    body = run(answer(DIVERGENCES[where]), tmp_path)
    assert body["outcome"] in {"grounded", "regenerate"}, body["outcome"]
    everything = json.dumps(body["messages"], ensure_ascii=False)
    assert SECRET not in everything
    assert "9002" not in everything
