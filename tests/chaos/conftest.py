"""Fixtures of the chaos suite: its own test bed, the marked corpus, workers, the results file.

The scenarios stop and start the bed's servers, so they refuse to run against a bed they do not
own: ``scripts/chaos`` starts this checkout's bed and sets ``CHAOS_BED`` to it (run them through
``scripts/chaos``, not ``scripts/test``). Each scenario appends its figures to ``CHAOS_RESULTS``
(JSON lines), from which ``scripts/chaos`` prints the table.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from chaoslib import ChaosWorker, seed_corpus
from pymongo import AsyncMongoClient

from dev.harness import ServiceControl
from worker.settings import Settings
from worker.stores.demo import seed

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def bed() -> ServiceControl:
    where = os.environ.get("CHAOS_BED")
    if not where:
        pytest.fail(
            "the chaos scenarios stop and start servers: run them with scripts/chaos, which "
            "starts a test bed of its own (CHAOS_BED is not set)",
            pytrace=False,
        )
    control = ServiceControl(Path(where))
    if not control.script.exists():
        pytest.fail(f"no scripts/services in CHAOS_BED={where}", pytrace=False)
    return control


@pytest.fixture(scope="session")
async def servers(
    bed: ServiceControl, kafka_bootstrap: str, postgres_dsn: str, mongo_url: str
) -> dict[str, str]:
    settings = Settings(GW_POSTGRES_DSN=postgres_dsn, GW_MONGO_URL=mongo_url)  # type: ignore[call-arg]
    await seed(settings)  # migrations + demo corpus
    pool = await asyncpg.create_pool(postgres_dsn, min_size=1, max_size=2)
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(mongo_url)
    try:
        await seed_corpus(pool, client[settings.mongo_database])
    finally:
        await pool.close()
        await client.close()
    return {"kafka": kafka_bootstrap, "postgres": postgres_dsn, "mongo": mongo_url}


@pytest.fixture(scope="session")
async def pg(servers: dict[str, str]) -> AsyncIterator[Any]:
    """A pool that survives a Postgres restart (asyncpg reconnects on the next acquire)."""
    pool = await asyncpg.create_pool(servers["postgres"], min_size=0, max_size=2)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture(scope="session")
def new_worker(
    servers: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., ChaosWorker]:
    def make(name: str = "worker", **kwargs: Any) -> ChaosWorker:
        return ChaosWorker(
            kafka_bootstrap=servers["kafka"],
            postgres_dsn=servers["postgres"],
            mongo_url=servers["mongo"],
            workdir=tmp_path_factory.mktemp(name),
            **kwargs,
        )

    return make


@pytest.fixture(scope="session")
def record() -> Callable[[dict[str, Any]], None]:
    """Append one scenario's figures to the results file."""
    path = Path(os.environ.get("CHAOS_RESULTS") or REPO_ROOT / "build" / "chaos" / "results.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(row: dict[str, Any]) -> None:
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row, default=str) + "\n")
        print(json.dumps({k: v for k, v in row.items() if k != "examples"}, default=str))

    return write
