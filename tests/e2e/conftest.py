"""Fixtures for the end-to-end tests: the worker as a process against the test bed's servers.

Each test module starts its own worker(s) with private topics (``WorkerProcess`` picks a unique app
id), so modules never see each other's records; tests inside a module use distinct turn ids. The
demo corpus (``worker/demo/corpus.json``) is seeded once, idempotently, with its own ids: tests
cite them directly (OBS-1001, DOC-9002, ...).

Outage tests stop a server of the bed the test runs against: ``TESTBED_DIR`` names that bed's
checkout (default: this repository), whose ``scripts/services`` stops and starts it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, NamedTuple

import asyncpg
import pytest

from dev.harness import ServiceControl, WorkerProcess
from worker.settings import Settings
from worker.stores.demo import seed

REPO_ROOT = Path(__file__).resolve().parents[2]


class Servers(NamedTuple):
    """Where the test bed's three servers listen."""

    kafka: str
    postgres: str
    mongo: str


@pytest.fixture(scope="session")
async def servers(kafka_bootstrap: str, postgres_dsn: str, mongo_url: str) -> Servers:
    """The three servers, migrated and seeded with the demo corpus (idempotent)."""
    settings = Settings(GW_POSTGRES_DSN=postgres_dsn, GW_MONGO_URL=mongo_url)  # type: ignore[call-arg]
    await seed(settings)
    return Servers(kafka_bootstrap, postgres_dsn, mongo_url)


@pytest.fixture(scope="session")
def new_worker(
    servers: Servers, tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., WorkerProcess]:
    """Build a (not yet started) worker: ``new_worker(partitions=2, policy=..., env={...})``."""

    def make(name: str = "worker", **kwargs: Any) -> WorkerProcess:
        workdir = tmp_path_factory.mktemp(name)
        return WorkerProcess(
            kafka_bootstrap=servers.kafka,
            postgres_dsn=servers.postgres,
            mongo_url=servers.mongo,
            workdir=workdir,
            **kwargs,
        )

    return make


@pytest.fixture(scope="session")
async def pg(servers: Servers) -> AsyncIterator[Any]:
    """A plain asyncpg pool to inspect the ledger table."""
    pool = await asyncpg.create_pool(servers.postgres, min_size=1, max_size=2)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture(scope="session")
def testbed_dir() -> Path:
    """The checkout whose ``scripts/services`` runs the servers under test."""
    return Path(os.environ.get("TESTBED_DIR") or REPO_ROOT)


@pytest.fixture(scope="session")
def services(testbed_dir: Path) -> ServiceControl:
    control = ServiceControl(testbed_dir)
    if not control.script.exists():
        pytest.fail(f"no scripts/services in TESTBED_DIR={testbed_dir}", pytrace=False)
    return control
