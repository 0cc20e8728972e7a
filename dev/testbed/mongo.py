"""A MongoDB-protocol server: FerretDB 1.24 on SQLite, built from dev/testbed/services/ferretdb
with the Go module proxy, once per version of its sources and of Go."""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

from dev.testbed.cache import digest
from dev.testbed.layout import CACHE, ROOT, STATE, say
from dev.testbed.net import recv_exact
from dev.testbed.ports import Ports
from dev.testbed.process import (
    await_daemon,
    require_tool,
    run,
    running_daemon,
    spawn,
    stop_daemon,
)

HOME = STATE / "mongo"


def ferretdb_binary() -> Path:
    """The wrapper in dev/testbed/services/ferretdb, built once per version of it and of Go."""
    require_tool("go", "golang")
    src = ROOT / "dev/testbed/services/ferretdb"
    go_version = run(["go", "env", "GOVERSION"]).strip()
    tag = digest(src / "go.mod", src / "go.sum", src / "main.go", extra=go_version)
    binary = CACHE / f"ferretdb-{tag}" / "ferretdb-testbed"
    if binary.exists():
        return binary
    say("mongo: building FerretDB with the Go module proxy (cached afterwards)")
    binary.parent.mkdir(parents=True, exist_ok=True)
    tmp = binary.with_suffix(".partial")
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=readonly -buildvcs=false"}
    run(
        ["go", "build", "-trimpath", "-tags", "ferretdb_no_postgresql", "-o", str(tmp), "."],
        cwd=src,
        env=env,
    )
    tmp.rename(binary)
    return binary


def hello_request(command: bytes = b"hello") -> bytes:
    """OP_MSG {<command>: 1, $db: admin}, as the server reads it off the wire."""
    doc = bson_doc(
        b"\x10" + command + b"\x00" + struct.pack("<i", 1) + b"\x02$db\x00" + bson_str(b"admin")
    )
    msg = struct.pack("<I", 0) + b"\x00" + doc
    header = struct.pack("<iiii", 16 + len(msg), 1, 0, 2013)
    return header + msg


def hello_ok(port: int, command: bytes = b"hello") -> bool:
    """Send OP_MSG {<command>: 1, $db: admin} and check for ok: 1 in the reply (a double, or
    an int32 as mongo-java-server answers; it knows ``isMaster`` but not ``hello``)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.settimeout(2)
            s.sendall(hello_request(command))
            size = struct.unpack("<i", recv_exact(s, 4))[0]
            body = recv_exact(s, size - 4)
    except (OSError, struct.error):
        return False
    return (
        b"\x01ok\x00\x00\x00\x00\x00\x00\x00\xf0?" in body or b"\x10ok\x00\x01\x00\x00\x00" in body
    )


def bson_str(b: bytes) -> bytes:
    return struct.pack("<i", len(b) + 1) + b + b"\x00"


def bson_doc(elements: bytes) -> bytes:
    return struct.pack("<i", len(elements) + 5) + elements + b"\x00"


def start(p: Ports) -> None:
    (HOME / "data").mkdir(parents=True, exist_ok=True)
    binary = ferretdb_binary()
    log = HOME / "ferretdb.log"
    pid = spawn(
        [
            str(binary), "-listen", f"127.0.0.1:{p['mongo']}",
            "-sqlite-url", f"file:{HOME / 'data'}/",
        ],
        log,
        cwd=HOME,
    )  # fmt: skip
    await_daemon("mongo", pid, HOME, log, lambda: hello_ok(p["mongo"]))


def running(p: Ports) -> int | None:
    return running_daemon(HOME, lambda: hello_ok(p["mongo"]))


def stop(p: Ports) -> None:
    stop_daemon(HOME)
