"""Session fixtures that provide the three servers the integration and e2e tests talk to.

Each comes, in this order, from its environment variable (what `scripts/services env` prints and
`scripts/test` exports), from a throwaway container when a Docker engine answers, or the test fails:
a test that needs a server never skips silently.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

KAFKA_IMAGE = "apache/kafka:4.1.1"
POSTGRES_IMAGE = "postgres:15"
MONGO_IMAGE = "mongo:7"

HOW_TO_START = (
    "start the test bed with `scripts/services up` and export what `scripts/services env` prints "
    "(or run `scripts/test`, which does both)"
)


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """Kafka bootstrap servers, `host:port[,host:port]`."""
    if servers := os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        host, _, port = servers.split(",")[0].rpartition(":")
        _check_answers("KAFKA_BOOTSTRAP_SERVERS", servers, host, int(port))
        yield servers
        return
    _require_docker("KAFKA_BOOTSTRAP_SERVERS")
    with _kafka_container() as servers:
        yield servers


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """libpq URL of a database the tests may create tables in."""
    if dsn := os.environ.get("POSTGRES_DSN"):
        url = urlsplit(dsn)
        _check_answers("POSTGRES_DSN", dsn, url.hostname or "127.0.0.1", url.port or 5432)
        yield dsn
        return
    _require_docker("POSTGRES_DSN")
    from testcontainers.community.postgres import PostgresContainer  # noqa: PLC0415 lazy

    container = PostgresContainer(
        POSTGRES_IMAGE, username="postgres", password="postgres", dbname="grounding", driver=None
    )
    with container:
        yield container.get_connection_url()


@pytest.fixture(scope="session")
def mongo_url() -> Iterator[str]:
    """MongoDB connection URL (a FerretDB server under `scripts/services`)."""
    if url := os.environ.get("MONGO_URL"):
        parts = urlsplit(url)
        _check_answers("MONGO_URL", url, parts.hostname or "127.0.0.1", parts.port or 27017)
        yield url
        return
    _require_docker("MONGO_URL")
    from testcontainers.community.mongodb import MongoDbContainer  # noqa: PLC0415 lazy

    with MongoDbContainer(MONGO_IMAGE) as container:
        yield container.get_connection_url()


def _check_answers(variable: str, value: str, host: str, port: int) -> None:
    """Fail at once with a useful message rather than after a client's long retry loop."""
    try:
        with socket.create_connection((host, port), timeout=3):
            pass
    except OSError as exc:
        pytest.fail(f"{variable}={value} does not answer ({exc}); {HOW_TO_START}", pytrace=False)


@functools.cache
def _docker_answers() -> bool:
    """Ping the engine's API with the stdlib: the Docker SDK leaks a socket when none answers."""
    where = urlsplit(os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"))
    if where.scheme not in {"unix", "tcp"} or os.environ.get("DOCKER_TLS_VERIFY"):
        return True  # ssh:// or TLS: let testcontainers try and report
    try:
        if where.scheme == "unix":
            sock = socket.socket(socket.AF_UNIX)
            address: str | tuple[str, int] = where.path
        else:
            sock = socket.socket()
            address = (where.hostname or "", where.port or 2375)
        with sock:
            sock.settimeout(3)
            sock.connect(address)
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            return sock.recv(64).startswith((b"HTTP/1.0 200", b"HTTP/1.1 200"))
    except OSError:
        return False


def _require_docker(variable: str) -> None:
    if not _docker_answers():
        pytest.fail(
            f"{variable} is not set and no Docker engine answers: {HOW_TO_START}", pytrace=False
        )


@contextlib.contextmanager
def _kafka_container() -> Iterator[str]:
    """One KRaft broker + controller. The advertised address must be the one the host reaches,
    so the broker port is bound to a fixed free host port chosen up front."""
    from testcontainers.core.container import DockerContainer  # noqa: PLC0415 lazy
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy  # noqa: PLC0415

    with socket.socket() as s:
        s.bind(("", 0))
        port = s.getsockname()[1]
    container = DockerContainer(KAFKA_IMAGE).with_bind_ports(9092, port)
    host = container.get_docker_client().host()
    container.with_envs(
        KAFKA_NODE_ID="1",
        KAFKA_PROCESS_ROLES="broker,controller",
        KAFKA_LISTENERS="PLAINTEXT://:9092,CONTROLLER://:9093",
        KAFKA_ADVERTISED_LISTENERS=f"PLAINTEXT://{host}:{port}",
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        KAFKA_CONTROLLER_LISTENER_NAMES="CONTROLLER",
        KAFKA_CONTROLLER_QUORUM_VOTERS="1@localhost:9093",
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR="1",
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR="1",
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR="1",
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS="0",
        KAFKA_MESSAGE_MAX_BYTES="8388608",
        KAFKA_REPLICA_FETCH_MAX_BYTES="8388608",
    ).waiting_for(LogMessageWaitStrategy("Kafka Server started"))
    with container:
        yield f"{host}:{port}"
