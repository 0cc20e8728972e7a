"""The records the worker publishes for the drafts of the mix: the floor's templates.

The floor (``dev.bench.floor``) publishes, for each draft it consumes, what the worker publishes for
a draft of the mix: its output (validated, regenerate, could-not-ground or dead letter), its
ledger batch and its turn-table changelog record (a dead-lettered draft: its output alone). So
that the sizes and what the producer's compression makes of them are the worker's, the records
are the worker's own: ``templates`` runs the worker's ``BatchProcessor`` in this process over a
sample of the mix (in-memory evidence from the benchmark's corpus, the worker's turn table store
over a dict, the changelog deferred and handed over with the batch as ``worker.stream.app``
wires it) and keeps each draft's records by role. The floor cycles through them.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import structlog.testing

from dev.bench import corpus as bench_corpus
from dev.bench import drafts as bench_drafts
from worker.core import Incoming, InMemoryEvidenceStore, OutRecord, PolicyBook
from worker.runtime.metrics import Metrics
from worker.settings import Settings
from worker.stream.memory import MemoryBulkPublisher
from worker.stream.processing.pipeline import BatchProcessor
from worker.stream.turns.table import FaustTurnStore

PARTITIONS = 4
CHANGELOG = "bench-shapes-turns-changelog"
#: The roles of a template record: the four outputs, the ledger batch, the changelog record.
ROLES = ("validated", "regenerate", "could_not_ground", "dlq", "ledger", "changelog")
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


class _Table:
    """What ``FaustTurnStore`` reads of a Faust table (``memory://``): its local data."""

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}

    def send_changelog(self, *args: Any, **kwargs: Any) -> None:
        return None


def _evidence(rows: dict[str, Any]) -> InMemoryEvidenceStore:
    return InMemoryEvidenceStore(bench_corpus.records(rows))


async def templates(drafts: int = 200, batch: int = 100) -> list[list[tuple[str, bytes]]]:
    """Per draft of a sample of the mix, the (role, value) of each record the worker published."""
    found, rows = bench_corpus.build("shapes", 1, 6_000_000)
    store = _evidence(rows)
    mix = bench_drafts.MixGenerator(found.tenants, run_id=0x5A9E, seed=11)
    settings = Settings()
    t = settings.topics
    role_of = {
        t.validated: "validated",
        t.regenerate: "regenerate",
        t.could_not_ground: "could_not_ground",
        t.dlq: "dlq",
        t.ledger: "ledger",
        CHANGELOG: "changelog",
    }
    recorder = MemoryBulkPublisher()  # keeps every record, acknowledges it at once
    turns = FaustTurnStore(_Table(), defer_changelog=True)
    processor = BatchProcessor(
        settings=settings,
        evidence=store,
        turns=turns,
        publisher=recorder,
        policies=PolicyBook(),
        metrics=Metrics(),
        worker_version="bench",
        clock=lambda: NOW,
        also_publish=lambda: [
            OutRecord(CHANGELOG, key, value, (), partition)
            for partition, key, value in turns.drain_unsent()
        ],
    )
    per_draft: dict[int, list[tuple[str, bytes]]] = {}

    async def go() -> None:
        offset = 0
        for n in range(0, drafts, batch):
            records = mix.take(min(batch, drafts - n))
            by_key = {r.key: r.index for r in records}  # a changelog record: its turn's draft
            by_trace = {dict(r.headers)["traceparent"]: r.index for r in records}
            incoming = []
            for r in records:
                incoming.append(
                    Incoming(
                        topic=t.drafts,
                        partition=r.index % PARTITIONS,
                        offset=offset,
                        timestamp_ms=int((NOW + timedelta(seconds=n)).timestamp() * 1000),
                        key=r.key,
                        value=r.value,
                        headers=tuple(r.headers),
                    )
                )
                per_draft[r.index] = []
                offset += 1
            start = len(recorder.records)
            await processor.process(incoming)
            for topic, key, value, headers, _ in recorder.records[start:]:
                trace = dict(headers).get("traceparent")
                index = by_trace.get(trace) if trace is not None else by_key.get(key or b"")
                if index is not None and topic in role_of:
                    per_draft[index].append((role_of[topic], value))

    with structlog.testing.capture_logs():  # the worker's line per draft: not the bench's
        await go()
    return [per_draft[i] for i in sorted(per_draft)]


def summary(found: list[list[tuple[str, bytes]]]) -> dict[str, Any]:
    """Records per draft and mean bytes per role: what the floor publishes, said in the JSON."""
    sizes: dict[str, list[int]] = {}
    for records in found:
        for role, value in records:
            sizes.setdefault(role, []).append(len(value))
    return {
        "drafts": len(found),
        "records_per_draft": round(sum(map(len, found)) / max(1, len(found)), 3),
        "mean_bytes": {r: round(sum(v) / len(v)) for r, v in sorted(sizes.items())},
        "count": {r: len(v) for r, v in sorted(sizes.items())},
    }


def write(found: list[list[tuple[str, bytes]]], path: Path) -> None:
    """The templates as JSON (values in base64), for the floor's process."""
    doc = [[[role, base64.b64encode(v).decode("ascii")] for role, v in d] for d in found]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def read(path: Path) -> list[list[tuple[str, bytes]]]:
    """The templates ``write`` wrote."""
    return [[(role, base64.b64decode(v)) for role, v in d] for d in json.loads(path.read_text())]
