"""Write one example of every message the worker publishes, made by the worker's own core.

    .venv/bin/python scripts/gen_message_examples.py

Each example draft in ``schemas/examples/`` listed below goes through the pure core (parse,
prepare, the demo corpus as evidence, evaluate, decide; a regeneration deadline for the timeout)
at a fixed time, and every message it yields is written to ``schemas/examples/messages/``.
``tests/unit/core/messages/test_message_examples.py`` fails when a file is stale or does not
validate against its schema; ``scripts/check-contracts`` validates them again with check-jsonschema.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from worker.core import (
    Decision,
    EnvelopeRejection,
    PolicyBook,
    TopicRole,
    admit,
    judge,
    on_deadline,
)
from worker.tools.evidence_fixture import load_fixture

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "schemas" / "examples"
OUT = EXAMPLES / "messages"

NOW = datetime(2026, 12, 2, 12, 0, 5, tzinfo=UTC)
CORPUS = ROOT / "worker" / "demo" / "corpus.json"
#: Output topic -> the schema of its messages (``schemas/json``).
SCHEMA_OF = {
    TopicRole.VALIDATED: "grounded_answer.schema.json",
    TopicRole.REGENERATE: "regenerate_request.schema.json",
    TopicRole.COULD_NOT_GROUND: "could_not_ground.schema.json",
    TopicRole.LEDGER: "ledger_batch.schema.json",
}
#: Schema file -> the topic its examples are named by.
SCHEMA_TOPIC = {schema: topic.value for topic, schema in SCHEMA_OF.items()}
#: (example name, draft file): every output message and every kind of agent output.
CASES = (
    ("answer_grounded", "answer_grounded.json"),
    ("answer_hedged_hidden_doc", "answer_hedged_hidden_doc.json"),
    ("proposal_grounded", "proposal_grounded.json"),
    ("answer_regenerate_dangling", "answer_regenerate_dangling.json"),
    ("answer_regenerate_unsupported_number", "answer_regenerate_unsupported_number.json"),
    ("report_regenerate_buried_dangling", "report_regenerate_buried_dangling.json"),
    ("answer_could_not_ground_no_grounding", "answer_could_not_ground_no_grounding.json"),
)


async def decide_file(draft_file: str) -> Decision:
    raw = (EXAMPLES / draft_file).read_bytes()
    doc = json.loads(raw)
    admitted = admit(doc["turn_id"].encode(), raw, max_bytes=1 << 20, policies=PolicyBook())
    if isinstance(admitted, EnvelopeRejection):
        raise SystemExit(f"{draft_file}: {admitted.message}")
    store = load_fixture(CORPUS)
    found = (await store.fetch_batch({admitted.tenant_id: admitted.refs}))[admitted.tenant_id]
    return judge(admitted, None, found, NOW, retention_s=None).decision


def build() -> dict[str, str]:
    """File name (under ``messages/``) -> text."""
    out: dict[str, str] = {}

    def add(name: str, decision: Decision) -> None:
        for o in decision.outbound:
            topic = TopicRole(o.topic)
            doc = json.loads(o.value)
            out[f"{name}.{topic.value}.json"] = (
                json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
            )

    for name, draft_file in CASES:
        decision = asyncio.run(decide_file(draft_file))
        add(name, decision)
        if name == "answer_regenerate_dangling" and decision.state is not None:
            deadline = decision.state.deadline
            assert deadline is not None
            tick = deadline + timedelta(seconds=1)
            add("answer_regeneration_timeout", on_deadline(decision.state, "t", tick, tick))
    return out


def schema_for(example: str) -> str:
    """The schema file an example validates against (by the topic in its name)."""
    topic = example.rsplit(".", 2)[-2]
    return SCHEMA_OF[TopicRole(topic)]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    built = build()
    for stale in OUT.glob("*.json"):
        if stale.name not in built:
            stale.unlink()
    for name, text in built.items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote {(OUT / name).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
