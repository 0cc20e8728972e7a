"""Every output message has a committed example, made by the core, that validates against its
schema; the output-message schemas are open, type the agent output by kind, and mark times."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from check_jsonschema.formats.implementations import validate_rfc3339
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

from dev.generators import message_examples as GEN

ROOT = Path(__file__).resolve().parents[4]
SCHEMAS = ROOT / "schemas" / "json"
MESSAGES = ROOT / "schemas" / "examples" / "messages"
OUTPUT_SCHEMAS = (
    "grounded_answer.schema.json",
    "regenerate_request.schema.json",
    "could_not_ground.schema.json",
    "ledger_batch.schema.json",
)


#: jsonschema checks ``date-time`` only with an optional package; use check-jsonschema's RFC 3339
#: check, so this test and scripts/check-contracts judge formats alike.
FORMATS = FormatChecker()
FORMATS.checks("date-time")(validate_rfc3339)


def validator(schema_file: str) -> Draft202012Validator:
    """A validator that resolves the schemas' relative $refs and checks formats."""
    registry: Registry[Any] = Registry().with_resources(
        (p.name, Resource.from_contents(json.loads(p.read_text(encoding="utf-8"))))
        for p in SCHEMAS.glob("*.schema.json")
    )
    schema = json.loads((SCHEMAS / schema_file).read_text(encoding="utf-8"))
    return Draft202012Validator(schema, registry=registry, format_checker=FORMATS)


def test_examples_are_fresh() -> None:
    built: dict[str, str] = GEN.build()
    committed = {p.name: p.read_text(encoding="utf-8") for p in MESSAGES.glob("*.json")}
    assert committed == built, "stale: run scripts/gen_message_examples.py"


def test_every_output_topic_has_an_example() -> None:
    topics = {name.rsplit(".", 2)[-2] for name in GEN.build()}
    assert topics == {"validated", "regenerate", "could_not_ground", "ledger"}
    kinds = {
        json.loads(text)["kind"]
        for name, text in GEN.build().items()
        if name.endswith((".validated.json", ".regenerate.json"))
    }
    assert kinds == {"answer", "proposal", "report"}


@pytest.mark.parametrize("example", sorted(p.name for p in MESSAGES.glob("*.json")))
def test_example_validates_against_its_schema(example: str) -> None:
    doc = json.loads((MESSAGES / example).read_text(encoding="utf-8"))
    errors = list(validator(GEN.schema_for(example)).iter_errors(doc))
    assert errors == [], [e.message for e in errors]


@pytest.mark.parametrize("schema_file", OUTPUT_SCHEMAS)
def test_output_schemas_are_open(schema_file: str) -> None:
    """Consumers ignore unknown fields (docs/contract.md §1): a new field must not fail
    validation."""
    text = (SCHEMAS / schema_file).read_text(encoding="utf-8")
    assert '"additionalProperties": false' not in text
    example = next(MESSAGES.glob(f"*.{GEN.SCHEMA_TOPIC[schema_file]}.json"))
    doc = json.loads(example.read_text(encoding="utf-8")) | {"added_in_a_later_version": 1}
    assert list(validator(schema_file).iter_errors(doc)) == []


def test_output_is_typed_by_kind_and_times_are_date_times() -> None:
    example = json.loads((MESSAGES / "answer_grounded.validated.json").read_text(encoding="utf-8"))
    check = validator("grounded_answer.schema.json")
    wrong_shape = example | {"output": {**example["output"], "answer_markdown": 5}}
    assert any(e.json_path == "$.output.answer_markdown" for e in check.iter_errors(wrong_shape))
    as_report = example | {"kind": "report"}  # an answer's output is no report
    assert list(check.iter_errors(as_report))
    bad_time = example | {"validated_at": "yesterday"}
    assert [e.json_path for e in check.iter_errors(bad_time)] == ["$.validated_at"]
