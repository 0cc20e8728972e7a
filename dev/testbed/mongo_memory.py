"""An optional second MongoDB-protocol server: mongo-java-server's in-memory backend, jars from
Maven Central via dev/testbed/services/mongo-java-server/pom.xml, run from source (Launcher.java).

Not part of `up`: the tests run against FerretDB (``dev.testbed.mongo``). The benchmark starts this
one when asked (``BENCH_MONGO=memory scripts/bench``) to show what FerretDB's collection scan costs
the worker's latency; it holds nothing on disk, so a restart starts empty.
"""

from __future__ import annotations

from pathlib import Path

from dev.testbed.layout import ROOT, STATE
from dev.testbed.maven import class_path
from dev.testbed.mongo import hello_ok
from dev.testbed.ports import Ports
from dev.testbed.process import (
    await_daemon,
    running_daemon,
    spawn,
    stop_daemon,
)

HOME = STATE / "mongo-memory"
SOURCES = ROOT / "dev/testbed/services/mongo-java-server"


def jars() -> Path:
    """The server's class path, copied from Maven Central once per version of the pom."""
    return class_path("mongo-memory", SOURCES / "pom.xml", "mongo-java-server")


def start(p: Ports) -> None:
    HOME.mkdir(parents=True, exist_ok=True)
    lib = jars()
    log = HOME / "mongo-java-server.log"
    pid = spawn(
        [
            "java", "-Xmx1g", "-cp", str(lib / "*"), str(SOURCES / "Launcher.java"),
            str(p["mongo_memory"]),
        ],
        log,
        cwd=HOME,
    )  # fmt: skip
    await_daemon("mongo-memory", pid, HOME, log, lambda: hello_ok(p["mongo_memory"], b"isMaster"))


def running(p: Ports) -> int | None:
    return running_daemon(HOME, lambda: hello_ok(p["mongo_memory"], b"isMaster"))


def stop(p: Ports) -> None:
    stop_daemon(HOME)
