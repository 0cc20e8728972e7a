"""The test bed's optional in-memory MongoDB-protocol server serves the worker's Mongo adapter.

``BENCH_MONGO=memory scripts/bench`` puts the evidence documents there to show what FerretDB's
collection scan costs; this checks the adapter finds exactly a tenant's documents on it, through
the same calls the worker makes (the index, the batched find, the projection), and that the
bed starts and stops it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from worker.core import CitationRef, EvidenceKind
from worker.settings import Settings
from worker.stores.migrate import ensure_mongo_indexes
from worker.stores.mongo import MongoEvidence

ROOT = Path(__file__).resolve().parents[2]


def services(*args: str) -> str:
    done = subprocess.run(
        [str(ROOT / "scripts/services"), *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.stdout


@pytest.fixture(scope="module")
def memory_url() -> Iterator[str]:
    was_running = "mongo-memory" in services("status")
    services("start", "mongo-memory")
    lines = services("env").splitlines()
    url = next(line for line in lines if line.startswith("export MONGO_MEMORY_URL="))
    assert "mongo-memory  running" in services("status")
    try:
        yield url.split("=", 1)[1]
    finally:
        if not was_running:
            services("stop", "mongo-memory")


async def test_the_adapter_finds_exactly_a_tenants_documents_there(
    memory_url: str, settings_for: Any, postgres_dsn: str
) -> None:
    settings: Settings = settings_for(postgres_dsn, memory_url)
    async with MongoEvidence.connect(settings) as mongo:
        await ensure_mongo_indexes(mongo.database, settings)
        docs = mongo.database[settings.documents_collection]
        await docs.delete_many({"_id": {"$in": [901, 902, 903]}})
        await docs.insert_many(
            [
                {"_id": 901, "tenant_id": "acme", "acl": None, "title": "A", "text": "one"},
                {"_id": 902, "tenant_id": "acme", "acl": ["group:legal"], "text": "two"},
                {"_id": 903, "tenant_id": "globex", "acl": None, "text": "three"},
            ]
        )
        wanted = {
            "acme": [CitationRef(EvidenceKind.DOC, i) for i in (901, 902, 903, 904)],
            "globex": [CitationRef(EvidenceKind.DOC, 903)],
        }
        found = await mongo.fetch_batch(wanted)
        assert {t: sorted(r.id for r in refs) for t, refs in found.items()} == {
            "acme": [901, 902],
            "globex": [903],
        }
        assert found["acme"][CitationRef(EvidenceKind.DOC, 902)].acl == ("group:legal",)
        one = await mongo.fetch_batch({"acme": [CitationRef(EvidenceKind.DOC, 903)]})
        assert one == {"acme": {}}  # another tenant's id is not this tenant's evidence
        await docs.delete_many({"_id": {"$in": [901, 902, 903]}})
