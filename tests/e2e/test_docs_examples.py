"""The code in docs/agents.md and docs/consumers.md runs, against real Kafka and the real worker.

Each block marked ``<!-- docs-example: NAME -->`` is executed as written, then its function is
called: a guide whose example no longer works fails here rather than in a reader's hands.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from dev.harness import WorkerProcess, running, unique_id
from worker.client import GroundingClient, draft_envelope

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"<!-- docs-example: ([\w-]+)[^>]*-->\n```python\n(.*?)\n```", re.S)


def example(doc: str, name: str) -> dict[str, Any]:
    """The names a marked block of ``docs/<doc>`` defines, once executed."""
    blocks = dict(BLOCK.findall((DOCS / doc).read_text()))
    assert name in blocks, f"no docs-example {name} in docs/{doc}"
    namespace: dict[str, Any] = {}
    exec(compile(blocks[name], f"docs/{doc}:{name}", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
async def worker(new_worker: Callable[..., WorkerProcess]) -> AsyncIterator[WorkerProcess]:
    proc = new_worker("docs")
    async with running(proc):
        yield proc


async def test_the_agent_guide_loop_ends_grounded_after_one_regeneration(
    worker: WorkerProcess,
) -> None:
    answer_question = example("agents.md", "agent-loop")["answer_question"]
    async with GroundingClient(worker.kafka_bootstrap, topics=worker.topics) as client:
        text = await answer_question(client, "why is checkout slow?")
    assert text == "Checkout p95 latency rose from 180 ms to 840 ms [OBS-1001]."


async def test_the_consumer_guide_shows_each_answer_once_though_delivered_twice(
    worker: WorkerProcess,
) -> None:
    consume_answers = example("consumers.md", "ui-consumer")["consume_answers"]
    topics = worker.topics
    draft = draft_envelope(
        tenant_id="acme",
        user_id="u-ana",
        groups=["analysts"],
        kind="answer",
        output={"answer_markdown": "p95 rose from 180 ms to 840 ms [OBS-1001].", "citations": []},
    )
    async with GroundingClient(worker.kafka_bootstrap, topics=topics) as client:
        verdict = await client.ask(draft, timeout_s=60)
    # The same grounded answer delivered a second time, as at-least-once delivery may.
    producer = AIOKafkaProducer(bootstrap_servers=worker.kafka_bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(
            topics.validated, orjson.dumps(verdict.message), key=draft["turn_id"].encode()
        )
    finally:
        await producer.stop()

    shown: list[tuple[str, str]] = []

    async def show(kind: str, message: dict[str, Any]) -> None:
        shown.append((kind, message["turn_id"]))

    consumer = consume_answers(
        worker.kafka_bootstrap,
        (topics.validated, topics.could_not_ground),
        unique_id("ui"),
        show,
    )
    with pytest.raises(TimeoutError):  # it reads until stopped; 10 s reads both copies
        await asyncio.wait_for(consumer, timeout=10)
    assert [s for s in shown if s[1] == draft["turn_id"]] == [("answer", draft["turn_id"])]
