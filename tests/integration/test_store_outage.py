"""Outages: a stopped, crashed or silent store is a retriable fault, never an empty answer.

Each test stops servers of its own (a private PostgreSQL cluster, a private FerretDB process,
both started here on free ports), so no other test can notice. The adapters are created once
per test and must serve again after the restart without being re-created.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from one_tenant import fetch_one

from dev.testbed import mongo, postgres
from dev.testbed.process import children
from worker.core import CitationRef, EvidenceKind, EvidenceRecord
from worker.faults import StoreUnavailable
from worker.stores.deadline import CLEANUP_GRACE_S
from worker.stores.demo import load_corpus
from worker.stores.ledger import PostgresLedger
from worker.stores.ledger_rows import LedgerRecord
from worker.stores.migrate import apply_migrations, ensure_mongo_indexes
from worker.stores.mongo import MongoEvidence
from worker.stores.postgres import PostgresEvidence

pytestmark = [pytest.mark.integration, pytest.mark.outage]

TIMEOUT_S = 1.0
OBS_1001 = CitationRef(EvidenceKind.OBS, 1001)
DOC_9001 = CitationRef(EvidenceKind.DOC, 9001)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivatePostgres:
    """A throwaway cluster in a temp dir, owned by the postgres user when we run as root."""

    def __init__(self) -> None:
        self._bindir = postgres.bindir()  # the test bed's own way to find the server binaries
        self.home = Path(tempfile.mkdtemp(prefix="gw-outage-pg-"))
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.home, user.pw_uid, user.pw_gid)
        self.port = _free_port()
        self.dsn = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._pg(["initdb", "-D", "data", "-U", "postgres", "--auth=trust", "-E", "UTF8"])

    def _pg(self, cmd: list[str]) -> None:
        argv = postgres.as_pg([str(self._bindir / cmd[0]), *cmd[1:]])
        subprocess.run(argv, cwd=self.home, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''"
        self._pg(["pg_ctl", "start", "-w", "-D", "data", "-l", "pg.log", "-o", options])

    def stop(self, mode: str = "fast") -> None:
        self._pg(["pg_ctl", "stop", "-w", "-m", mode, "-D", "data"])

    def pids(self) -> list[int]:
        """The postmaster and every process it started (the backends serving connections)."""
        postmaster = int((self.home / "data" / "postmaster.pid").read_text().split()[0])
        return [postmaster, *children(postmaster)]

    def remove(self) -> None:
        subprocess.run(
            postgres.as_pg([str(self._bindir / "pg_ctl"), "stop", "-m", "immediate", "-D", "data"]),
            cwd=self.home, check=False, capture_output=True,
        )  # fmt: skip
        shutil.rmtree(self.home, ignore_errors=True)


class PrivateFerretDB:
    """A FerretDB process on its own port and SQLite directory (the test bed's binary)."""

    def __init__(self) -> None:
        self._binary = mongo.ferretdb_binary()  # the test bed's build of FerretDB
        self.home = Path(tempfile.mkdtemp(prefix="gw-outage-ferretdb-"))
        self.port = _free_port()
        self.url = f"mongodb://127.0.0.1:{self.port}/"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        (self.home / "data").mkdir(exist_ok=True)
        self._process = subprocess.Popen(
            [str(self._binary), "-listen", f"127.0.0.1:{self.port}",
             "-sqlite-url", f"file:{self.home / 'data'}/"],
            cwd=self.home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not mongo.hello_ok(self.port):
            assert self._process.poll() is None, "FerretDB exited at start"
            assert time.monotonic() < deadline, "FerretDB did not answer within 30 s"
            time.sleep(0.1)

    def pids(self) -> list[int]:
        assert self._process is not None
        return [self._process.pid]

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=30)
            self._process = None

    def remove(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=30)
        shutil.rmtree(self.home, ignore_errors=True)


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture
def private_ferretdb() -> Iterator[PrivateFerretDB]:
    server = PrivateFerretDB()
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture
async def pg_settings(private_postgres: PrivatePostgres, mongo_url: str, settings_for: Any) -> Any:
    settings = settings_for(private_postgres.dsn, mongo_url, store_timeout_s=TIMEOUT_S)
    async with PostgresEvidence.connect(settings) as pg:
        await apply_migrations(pg.pool, settings)
        corpus = load_corpus()
        for table in (settings.observations_table, settings.events_table):
            await pg.pool.execute(f'TRUNCATE "{table}"')
        args = [(r.id, t.tenant_id, r.acl and list(r.acl), r.revoked_at, r.summary)
                for t in corpus.tenants for r in t.observations]  # fmt: skip
        await pg.pool.executemany(
            f'INSERT INTO "{settings.observations_table}" VALUES ($1, $2, $3, $4, $5)', args
        )
    return settings


async def _expect_unavailable(call: Callable[[], Awaitable[object]]) -> float:
    """The call raises ``StoreUnavailable`` (not an empty answer); returns how long it took."""
    started = time.monotonic()
    with pytest.raises(StoreUnavailable):
        await call()
    return time.monotonic() - started


async def _first_success_after_restart(
    call: Callable[[], Awaitable[Any]], attempts: int = 20
) -> tuple[Any, int]:
    """Retry like the worker does (every failure must be ``StoreUnavailable``)."""
    for attempt in range(1, attempts + 1):
        try:
            return await call(), attempt
        except StoreUnavailable:
            await asyncio.sleep(0.1)
    pytest.fail(f"the store did not serve again within {attempts} attempts")


def _ledger_row() -> LedgerRecord:
    return LedgerRecord(
        tenant_id="acme", turn_id="t-1", draft_id="d-1", attempt=0, outcome="grounded",
        policy_version="p", event_id="e", kind=EvidenceKind.OBS, source_id=1001,
        resolution="resolved",
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["fast", "immediate"])
async def test_postgres_stopped_mid_test_then_back(
    private_postgres: PrivatePostgres, pg_settings: Any, mode: str
) -> None:
    """``fast`` is an orderly shutdown, ``immediate`` a crash; both are faults, then recovery."""
    async with (
        PostgresEvidence.connect(pg_settings) as pg,
        PostgresLedger.connect(pg_settings) as ledger,
    ):
        assert set(await fetch_one(pg, "acme", {OBS_1001})) == {OBS_1001}

        private_postgres.stop(mode)
        took = await _expect_unavailable(lambda: fetch_one(pg, "acme", {OBS_1001}))
        assert took < TIMEOUT_S + 1.0
        await _expect_unavailable(lambda: ledger.write_ledger([_ledger_row()]))

        private_postgres.start()
        records, attempts = await _first_success_after_restart(
            lambda: fetch_one(pg, "acme", {OBS_1001})
        )
        assert set(records) == {OBS_1001}
        assert attempts == 1  # the pool dropped its dead connections and reconnected at once
        await ledger.write_ledger([_ledger_row()])


async def test_postgres_down_when_the_adapter_starts(
    private_postgres: PrivatePostgres, pg_settings: Any
) -> None:
    private_postgres.stop()
    async with PostgresEvidence.connect(pg_settings) as pg:  # lazy: starting does not fail
        await _expect_unavailable(lambda: fetch_one(pg, "acme", {OBS_1001}))
        private_postgres.start()
        records = await fetch_one(pg, "acme", {OBS_1001})
        assert isinstance(records[OBS_1001], EvidenceRecord)


async def test_mongodb_stopped_mid_test_then_back(
    private_ferretdb: PrivateFerretDB, postgres_dsn: str, settings_for: Any
) -> None:
    settings = settings_for(postgres_dsn, private_ferretdb.url, store_timeout_s=TIMEOUT_S)
    async with MongoEvidence.connect(settings) as mongo:
        await ensure_mongo_indexes(mongo.database, settings)
        acme = load_corpus().tenant("acme")
        await mongo.database[settings.documents_collection].insert_many(
            [d.to_mongo("acme") for d in acme.documents]
        )
        assert set(await fetch_one(mongo, "acme", {DOC_9001})) == {DOC_9001}

        private_ferretdb.stop()
        took = await _expect_unavailable(lambda: fetch_one(mongo, "acme", {DOC_9001}))
        assert took < TIMEOUT_S + 1.0

        private_ferretdb.start()
        records, attempts = await _first_success_after_restart(
            lambda: fetch_one(mongo, "acme", {DOC_9001})
        )
        assert set(records) == {DOC_9001}
        # The driver re-checks an unknown server every 500 ms while a selection waits, so the
        # first call after the restart is served within its own timeout.
        assert attempts == 1


@contextlib.contextmanager
def frozen(pids: list[int]) -> Iterator[None]:
    """The processes stopped (SIGSTOP) inside the block: a server that hangs with its
    connections open, replies and cancel requests unanswered; SIGCONT after it, always."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


async def test_a_frozen_server_is_unavailable_by_the_deadline_and_serves_when_thawed(
    private_postgres: PrivatePostgres,
    private_ferretdb: PrivateFerretDB,
    pg_settings: Any,
    settings_for: Any,
) -> None:
    """A server that stops answering mid-session, connections open: the driver's cancellation
    waits on it (asyncpg sends a cancel request the frozen postmaster never reads), and the
    call must still end by ``store_timeout_s`` and the cleanup grace
    (``worker/stores/deadline.py``)."""
    bound = TIMEOUT_S + CLEANUP_GRACE_S + 1.0
    mongo_settings = settings_for(pg_settings.postgres_dsn.get_secret_value(),
                                  private_ferretdb.url, store_timeout_s=TIMEOUT_S)  # fmt: skip
    async with (
        PostgresEvidence.connect(pg_settings) as pg,
        MongoEvidence.connect(mongo_settings) as docs,
    ):
        await ensure_mongo_indexes(docs.database, mongo_settings)
        acme = load_corpus().tenant("acme")
        await docs.database[mongo_settings.documents_collection].insert_many(
            [d.to_mongo("acme") for d in acme.documents]
        )
        assert set(await fetch_one(pg, "acme", {OBS_1001})) == {OBS_1001}
        assert set(await fetch_one(docs, "acme", {DOC_9001})) == {DOC_9001}

        with frozen(private_postgres.pids()):
            took = await _expect_unavailable(lambda: fetch_one(pg, "acme", {OBS_1001}))
            assert took < bound
            took = await _expect_unavailable(lambda: fetch_one(pg, "acme", {OBS_1001}))
            assert took < bound
        records, _ = await _first_success_after_restart(lambda: fetch_one(pg, "acme", {OBS_1001}))
        assert set(records) == {OBS_1001}

        with frozen(private_ferretdb.pids()):
            took = await _expect_unavailable(lambda: fetch_one(docs, "acme", {DOC_9001}))
            assert took < bound
        records, _ = await _first_success_after_restart(lambda: fetch_one(docs, "acme", {DOC_9001}))
        assert set(records) == {DOC_9001}


async def test_silent_servers_time_out_as_unavailable(settings_for: Any) -> None:
    """A peer that accepts connections and never answers: bounded by ``store_timeout_s``."""
    sockets: list[asyncio.StreamWriter] = []

    async def swallow(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sockets.append(writer)

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    settings = settings_for(
        f"postgresql://postgres@127.0.0.1:{port}/x", f"mongodb://127.0.0.1:{port}/",
        store_timeout_s=TIMEOUT_S,
    )  # fmt: skip
    try:
        async with PostgresEvidence.connect(settings) as pg:
            took = await _expect_unavailable(lambda: fetch_one(pg, "acme", {OBS_1001}))
            assert took < TIMEOUT_S + 1.0
        async with MongoEvidence.connect(settings) as mongo:
            took = await _expect_unavailable(lambda: fetch_one(mongo, "acme", {DOC_9001}))
            assert took < TIMEOUT_S + 1.0
    finally:
        for writer in sockets:
            writer.close()
        server.close()
        await server.wait_closed()
