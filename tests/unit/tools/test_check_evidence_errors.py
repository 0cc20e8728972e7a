"""``check --evidence`` with a file it cannot use: one line naming the file, the line and the
field (never the value), exit 2; a missing file says so without a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from worker.cli import app

ROOT = Path(__file__).resolve().parents[3]
DRAFT = ROOT / "schemas/examples/answer_grounded.json"
CORPUS = ROOT / "worker/demo/corpus.json"


def _check(evidence: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["check", "--evidence", str(evidence), str(DRAFT)])
    return result.exit_code, result.output


def test_a_bad_field_is_named_with_its_line(tmp_path: Path) -> None:
    corpus = json.loads(CORPUS.read_text())
    corpus["tenants"][0]["observations"][1]["id"] = "SECRET-not-a-number"
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(corpus, indent=2))
    line = 1 + next(
        i for i, text in enumerate(path.read_text().splitlines()) if "SECRET-not-a-number" in text
    )

    code, output = _check(path)

    assert code == 2
    assert output.strip() == (
        f"check: evidence file {path}: line {line}: tenants[0].observations[1].id: "
        "Input should be a valid integer, unable to parse string as an integer"
    )
    assert "SECRET" not in output


def test_a_missing_field_points_at_its_object(tmp_path: Path) -> None:
    corpus = json.loads(CORPUS.read_text())
    del corpus["tenants"][1]["tenant_id"]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(corpus, indent=2))

    code, output = _check(path)

    assert code == 2
    assert re.search(r": line \d+: tenants\[1\]\.tenant_id: Field required$", output.strip())


def test_a_file_that_is_not_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "corpus.json"
    path.write_text('{\n  "tenants": [\n    {,\n]}')
    code, output = _check(path)
    assert code == 2
    assert f"check: evidence file {path} is not JSON: " in output
    assert "at line 3 column 6" in output


def test_a_missing_file_is_one_clean_line(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    code, output = _check(path)
    assert code == 2
    assert output.strip() == f"check: evidence file {path} does not exist"
