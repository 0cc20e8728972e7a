"""An optional second MongoDB-protocol server: mongo-java-server's in-memory backend, jars from
Maven Central via services/mongo-java-server/pom.xml, run from source (Launcher.java).

Not part of `up`: the tests run against FerretDB (``testbed.mongo``). The benchmark starts this one
when asked (``BENCH_MONGO=memory scripts/bench``) to show what FerretDB's collection scan costs
the worker's latency; it holds nothing on disk, so a restart starts empty.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from testbed.cache import digest
from testbed.layout import CACHE, ROOT, STATE, say
from testbed.mongo import hello_ok
from testbed.ports import Ports
from testbed.process import (
    await_daemon,
    require_tool,
    run,
    running_daemon,
    spawn,
    stop_daemon,
)

HOME = STATE / "mongo-memory"
SOURCES = ROOT / "services/mongo-java-server"


def jars() -> Path:
    """The server's class path, copied from Maven Central once per version of the pom."""
    pom = SOURCES / "pom.xml"
    lib = CACHE / f"mongo-java-server-{digest(pom)}" / "lib"
    if (lib / ".complete").exists():
        return lib
    require_tool("mvn", "maven")
    require_tool("java", "openjdk-17-jre-headless")
    say("mongo-memory: fetching mongo-java-server's jars with Maven (cached afterwards)")
    tmp = lib.with_name("lib.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    run(
        [
            "mvn", "-B", "-q", "-f", str(pom), "dependency:copy-dependencies",
            f"-DoutputDirectory={tmp}", "-DincludeScope=runtime",
        ]
    )  # fmt: skip
    (tmp / ".complete").touch()
    shutil.rmtree(lib, ignore_errors=True)
    tmp.rename(lib)
    return lib


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
