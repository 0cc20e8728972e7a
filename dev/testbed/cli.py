"""The command line of ``python -m dev.testbed`` (and of ``scripts/services``, which runs it).

Arguments are checked before the state directory's lock is taken, so a usage error neither
waits for another invocation nor creates ``.services/``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NamedTuple

from dev.testbed import bed
from dev.testbed.layout import OPTIONAL_SERVICES, SERVICES, ServiceError, locked, say
from dev.testbed.ports import ports

USAGE = """\
Start, stop and describe the test bed's servers: Kafka, PostgreSQL and a MongoDB-protocol server.

usage: scripts/services COMMAND [SERVICE]

  up                 fetch/build what is missing, then start every service not yet running
  down               stop every service; no process is left behind (data is kept)
  status             tell what runs, on which port, with which pid
  env                print the connection settings as shell `export` lines
  stop SERVICE       stop one service (kafka | postgres | mongo | mongo-memory), keeping its data
                     and port
  start SERVICE      start one service again on the same port with the same data (or, for
                     mongo-memory, at all: `up` leaves it out)
  clean              `down`, then delete all state (data, logs) of this checkout's test bed

Services (all on 127.0.0.1). Ports are chosen when nothing of this checkout runs: the variable's
value when set, else the default, or the next free one in steps of 10 when another process holds it.

  kafka     Apache Kafka 4.1 (KRaft, one combined broker + controller), jars from Maven Central
            via dev/testbed/services/kafka/pom.xml.            TESTBED_KAFKA_PORT (19092),
                                                   TESTBED_KAFKA_CONTROLLER_PORT (19093)
            plus a SASL_SSL listener (PLAIN, SCRAM-SHA-256/512) with a CA, broker and client
            certificates made here with openssl and a SCRAM user made with Kafka's own
            ConfigCommand (kafka-configs).         TESTBED_KAFKA_SECURE_PORT (19094)
  postgres  PostgreSQL from Debian's packages, a throwaway cluster with trust auth on loopback,
            database `grounding`.                  TESTBED_POSTGRES_PORT (15432)
  mongo     FerretDB 1.24 on SQLite, built from dev/testbed/services/ferretdb (Go module proxy).
                                                   TESTBED_MONGO_PORT (27018)
  mongo-memory  optional, not started by `up`: mongo-java-server's in-memory backend, jars from
            Maven Central (dev/testbed/services/mongo-java-server); answers a find by _id without
            FerretDB's collection scan (for `BENCH_MONGO=memory scripts/bench`); keeps nothing
            on disk.                               TESTBED_MONGO_MEMORY_PORT (27038)

State, pids and logs live in .services/ in the repository root. Downloads and builds are cached in
~/.cache/grounding-worker/ (plus Maven's ~/.m2 and Go's caches), so a warm `up` takes seconds.
Only the standard library is used: this runs before the virtualenv exists.
"""


class Command(NamedTuple):
    """A parsed command line: the command and, for `start`/`stop`, the one service it names."""

    name: str
    service: str | None = None


class UsageError(Exception):
    """The command line is not one the bed knows; the message is what to print."""


WHOLE_BED: dict[str, Callable[[], int]] = {
    "up": bed.up,
    "down": bed.down,
    "status": bed.status,
    "clean": bed.clean,
}


def parse(argv: list[str]) -> Command:
    """The command `argv` asks for, or UsageError with the text to print."""
    command, rest = argv[0], argv[1:]
    if command in {"start", "stop"}:
        known = SERVICES + OPTIONAL_SERVICES
        if len(rest) != 1 or rest[0] not in known:
            raise UsageError(f"usage: scripts/services {command} {'|'.join(known)}")
        return Command(command, rest[0])
    if rest or (command != "env" and command not in WHOLE_BED):
        raise UsageError(USAGE)
    return Command(command)


def dispatch(cmd: Command) -> int:
    if cmd.name == "start" and cmd.service:
        bed.start_one(cmd.service, bed.ports_for_start())
        return 0
    if cmd.name == "stop" and cmd.service:
        bed.stop_one(cmd.service, ports())
        return 0
    if cmd.name == "env":
        print("\n".join(bed.env_lines(ports())))
        return 0
    return WHOLE_BED[cmd.name]()


def main(argv: list[str]) -> int:
    """Run one command; the exit status: 0 done, 2 usage error, 3 `status` found a service down."""
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(USAGE)
        return 0 if argv else 2
    try:
        cmd = parse(argv)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    with locked():
        return dispatch(cmd)


def run() -> int:
    """`main` on the process's arguments, with a service fault as a one-line error and exit 1."""
    try:
        return main(sys.argv[1:])
    except ServiceError as exc:
        say(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
