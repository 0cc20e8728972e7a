"""A typed-claim policy naming a prose field does not load, wherever a policy is loaded (rule 7b).

``entity: {"from": "answer_markdown"}`` once published the answer as it was before hedging (as
the claim check's entity): prose is read as claim units, hedged and redacted, and a typed claim
that read it would compare or echo words the reader may not be shown. The worker's start-up
(``load_policies``) and ``check --policy`` refuse such a book, naming the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from worker.cli import app
from worker.core.claims.typed import DeclaredClaim, EntityFrom
from worker.stream.main import load_policies

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "worker" / "demo" / "corpus.json"
PROSE = [
    ("answer_markdown", "answer_markdown is prose"),
    ("title", "title is prose"),
    ("summary", "summary is prose"),
    ("grounding.reasoning", "grounding.reasoning is prose"),
    ("grounding", "grounding holds prose"),
]


def _claims(path: str) -> list[dict[str, Any]]:
    return [
        {"answer_field": path, "entity": "vessel:aurora", "field": "flag"},
        {"answer_field": "patch.flag", "entity": {"from": path}, "field": "flag"},
    ]


@pytest.mark.parametrize(("path", "message"), PROSE)
def test_the_worker_does_not_start_with_a_prose_path(
    tmp_path: Path, path: str, message: str
) -> None:
    for claim in _claims(path):
        book = tmp_path / "policy.json"
        book.write_text(json.dumps({"tenants": {"acme": {"claims": [claim]}}}))
        with pytest.raises(ValidationError, match=message):
            load_policies(book)
        book.write_text(json.dumps({"default": {"claims": [claim]}}))
        with pytest.raises(ValidationError, match=message):
            load_policies(book)


@pytest.mark.parametrize(("path", "message"), PROSE)
def test_check_refuses_a_policy_with_a_prose_path(tmp_path: Path, path: str, message: str) -> None:
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps({"answer_markdown": "Latency rose [OBS-1001]."}))
    for claim in _claims(path):
        book = tmp_path / "policy.json"
        book.write_text(json.dumps({"tenants": {"acme": {"claims": [claim]}}}))
        args = ["check", "--policy", str(book), "--evidence", str(CORPUS), str(draft)]
        result = CliRunner().invoke(app, [*args, "--tenant", "acme", "--user", "u-ana"])
        assert result.exit_code == 2
        assert result.stdout == ""  # no verdict under a policy that must not load
        assert result.stderr.startswith(f"check: cannot use policy file {book}: tenants.acme.")
        assert message in result.stderr
        assert "Traceback" not in result.stderr


def test_a_prose_entity_cannot_be_built_in_code_either() -> None:
    with pytest.raises(ValidationError, match="answer_markdown is prose"):
        EntityFrom.model_validate({"from": "answer_markdown"})
    with pytest.raises(ValidationError, match="summary is prose"):
        DeclaredClaim.model_validate({"answer_field": "summary", "entity": "e", "field": "f"})
    claim = DeclaredClaim.model_validate(
        {"answer_field": "patch.flag", "entity": {"from": "patch.entity_id"}, "field": "flag"}
    )
    assert claim.plan.entity_path == ("patch", "entity_id")  # a structured field still loads
