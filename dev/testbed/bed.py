"""The test bed as a whole: start, stop and describe each service through one table.

Each service module (kafka, postgres, mongo) has the same face: ``start(ports)``,
``stop(ports)`` and ``running(ports)`` (its pid, or None). This module holds what is common:
refuse a port someone else holds, the SCRAM user Kafka needs, timing, and the `export` lines.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from typing import NamedTuple

from dev.testbed import kafka, mongo, mongo_memory, postgres
from dev.testbed.layout import OPTIONAL_SERVICES, SERVICES, STATE, ServiceError, say
from dev.testbed.net import port_free, port_open
from dev.testbed.ports import PORT_ENV, Ports, choose_ports, ports


class Service(NamedTuple):
    """What the bed does with one service."""

    start: Callable[[Ports], None]
    stop: Callable[[Ports], None]
    #: Its pid when it runs and answers, else None.
    running: Callable[[Ports], int | None]
    #: The key of its main (client) port in `Ports`.
    port_key: str


TABLE = {
    "kafka": Service(kafka.start, kafka.stop, kafka.running, "kafka"),
    "postgres": Service(postgres.start, postgres.stop, postgres.running, "postgres"),
    "mongo": Service(mongo.start, mongo.stop, mongo.running, "mongo"),
    "mongo-memory": Service(
        mongo_memory.start, mongo_memory.stop, mongo_memory.running, "mongo_memory"
    ),
}


def ports_for_start() -> Ports:
    """The recorded ports while anything of this bed runs, else ports chosen afresh."""
    p = ports()
    if any(TABLE[name].running(p) for name in SERVICES + OPTIONAL_SERVICES):
        return p
    return choose_ports()


def start_one(name: str, p: Ports) -> None:
    t0 = time.monotonic()
    service = TABLE[name]
    pid = service.running(p)
    if pid:
        say(f"{name}: already running (pid {pid}, port {p[service.port_key]})")
        if name == "kafka":
            kafka.add_scram_user(p)
        return
    port = p[service.port_key]
    if port_open(port) or not port_free(port):
        raise ServiceError(
            f"{name}: port {port} is taken by a process this test bed did not start; "
            f"stop it or choose another port with {PORT_ENV[service.port_key]}="
        )
    say(f"{name}: starting on 127.0.0.1:{port}")
    service.start(p)
    if name == "kafka":
        kafka.add_scram_user(p)
    say(f"{name}: up in {time.monotonic() - t0:.1f}s")


def stop_one(name: str, p: Ports) -> None:
    t0 = time.monotonic()
    service = TABLE[name]
    service.stop(p)
    if service.running(p):
        raise ServiceError(f"{name}: still running after stop")
    say(f"{name}: stopped ({time.monotonic() - t0:.1f}s)")


def env_lines(p: Ports) -> list[str]:
    """The connection settings as shell `export` lines (what `scripts/services env` prints)."""
    return [
        f"export KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:{p['kafka']}",
        f"export POSTGRES_DSN=postgresql://postgres@127.0.0.1:{p['postgres']}/grounding",
        f"export MONGO_URL=mongodb://127.0.0.1:{p['mongo']}/",
        f"export MONGO_MEMORY_URL=mongodb://127.0.0.1:{p['mongo_memory']}/",
        *kafka.secure_env(p),
    ]


def up() -> int:
    p = ports_for_start()
    t0 = time.monotonic()
    for name in SERVICES:
        start_one(name, p)
    say(f"all services up in {time.monotonic() - t0:.1f}s; `scripts/services env` prints settings")
    return 0


def down() -> int:
    p = ports()
    for name in OPTIONAL_SERVICES:
        if TABLE[name].running(p):
            stop_one(name, p)
    for name in reversed(SERVICES):
        stop_one(name, p)
    return 0


def status_line(name: str, pid: int | None, port: int) -> str:
    where = f"127.0.0.1:{port}"
    return f"{name:13} {'running' if pid else 'stopped':8} {where:16} pid {pid or '-'}"


def status() -> int:
    """One line per service (an optional one only while it runs); exit status 3 when any of
    ``up``'s services is stopped."""
    p = ports()
    down_count = 0
    for name in SERVICES + OPTIONAL_SERVICES:
        service = TABLE[name]
        pid = service.running(p)
        if pid is None and name in OPTIONAL_SERVICES:
            continue
        print(status_line(name, pid, p[service.port_key]))
        down_count += pid is None
    return 0 if down_count == 0 else 3


def clean() -> int:
    down()
    link = STATE / "postgres"
    target = link.resolve() if link.is_symlink() else None
    if target:
        shutil.rmtree(target, ignore_errors=True)
    shutil.rmtree(STATE, ignore_errors=True)
    say("state removed (caches in ~/.cache/grounding-worker are kept)")
    return 0
