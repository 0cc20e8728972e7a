"""Write the JSON Schemas of the wire formats to schemas/json/<name>.schema.json.

    .venv/bin/python scripts/gen_schemas.py

Generated from the pydantic models (the draft envelope, the three agent outputs, the four output
messages, the policy book of ``GW_POLICY_FILE``): pretty-printed, keys sorted, trailing newline.
Output messages are then opened (no ``additionalProperties: false``), their agent output typed by
``kind`` and their timestamps marked ``format: date-time``.
tests/unit/core/outputs/test_schemas_fresh.py
fails when a file is stale.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from worker.core import (
    AnalystAnswer,
    CouldNotGround,
    DraftEnvelopeWire,
    GroundedAnswer,
    LedgerBatch,
    PolicyBook,
    Proposal,
    RegenerateRequest,
    ReportDraft,
)

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "schemas" / "json"

#: The messages the worker publishes. Their schemas are open (no ``additionalProperties:
#: false`` anywhere in them): docs/contract.md §1 says consumers ignore fields they do not
#: know, so a later version may add fields without breaking a consumer that validates.
OUTPUT_MESSAGES = ("grounded_answer", "regenerate_request", "could_not_ground", "ledger_batch")
#: The field of an output message that carries the agent output, typed by the message's ``kind``.
OUTPUT_FIELD = {"grounded_answer": "output", "regenerate_request": "previous_output"}
KIND_SCHEMAS = {
    "answer": "analyst_answer.schema.json",
    "proposal": "proposal.schema.json",
    "report": "report_draft.schema.json",
}
#: RFC 3339 timestamps (contract §1), by message.
DATE_TIMES = {
    "grounded_answer": ("validated_at",),
    "regenerate_request": ("deadline",),
    "could_not_ground": ("at",),
}


def _open(node: Any) -> Any:
    """``node`` without any ``additionalProperties: false``."""
    if isinstance(node, dict):
        return {
            k: _open(v) for k, v in node.items() if not (k == "additionalProperties" and v is False)
        }
    if isinstance(node, list):
        return [_open(v) for v in node]
    return node


def shape_output_message(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Open an output message's schema, type its agent output by ``kind``, mark date-times."""
    schema = _open(schema)
    for stamp in DATE_TIMES.get(name, ()):
        schema["properties"][stamp]["format"] = "date-time"
    field = OUTPUT_FIELD.get(name)
    if field is not None:
        nullable = name == "regenerate_request"
        cases = []
        for kind, ref in KIND_SCHEMAS.items():
            typed: dict[str, Any] = {"$ref": ref}
            if nullable:
                typed = {"anyOf": [typed, {"type": "null"}]}
            cases.append(
                {
                    "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                    "then": {"properties": {field: typed}},
                }
            )
        schema["allOf"] = cases
    return schema


def build_schemas() -> dict[str, str]:
    """File name -> file text."""
    adapters: dict[str, Any] = {
        "draft_envelope": TypeAdapter(DraftEnvelopeWire),
        "analyst_answer": TypeAdapter(AnalystAnswer),
        "proposal": TypeAdapter(Proposal),
        "report_draft": TypeAdapter(ReportDraft),
        "grounded_answer": TypeAdapter(GroundedAnswer),
        "regenerate_request": TypeAdapter(RegenerateRequest),
        "could_not_ground": TypeAdapter(CouldNotGround),
        "ledger_batch": TypeAdapter(LedgerBatch),
        "policy_book": TypeAdapter(PolicyBook),
    }
    out: dict[str, str] = {}
    for name, adapter in adapters.items():
        schema = adapter.json_schema()
        if name in OUTPUT_MESSAGES:
            schema = shape_output_message(name, schema)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema.setdefault("title", name)
        text = json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        out[f"{name}.schema.json"] = text
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in build_schemas().items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote {OUT.relative_to(ROOT) / name}")


if __name__ == "__main__":
    main()
