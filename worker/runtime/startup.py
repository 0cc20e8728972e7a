"""Start-up: wait for what a command cannot run without, then give up in one line.

Every command that talks to Kafka or a store first waits for the services it *needs*
(:data:`NEEDS`): it probes each with one cheap round trip, backs off (1 s doubling to 10 s) and logs
one ``startup.waiting`` warning per failed probe, naming the service, its address (never a
password) and the reason. Once :attr:`Settings.startup_timeout_s` has passed without an answer it
raises :class:`DependencyUnreachableError`; the command line turns that into one ``startup.gave_up``
line and exit :data:`EXIT_UNREACHABLE` (3, as ``replay`` and ``check`` use it for the same fault).

``run`` and ``ledger-sink`` need only Kafka at start: they run while a store is down, retrying each
call and reporting not ready (``/ready``), as they do in an outage later on. ``migrate`` and
``seed-demo`` need both stores, ``topics`` and ``replay`` Kafka.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import asyncpg
import structlog
from aiokafka.admin import AIOKafkaAdminClient
from pymongo import AsyncMongoClient

from worker.faults import GaveUpFault, UsageFault
from worker.kafka.access import KafkaAccessError, client_security, describe_refusal
from worker.runtime.metrics_server import serve_waiting
from worker.runtime.retry import backoff_delays
from worker.settings import Settings

Service = Literal["kafka", "postgres", "mongo"]

#: Exit code of a command that gave up waiting for a service (``replay``/``check`` use 3 alike).
EXIT_UNREACHABLE = 3

#: What each command waits for before it starts.
NEEDS: dict[str, tuple[Service, ...]] = {
    "run": ("kafka",),
    "ledger-sink": ("kafka",),
    "topics": ("kafka",),
    "replay": ("kafka",),
    "migrate": ("postgres", "mongo"),
    "seed-demo": ("postgres", "mongo"),
}

#: The setting to look at when a service never answers.
SETTING: dict[Service, str] = {
    "kafka": "GW_KAFKA_BOOTSTRAP_SERVERS",
    "postgres": "GW_POSTGRES_DSN",
    "mongo": "GW_MONGO_URL",
}

log = structlog.get_logger("worker.startup")


class DependencyUnreachableError(GaveUpFault):
    """A service a command needs did not answer within ``GW_STARTUP_TIMEOUT_S``."""

    def __init__(self, service: Service, address: str, waited_s: float, reason: str) -> None:
        super().__init__(
            f"{service} at {address} did not answer within {waited_s:.0f} s ({reason}); "
            f"check {SETTING[service]} and that the service is up"
        )
        self.service = service
        self.address = address
        self.waited_s = waited_s
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Waiting:
    """One failed probe, as ``/ready`` reports it while a command waits."""

    service: Service
    address: str
    reason: str


def address(settings: Settings, service: Service) -> str:
    """Where ``service`` is looked for, without credentials: safe for a log line."""
    if service == "kafka":
        return settings.kafka_bootstrap_servers
    secret = settings.postgres_dsn if service == "postgres" else settings.mongo_url
    url = secret.get_secret_value()
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
    except ValueError:
        return "(unparsable URL)"
    return netloc or "(default host)"


async def _probe_kafka(settings: Settings, timeout_s: float) -> None:
    admin = AIOKafkaAdminClient(
        bootstrap_servers=settings.kafka_bootstrap_servers,
        request_timeout_ms=int(timeout_s * 1000),
        **client_security(settings),
    )
    quiet = logging.getLogger("aiokafka")  # it logs each refused connection itself
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        await asyncio.wait_for(admin.start(), timeout_s)
    except Exception as exc:
        refusal = describe_refusal(settings, exc)
        if refusal is not None:  # the broker answered and said no: waiting cannot help
            raise KafkaAccessError(refusal) from None
        raise
    finally:
        quiet.setLevel(level)
        await admin.close()


async def _probe_postgres(settings: Settings, timeout_s: float) -> None:
    conn = await asyncpg.connect(settings.postgres_dsn.get_secret_value(), timeout=timeout_s)
    await conn.close()


async def _probe_mongo(settings: Settings, timeout_s: float) -> None:
    ms = max(1, int(timeout_s * 1000))
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
        settings.mongo_url.get_secret_value(),
        serverSelectionTimeoutMS=ms,
        connectTimeoutMS=ms,
        socketTimeoutMS=ms,
    )
    try:
        await client.admin.command("ping")
    finally:
        await client.close()


Probe = Callable[[Settings, float], Awaitable[None]]
PROBES: dict[Service, Probe] = {
    "kafka": _probe_kafka,
    "postgres": _probe_postgres,
    "mongo": _probe_mongo,
}


def _reason(exc: BaseException) -> str:
    """A short reason for a failed probe: the exception's class and first line, no secrets.

    Drivers put host and port in their messages, never the password (asyncpg, PyMongo and
    aiokafka were read for this); the text is cut to one line of at most 160 characters.
    """
    name = type(exc).__name__
    text = str(exc).splitlines()[0] if str(exc) else ""
    text = text.removeprefix(f"{name}: ")
    return f"{name}: {text}"[:160] if text else name


async def wait_for(
    settings: Settings,
    services: Sequence[Service],
    *,
    on_wait: Callable[[Waiting | None], None] | None = None,
    probes: dict[Service, Probe] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Return once every service in ``services`` answered one probe; raise
    :class:`DependencyUnreachableError` once ``settings.startup_timeout_s`` has passed (0: wait
    for ever). ``on_wait`` hears each failed probe, and ``None`` once all answered."""
    probes = probes or PROBES
    timeout = settings.startup_timeout_s
    delay = backoff_delays(1.0, 10.0)
    started = clock()
    for service in services:
        attempt = 0
        while True:
            attempt += 1
            probe_s = min(5.0, settings.store_timeout_s * 2) if service != "kafka" else 5.0
            try:
                await probes[service](settings, probe_s)
                break
            except KafkaAccessError:
                raise  # a refusal (credentials, certificate) is not "not up yet"
            except Exception as exc:  # noqa: BLE001 - any failure to answer is "not up yet"
                reason = _reason(exc)
            waited = clock() - started
            where = address(settings, service)
            if timeout and waited >= timeout:
                raise DependencyUnreachableError(service, where, waited, reason)
            wait = delay(attempt)
            if timeout:
                wait = max(0.0, min(wait, timeout - waited))
            log.warning(
                "startup.waiting",
                dependency=service,
                address=where,
                attempt=attempt,
                reason=reason,
                waited_s=round(waited, 1),
                retry_in_s=round(wait, 1),
                setting=SETTING[service],
            )
            if on_wait is not None:
                on_wait(Waiting(service, where, reason))
            await sleep(wait)
    if on_wait is not None:
        on_wait(None)


#: Commands that serve ``/health`` and ``/ready`` while they run, and so while they wait.
SERVES_PAGES = frozenset({"run", "ledger-sink"})


class WebPortUnavailableError(UsageFault):
    """``GW_WEB_HOST``/``GW_WEB_PORT`` cannot be bound (another process holds the port)."""


def check_web_port(settings: Settings) -> None:
    """Bind the pages' address once and let go, so that a port another process holds ends the
    command with one line naming the setting (exit 2) instead of the web server's traceback
    later. Port 0 (any free port) cannot be taken."""
    host, port = settings.web_host, settings.web_port
    if port == 0:
        return
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            # as aiohttp binds: a port left in TIME_WAIT by the previous process is free
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
    except OSError as exc:
        raise WebPortUnavailableError(
            f"GW_WEB_PORT={port} on GW_WEB_HOST={host} cannot be bound ({_reason(exc)}): another "
            "process holds it? Set GW_WEB_PORT to a free port"
        ) from None


def await_services(settings: Settings, command: str) -> None:
    """Wait for what ``command`` needs (:data:`NEEDS`); raise :class:`DependencyUnreachableError`
    when it gives up. ``run`` and ``ledger-sink`` answer ``/ready`` 503 meanwhile."""
    needs = NEEDS.get(command, ())
    if needs:
        asyncio.run(_await(settings, command, needs))


async def _await(settings: Settings, command: str, needs: Sequence[Service]) -> None:
    waiting: list[str] = []

    def on_wait(state: Waiting | None) -> None:
        waiting[:] = [] if state is None else [f"waiting for {state.service} at {state.address}"]

    if command not in SERVES_PAGES:
        await wait_for(settings, needs, on_wait=on_wait)
        return
    try:
        pages = serve_waiting(settings.web_host, settings.web_port, lambda: list(waiting))
        async with pages:
            await wait_for(settings, needs, on_wait=on_wait)
    except OSError as exc:  # the port is taken: wait without pages, the command will say so
        log.warning("startup.pages_unavailable", port=settings.web_port, reason=_reason(exc))
        await wait_for(settings, needs, on_wait=on_wait)
