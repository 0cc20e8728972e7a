"""``check`` and the worker's pipeline decide a draft through the same door, so they agree.

Every example draft, once through ``check`` (a batch of one) and once through the stream's
``BatchProcessor`` (a batch of one, in-memory seams): the same outcome, the same dead-letter class,
and the very bytes of every message but the ledger (which ``check`` never shows).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from worker.core.claims.policy import PolicyBook
from worker.core.contract import TopicRole
from worker.core.messages.records import Headers, Incoming, OutRecord
from worker.runtime.metrics import Metrics
from worker.settings import Settings
from worker.stream.processing.pipeline import BatchProcessor
from worker.stream.seams import StoredTurn
from worker.tools.check import CheckRequest, check, to_record
from worker.tools.evidence_fixture import load_fixture

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(p for p in (ROOT / "schemas" / "examples").glob("*.json") if p.stem != "expected")
CORPUS = ROOT / "worker" / "demo" / "corpus.json"
POLICIES = PolicyBook.model_validate_json((ROOT / "deploy" / "demo-policies.json").read_bytes())
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
SETTINGS = Settings()
#: The message a first draft's outcome publishes (besides its ledger batch).
TOPIC_OF = {
    "grounded": "validated",
    "regenerate": "regenerate",
    "could_not_ground": "could_not_ground",
}


class Turns:
    def __init__(self) -> None:
        self.turns: dict[str, StoredTurn] = {}

    def get(self, turn_id: str) -> StoredTurn | None:
        return self.turns.get(turn_id)

    def put(self, turn_id: str, partition: int, state: Any) -> None:
        self.turns[turn_id] = StoredTurn(state, partition)

    def delete(self, turn_id: str, partition: int) -> None:
        self.turns.pop(turn_id, None)


class Sent:
    def __init__(self) -> None:
        self.records: list[tuple[str, bytes, Headers]] = []

    async def send(self, record: OutRecord) -> Any:
        self.records.append((record.topic, record.value, record.headers))
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


def through_the_worker(content: bytes) -> list[tuple[str, bytes, Headers]]:
    key, value = to_record(CheckRequest(content))
    sent = Sent()
    processor = BatchProcessor(
        settings=SETTINGS,
        evidence=load_fixture(CORPUS),
        turns=Turns(),
        publisher=sent,
        policies=POLICIES,
        metrics=Metrics(),
        worker_version="test",
        clock=lambda: NOW,
    )
    record = Incoming(SETTINGS.topics.drafts, 0, 0, 0, key, value, ())
    asyncio.run(processor.process([record]))
    return sent.records


def through_check(content: bytes) -> dict[str, Any]:
    return asyncio.run(
        check(
            CheckRequest(content),
            load_fixture(CORPUS),
            POLICIES,
            NOW,
            max_bytes=SETTINGS.max_draft_bytes,
            show_messages=True,
        )
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_check_and_the_worker_publish_the_same_messages(example: Path) -> None:
    content = example.read_bytes()
    report = through_check(content)
    published = through_the_worker(content)
    names = SETTINGS.topics.by_role()
    if report["outcome"] == "dead_letter":
        ((topic, _, headers),) = published
        assert topic == names[TopicRole.DLQ]
        assert dict(headers)["dlq.error.class"].decode() == report["dead_letter_class"]
        return
    role_of = {name: role for role, name in names.items()}
    worker_messages = [
        {"topic": role_of[topic].value, "value": orjson.loads(value)}
        for topic, value, _ in published
        if role_of[topic] is not TopicRole.LEDGER
    ]
    assert worker_messages == report["messages"]
    assert len(published) == len(worker_messages) + 1  # and one ledger batch
    assert [m["topic"] for m in worker_messages] == [TOPIC_OF[report["outcome"]]]
