"""The committed topic declarations and AsyncAPI document match worker/kafka/topic_specs.py."""

from __future__ import annotations

import json
from pathlib import Path

from dev.generators.topics import build

ROOT = Path(__file__).resolve().parents[3]


def test_topic_artefacts_are_fresh() -> None:
    stale = [
        name
        for name, text in build().items()
        if not (ROOT / "topics" / name).is_file()
        or (ROOT / "topics" / name).read_text(encoding="utf-8") != text
    ]
    assert not stale, f"stale topic artefacts {stale}: run scripts/gen_topics.py"


def test_every_asyncapi_payload_reference_exists() -> None:
    doc = json.loads((ROOT / "topics" / "asyncapi.json").read_text(encoding="utf-8"))
    refs = [
        m["payload"]["$ref"]
        for m in doc["components"]["messages"].values()
        if "$ref" in m["payload"]
    ]
    assert len(refs) == 5  # every topic but the DLQ and the replay log has a JSON Schema
    missing = [r for r in refs if not (ROOT / "topics" / r).resolve().is_file()]
    assert not missing


def test_drafts_topic_stamps_append_time_and_admits_oversized_drafts() -> None:
    """Deadline control records rely on broker time; oversized drafts must reach the worker."""
    doc = json.loads((ROOT / "topics" / "topics.json").read_text(encoding="utf-8"))
    drafts = next(t for t in doc["topics"] if t["role"] == "drafts")
    assert drafts["config"]["message.timestamp.type"] == "LogAppendTime"
    assert int(drafts["config"]["max.message.bytes"]) == 2 * 1024 * 1024 + 64 * 1024
