"""Run the worker as a real process and talk to it over Kafka: the e2e tests' (and tools') harness.

- :class:`WorkerProcess` starts ``python -m worker.cli run`` with an isolated environment: its own
  ``GW_APP_ID``, its own topic names (``<app_id>.agent.drafts`` and so on), a free web port, its
  own data directory and optional policy file, JSON logs captured to files. It waits until
  ``/health`` lists assigned partitions and stops with SIGTERM (or SIGKILL on demand), leaving no
  process behind.
- :class:`Bus` creates the worker's topics up front, produces drafts with aiokafka and collects
  every record of the output topics and the dead-letter topic, so a test can wait for what it
  expects (``await bus.wait_for("validated", key=turn_id)``) and then assert that nothing else came
  (``await bus.settle()``).
- :func:`draft` builds a draft envelope (contract §2) for the demo corpus.

Nothing here is pytest-specific: the replay tool's tests and the benchmark use it too.
"""

# Waits take a plain `timeout=` (seconds): a test reads `bus.wait_for(..., timeout=30)` best.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import itertools
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from worker.core import last_header
from worker.kafka.topics_admin import create_topics
from worker.settings import Settings, TopicNames

#: Output roles a Bus collects, by the field name of :class:`worker.settings.TopicNames`.
OUTPUT_ROLES = ("regenerate", "validated", "could_not_ground", "ledger", "dlq")
ROLES = ("drafts", *OUTPUT_ROLES)

_draft_counter = itertools.count(1)


def free_port() -> int:
    """A local TCP port nothing listens on right now (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unique_id(prefix: str = "e2e") -> str:
    """A short unique name for app ids, turn ids and the like."""
    return f"{prefix}-{secrets.token_hex(4)}"


def topic_names(app_id: str) -> TopicNames:
    """Private topic names for one worker: the contract's names prefixed with ``app_id``."""
    defaults = TopicNames()
    return TopicNames(**{role: f"{app_id}.{getattr(defaults, role)}" for role in ROLES})


def topics_env(topics: TopicNames) -> dict[str, str]:
    """``GW_TOPICS__*`` variables for ``topics``."""
    return {f"GW_TOPICS__{role.upper()}": getattr(topics, role) for role in ROLES}


# --------------------------------------------------------------------------------------------------
# Drafts


def draft(
    turn_id: str,
    output: Mapping[str, Any] | str,
    *,
    kind: str = "answer",
    user_id: str = "u-ana",
    groups: Iterable[str] | None = ("analysts",),
    tenant_id: str = "acme",
    attempt: int = 0,
    draft_id: str | None = None,
    retrieval: Iterable[tuple[str, int]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A draft envelope (contract §2); ``extra`` adds or overrides top-level fields."""
    env: dict[str, Any] = {
        "schema_version": 1,
        "draft_id": draft_id or f"{turn_id}-d{next(_draft_counter)}",
        "turn_id": turn_id,
        "attempt": attempt,
        "tenant_id": tenant_id,
        "principal": {
            "user_id": user_id,
            "groups": list(groups) if groups is not None else None,
        },
        "kind": kind,
        "output": output,
        "produced_at": "2026-12-02T12:00:00Z",
    }
    if retrieval is not None:
        env["retrieval"] = [{"kind": k, "id": i} for k, i in retrieval]
    env.update(extra)
    return env


def answer(markdown: str, **fields: Any) -> dict[str, Any]:
    """An analyst-answer output."""
    return {"answer_markdown": markdown, **fields}


# --------------------------------------------------------------------------------------------------
# The worker process


def _die_with_parent() -> None:
    """In the child: receive SIGTERM when the test process dies, even by SIGKILL (Linux)."""
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


@dataclass
class WorkerProcess:
    """The worker as a subprocess with an isolated environment.

    Use as ``async with WorkerProcess(...) as worker:`` or call :meth:`start` / :meth:`stop`.
    :meth:`start` may be called again after :meth:`stop` or :meth:`kill` (a restart keeps the
    app id, topics, data directory and log files; logs are appended).
    """

    kafka_bootstrap: str
    postgres_dsn: str
    mongo_url: str
    workdir: Path
    app_id: str = field(default_factory=lambda: unique_id("gw-e2e"))
    partitions: int = 2
    #: A ``PolicyBook`` as JSON-able data (``{"tenants": {"acme": {...}}}``), written to a file.
    policy: Mapping[str, Any] | None = None
    #: Further ``GW_*`` settings (they win over the harness's defaults).
    env: Mapping[str, str] = field(default_factory=dict)
    python: str = sys.executable
    web_port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)
    starts: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.topics = topic_names(self.app_id)
        self.stdout_path = self.workdir / "worker.stdout.log"
        self.stderr_path = self.workdir / "worker.stderr.log"

    # -- configuration ---------------------------------------------------------------------------
    def environment(self) -> dict[str, str]:
        """The child's environment: the parent's minus every ``GW_*``, plus the worker's own."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("GW_")}
        env |= {
            "KAFKA_BOOTSTRAP_SERVERS": self.kafka_bootstrap,
            "POSTGRES_DSN": self.postgres_dsn,
            "MONGO_URL": self.mongo_url,
            "GW_APP_ID": self.app_id,
            "GW_TOPIC_PARTITIONS": str(self.partitions),
            "GW_WEB_PORT": str(self.web_port),
            "GW_WEB_HOST": "127.0.0.1",
            "GW_DATA_DIR": str(self.workdir / "data"),
            "GW_LOG_JSON": "true",
            "GW_LOG_LEVEL": "INFO",
            "GW_BATCH_WAIT_S": "0.05",
            "GW_DEADLINE_SCAN_INTERVAL_S": "0.5",
            "GW_STORE_TIMEOUT_S": "2",
            # A SIGKILLed worker's partitions come back after this, not Faust's default 60 s.
            "GW_BROKER_SESSION_TIMEOUT_S": "8",
            "PYTHONUNBUFFERED": "1",
            **topics_env(self.topics),
        }
        if self.policy is not None:
            path = self.workdir / "policy.json"
            path.write_text(json.dumps(self.policy), encoding="utf-8")
            env["GW_POLICY_FILE"] = str(path)
        env |= dict(self.env)
        return env

    def settings(self) -> Settings:
        """The worker's settings as the harness sees them (topics, sizes), for admin calls."""
        env = self.environment()
        values: dict[str, Any] = {
            "GW_KAFKA_BOOTSTRAP_SERVERS": self.kafka_bootstrap,
            "app_id": self.app_id,
            "topics": self.topics,
            "topic_partitions": self.partitions,
        }
        if "GW_MAX_DRAFT_BYTES" in env:
            values["max_draft_bytes"] = int(env["GW_MAX_DRAFT_BYTES"])
        return Settings(**values)

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}/health"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}/metrics"

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self, timeout: float = 90.0) -> dict[str, Any]:
        """Start the process; return the first ``/health`` that lists assigned partitions."""
        if self.running:
            raise RuntimeError("the worker is already running")
        env = self.environment()
        # Topics exist before the worker joins, so its first assignment covers every partition.
        await create_topics(self.settings())
        with self.stdout_path.open("ab") as out, self.stderr_path.open("ab") as err:
            self.process = subprocess.Popen(  # noqa: ASYNC220 - returns at once
                [self.python, "-m", "worker.cli", "run"],
                cwd=self.workdir,
                env=env,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - Popen runs on the loop's thread
            )
        self.starts += 1
        try:
            return await self.wait_healthy(timeout)
        except BaseException:
            await self.kill()
            raise

    async def wait_healthy(self, timeout: float = 90.0) -> dict[str, Any]:
        """Poll ``/health`` until :meth:`healthy` says the worker has started."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(
                    f"worker exited with {self.process and self.process.returncode} before it "
                    f"was healthy; stderr tail:\n{self.log_tail()}"
                )
            try:
                last = await asyncio.to_thread(self._get_json, self.health_url)
            except OSError as exc:
                last = exc
            else:
                if self.healthy(last):
                    return dict(last)
            await asyncio.sleep(0.25)
        raise TimeoutError(
            f"worker not healthy after {timeout}s (last: {last!r}):\n{self.log_tail()}"
        )

    def healthy(self, health: dict[str, Any]) -> bool:
        """Whether a ``/health`` document means started: every drafts partition assigned."""
        return len(health.get("assigned_partitions", [])) == self.partitions

    @staticmethod
    def _get_json(url: str) -> Any:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return json.loads(resp.read())

    async def health(self) -> dict[str, Any]:
        """The current ``/health`` document."""
        return dict(await asyncio.to_thread(self._get_json, self.health_url))

    async def metrics(self) -> str:
        """The Prometheus text of ``/metrics``."""

        def get() -> str:
            with urllib.request.urlopen(self.metrics_url, timeout=2) as resp:
                return str(resp.read().decode("utf-8"))

        return await asyncio.to_thread(get)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    async def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM, wait for a clean exit; SIGKILL the process group past ``timeout``."""
        proc = self.process
        if proc is None:
            return None
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(proc.wait, timeout)
            except subprocess.TimeoutExpired:
                return await self.kill()
        self._reap_group(proc)
        return proc.returncode

    async def kill(self) -> int | None:
        """SIGKILL the worker's whole process group at once (a crash, as far as Kafka knows)."""
        proc = self.process
        if proc is None:
            return None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        await asyncio.to_thread(proc.wait, 30)
        self._reap_group(proc)
        return proc.returncode

    @staticmethod
    def _reap_group(proc: subprocess.Popen[bytes]) -> None:
        """Kill whatever the worker may have left in its own session (it started none so far)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    async def __aenter__(self) -> WorkerProcess:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- logs ------------------------------------------------------------------------------------
    def log_text(self) -> str:
        """Everything the process wrote (stderr, then stdout) across all its starts."""
        parts = []
        for path in (self.stderr_path, self.stdout_path):
            if path.exists():
                parts.append(path.read_text(encoding="utf-8", errors="replace"))
        return "\n".join(parts)

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def log_events(self) -> list[dict[str, Any]]:
        """The structlog JSON lines (other lines, e.g. Faust's own, are skipped)."""
        events = []
        for line in self.log_text().splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    doc = json.loads(line)
                    if isinstance(doc, dict) and "event" in doc:
                        events.append(doc)
        return events

    async def wait_for_log(
        self, event: str, timeout: float = 30.0, **fields: Any
    ) -> dict[str, Any]:
        """The first structlog event named ``event`` whose fields include ``fields``."""
        deadline = time.monotonic() + timeout
        while True:
            for doc in self.log_events():
                if doc.get("event") == event and all(doc.get(k) == v for k, v in fields.items()):
                    return doc
            if time.monotonic() > deadline:
                raise TimeoutError(f"no log event {event} {fields} after {timeout}s")
            await asyncio.sleep(0.2)


@contextlib.asynccontextmanager
async def running(worker: WorkerProcess) -> AsyncIterator[tuple[WorkerProcess, Bus]]:
    """Start ``worker`` and a bus on its topics; stop both (the worker always) afterwards."""
    try:
        await worker.start()
        async with Bus(worker.kafka_bootstrap, worker.topics) as bus:
            yield worker, bus
    finally:
        await worker.stop()


# --------------------------------------------------------------------------------------------------
# Outage control


class ServiceControl:
    """Stop and start one server of the bed (``scripts/services stop|start``)."""

    def __init__(self, bed: Path) -> None:
        self.bed = bed
        self.script = bed / "scripts" / "services"

    def _run(self, action: str, service: str) -> None:
        subprocess.run(
            [str(self.script), action, service],
            cwd=self.bed,
            check=True,
            capture_output=True,
            timeout=180,
        )

    def stop(self, service: str) -> None:
        self._run("stop", service)

    def start(self, service: str) -> None:
        self._run("start", service)

    @contextlib.contextmanager
    def stopped(self, service: str) -> Iterator[None]:
        """``service`` is down inside the block and always up again after it."""
        try:
            self.stop(service)
            yield
        finally:
            self.start(service)


# --------------------------------------------------------------------------------------------------
# The bus


class Received(NamedTuple):
    """One record read from an output topic."""

    topic: str
    role: str
    partition: int
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes
    headers: tuple[tuple[str, bytes], ...]

    @property
    def key_str(self) -> str | None:
        return self.key.decode("utf-8") if self.key is not None else None

    def json(self) -> Any:
        return json.loads(self.value)

    def header(self, name: str) -> bytes | None:
        """The last value of header ``name``, or ``None`` (as the worker reads headers)."""
        return last_header(self.headers, name)

    def header_dict(self) -> dict[str, bytes]:
        return dict(self.headers)


class Bus:
    """Produces drafts to a worker's drafts topic and collects everything it publishes.

    ``topic`` arguments take a role (``"validated"``, ``"dlq"``, ...) or a topic name. Start it
    before producing: it reads the output topics from their beginning and keeps every record.
    """

    def __init__(self, bootstrap: str, topics: TopicNames, *, max_request_size: int = 8 << 20):
        self._bootstrap = bootstrap
        self.topics = topics
        self._role_of = {getattr(topics, r): r for r in ROLES}
        self._max_request_size = max_request_size
        self.received: dict[str, list[Received]] = defaultdict(list)
        self._changed = asyncio.Condition()
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._task: asyncio.Task[None] | None = None
        self.last_receive = time.monotonic()

    def name(self, topic: str) -> str:
        """The topic name for a role or name."""
        return str(getattr(self.topics, topic)) if topic in ROLES else topic

    def role(self, topic: str) -> str:
        return topic if topic in ROLES else self._role_of.get(topic, topic)

    async def start(self) -> Bus:
        self._producer = AIOKafkaProducer(
            bootstrap_servers=self._bootstrap,
            acks="all",
            max_request_size=self._max_request_size,
            enable_idempotence=False,
        )
        await self._producer.start()
        self._consumer = AIOKafkaConsumer(
            *(self.name(r) for r in OUTPUT_ROLES),
            bootstrap_servers=self._bootstrap,
            group_id=None,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            max_partition_fetch_bytes=16 << 20,
            fetch_max_wait_ms=100,
            metadata_max_age_ms=2000,
        )
        await self._consumer.start()
        self._task = asyncio.create_task(self._collect(), name="bus-collect")
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._consumer is not None:
            await self._consumer.stop()
        if self._producer is not None:
            await self._producer.stop()

    async def __aenter__(self) -> Bus:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _collect(self) -> None:
        assert self._consumer is not None
        while True:
            batches = await self._consumer.getmany(timeout_ms=200, max_records=1000)
            if not batches:
                continue
            for records in batches.values():
                for r in records:
                    role = self.role(r.topic)
                    self.received[role].append(
                        Received(
                            topic=r.topic,
                            role=role,
                            partition=r.partition,
                            offset=r.offset,
                            timestamp_ms=r.timestamp,
                            key=r.key,
                            value=r.value if r.value is not None else b"",
                            headers=tuple((k, v or b"") for k, v in (r.headers or ())),
                        )
                    )
            self.last_receive = time.monotonic()
            async with self._changed:
                self._changed.notify_all()

    # -- producing -------------------------------------------------------------------------------
    async def send(
        self,
        value: Mapping[str, Any] | bytes,
        *,
        key: bytes | str | object | None = ...,
        headers: Iterable[tuple[str, bytes]] = (),
        topic: str = "drafts",
    ) -> Any:
        """Produce one record and wait for its acknowledgement; return its ``RecordMetadata``.

        A mapping is JSON-encoded and keyed by its ``turn_id`` unless ``key`` is given (``None``
        sends a record without key).
        """
        assert self._producer is not None
        raw = value if isinstance(value, bytes) else json.dumps(value).encode("utf-8")
        if key is ...:
            key = value.get("turn_id") if isinstance(value, Mapping) else None
        key_bytes = key.encode("utf-8") if isinstance(key, str) else key
        return await self._producer.send_and_wait(
            self.name(topic), raw, key=key_bytes, headers=list(headers)
        )

    async def send_many(self, values: Iterable[Mapping[str, Any]], topic: str = "drafts") -> int:
        """Produce many drafts (keyed by turn id) and wait for every acknowledgement."""
        assert self._producer is not None
        futures = []
        for v in values:
            futures.append(
                await self._producer.send(
                    self.name(topic), json.dumps(v).encode("utf-8"), key=v["turn_id"].encode()
                )
            )
        await asyncio.gather(*futures)
        return len(futures)

    # -- reading ---------------------------------------------------------------------------------
    def messages(
        self,
        topic: str,
        *,
        key: str | None = None,
        where: Callable[[Received], bool] | None = None,
    ) -> list[Received]:
        """What was collected so far on ``topic`` (optionally for one key, or matching)."""
        found = self.received.get(self.role(topic), [])
        return [
            r for r in found if (key is None or r.key_str == key) and (where is None or where(r))
        ]

    def for_turn(self, turn_id: str) -> dict[str, list[Received]]:
        """Everything collected for one turn, by role (empty roles left out)."""
        out = {r: self.messages(r, key=turn_id) for r in OUTPUT_ROLES}
        return {r: v for r, v in out.items() if v}

    async def wait_for(
        self,
        topic: str,
        *,
        key: str | None = None,
        count: int = 1,
        timeout: float = 30.0,
        where: Callable[[Received], bool] | None = None,
    ) -> list[Received]:
        """Wait until at least ``count`` records match; return all that match."""
        deadline = time.monotonic() + timeout
        async with self._changed:
            while True:
                found = self.messages(topic, key=key, where=where)
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"{len(found)}/{count} record(s) on {self.name(topic)} for key={key!r} "
                        f"after {timeout}s; this turn so far: {self._summary(key)}"
                    )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=left)

    async def wait_until(
        self, predicate: Callable[[], bool], *, timeout: float = 30.0, what: str = "condition"
    ) -> None:
        """Wait until ``predicate()`` holds, re-checked whenever a record arrives."""
        deadline = time.monotonic() + timeout
        async with self._changed:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{what} not reached after {timeout}s")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=min(left, 1.0))

    async def settle(self, quiet_s: float = 1.5, timeout: float = 30.0) -> None:
        """Wait until nothing has arrived for ``quiet_s`` seconds (before asserting absence)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            idle = time.monotonic() - self.last_receive
            if idle >= quiet_s:
                return
            await asyncio.sleep(quiet_s - idle)
        raise TimeoutError(f"records kept arriving for {timeout}s")

    def _summary(self, key: str | None) -> str:
        if key is None:
            return "{" + ", ".join(f"{r}: {len(v)}" for r, v in self.received.items()) + "}"
        parts = []
        for role, recs in self.for_turn(key).items():
            if role == "dlq":
                parts.append(f"dlq: {[r.header('dlq.error.class') for r in recs]}")
            else:
                parts.append(f"{role}: {[r.value[:300] for r in recs]}")
        return "; ".join(parts) or "nothing"


async def replay_cli(
    worker: WorkerProcess, *args: str, timeout: float = 120.0
) -> tuple[int, dict[str, Any], str]:
    """``grounding-worker replay --json ARGS`` against the worker's topics, as a subprocess:
    its exit code, its JSON summary (``{}`` when it printed none) and its stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GW_")}
    env |= {
        "KAFKA_BOOTSTRAP_SERVERS": worker.kafka_bootstrap,
        "GW_APP_ID": worker.app_id,
        **topics_env(worker.topics),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "worker.cli",
        "replay",
        "--json",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout)
    assert proc.returncode is not None
    return proc.returncode, json.loads(out or b"{}"), err.decode()
