#!/usr/bin/env python3
"""Write the JSON Schemas of the wire formats to schemas/json/<name>.schema.json.

    .venv/bin/python scripts/gen_schemas.py

Generated from the pydantic models (the draft envelope, the three agent outputs, the four output
messages, the policy book of ``GW_POLICY_FILE``): pretty-printed, keys sorted, trailing newline.
tests/unit/core/test_schemas_fresh.py fails when a file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "schemas" / "json"
sys.path.insert(0, str(ROOT))

# After the path insert, so the script runs from a checkout without an installed package.
from worker.core.envelope import DraftEnvelopeWire  # noqa: E402
from worker.core.messages import (  # noqa: E402
    CouldNotGround,
    GroundedAnswer,
    LedgerBatch,
    RegenerateRequest,
)
from worker.core.outputs import AnalystAnswer, Proposal, ReportDraft  # noqa: E402
from worker.core.policy import PolicyBook  # noqa: E402


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
