"""Start-up with a service down: every command waits, then ends in one JSON line and exit 3.

Runs the real command line (``python -m worker.cli``) against the real broker and stores, with
the service under test pointed at a port nothing listens on (the client sees what it sees of a
stopped server: connection refused). A service that comes up while the command waits (a TCP relay
to the real server, opened late) lets the command finish normally.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from worker.runtime.startup import EXIT_UNREACHABLE
from worker.settings import Settings

pytestmark = pytest.mark.integration

PASSWORD = "s3cret-startup-pw"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(settings: Settings, bootstrap: str, **down: int) -> dict[str, str]:
    """The environment of a command; each service named in ``down`` points at that dead port."""
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "POSTGRES_DSN": settings.postgres_dsn.get_secret_value(),
        "MONGO_URL": settings.mongo_url.get_secret_value(),
        "GW_STARTUP_TIMEOUT_S": "2",
        "GW_STORE_TIMEOUT_S": "0.5",
        "GW_WEB_PORT": str(_free_port()),
        "GW_DATA_DIR": f"/tmp/gw-startup-{os.getpid()}",
    }
    if "kafka" in down:
        env["KAFKA_BOOTSTRAP_SERVERS"] = f"127.0.0.1:{down['kafka']}"
    if "postgres" in down:
        env["POSTGRES_DSN"] = f"postgresql://gw:{PASSWORD}@127.0.0.1:{down['postgres']}/gw"
    if "mongo" in down:
        env["MONGO_URL"] = f"mongodb://gw:{PASSWORD}@127.0.0.1:{down['mongo']}/"
    return env


def _run(
    args: list[str], env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "worker.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _lines(stderr: str) -> list[dict[str, Any]]:
    """Every stderr line, each of which must be one JSON object."""
    return [orjson.loads(line) for line in stderr.splitlines() if line.strip()]


NEEDED = [
    (["topics", "list"], "kafka"),
    (["replay", "--dry-run"], "kafka"),
    (["ledger-sink"], "kafka"),
    (["run"], "kafka"),
    (["migrate"], "postgres"),
    (["migrate"], "mongo"),
    (["seed-demo"], "postgres"),
    (["seed-demo"], "mongo"),
]


@pytest.mark.parametrize(("args", "down"), NEEDED, ids=[f"{' '.join(a)}-{d}" for a, d in NEEDED])
def test_a_command_whose_service_is_down_waits_then_ends_in_one_json_line_and_exit_3(
    migrated: Settings, kafka_bootstrap: str, args: list[str], down: str
) -> None:
    started = time.monotonic()
    done = _run(args, _env(migrated, kafka_bootstrap, **{down: _free_port()}))
    took = time.monotonic() - started

    assert done.returncode == EXIT_UNREACHABLE, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert PASSWORD not in done.stderr + done.stdout
    assert done.stdout == ""
    lines = _lines(done.stderr)
    last = lines[-1]
    assert last["event"] == "startup.gave_up"
    assert last["level"] == "error"
    assert last["dependency"] == down
    assert last["exit_code"] == EXIT_UNREACHABLE
    assert last["service"] == "grounding-worker"
    assert [ln["event"] for ln in lines[:-1]] == ["startup.waiting"] * (len(lines) - 1)
    assert took < 30  # GW_STARTUP_TIMEOUT_S=2 plus one probe and the interpreter's start


NOT_NEEDED = [
    (["topics", "list"], "postgres"),
    (["topics", "list"], "mongo"),
    (["migrate"], "kafka"),
]


@pytest.mark.parametrize(
    ("args", "down"), NOT_NEEDED, ids=[f"{' '.join(a)}-{d}" for a, d in NOT_NEEDED]
)
def test_a_command_does_not_wait_for_a_service_it_does_not_use(
    migrated: Settings, kafka_bootstrap: str, args: list[str], down: str
) -> None:
    done = _run(args, _env(migrated, kafka_bootstrap, **{down: _free_port()}))

    assert done.returncode == 0, done.stderr[-2000:]
    assert "startup.waiting" not in done.stderr


class Relay:
    """A TCP relay from a local port to a real server, opened only when :meth:`open` is called."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.port = _free_port()
        self._target = target
        self._server: socket.socket | None = None
        self._stop = threading.Event()
        self._open: list[socket.socket] = []

    def open(self) -> None:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(16)
        server.settimeout(0.2)
        self._server = server
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        assert self._server is not None
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(self._target)
            self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.close()
        for sock in self._open:
            sock.close()


@contextlib.contextmanager
def _relay_opened_after(target: tuple[str, int], delay_s: float) -> Iterator[Relay]:
    relay = Relay(target)
    timer = threading.Timer(delay_s, relay.open)
    timer.start()
    try:
        yield relay
    finally:
        timer.cancel()
        relay.close()


def _host_port(url: str) -> tuple[str, int]:
    netloc = url.split("://", 1)[-1].split("/", 1)[0].rpartition("@")[2]
    host, _, port = netloc.rpartition(":")
    return host or "127.0.0.1", int(port)


def test_migrate_waits_for_postgres_and_finishes_once_it_answers(
    migrated: Settings, kafka_bootstrap: str
) -> None:
    dsn = migrated.postgres_dsn.get_secret_value()
    with _relay_opened_after(_host_port(dsn), 3.0) as relay:
        env = _env(migrated, kafka_bootstrap) | {
            "GW_STARTUP_TIMEOUT_S": "60",
            "POSTGRES_DSN": dsn.replace(f":{_host_port(dsn)[1]}/", f":{relay.port}/"),
        }
        done = _run(["migrate"], env)

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("postgres: applied")
    waiting = [ln for ln in _lines(done.stderr) if ln["event"] == "startup.waiting"]
    assert waiting, done.stderr
    assert {ln["dependency"] for ln in waiting} == {"postgres"}


def test_topics_waits_for_the_broker_and_finishes_once_it_answers(
    migrated: Settings, kafka_bootstrap: str
) -> None:
    with _relay_opened_after(_host_port(f"kafka://{kafka_bootstrap}"), 3.0) as relay:
        env = _env(migrated, kafka_bootstrap, kafka=relay.port) | {"GW_STARTUP_TIMEOUT_S": "60"}
        done = _run(["topics", "list"], env)

    assert done.returncode == 0, done.stderr[-2000:]
    waiting = [ln for ln in _lines(done.stderr) if ln["event"] == "startup.waiting"]
    assert waiting
    assert {ln["dependency"] for ln in waiting} == {"kafka"}


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status, orjson.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, orjson.loads(exc.read())


def test_the_worker_is_alive_and_not_ready_while_it_waits_for_the_broker(
    migrated: Settings, kafka_bootstrap: str
) -> None:
    dead = _free_port()
    env = _env(migrated, kafka_bootstrap, kafka=dead) | {"GW_STARTUP_TIMEOUT_S": "8"}
    port = env["GW_WEB_PORT"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "worker.cli", "run"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        answer: tuple[int, Any] | None = None
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and answer is None:
            with contextlib.suppress(urllib.error.URLError, ConnectionError):
                answer = _get(f"http://127.0.0.1:{port}/ready")
            time.sleep(0.2)
        assert answer == (
            503,
            {"ready": False, "reasons": [f"waiting for kafka at 127.0.0.1:{dead}"]},
        )
        status, body = _get(f"http://127.0.0.1:{port}/health")
        assert (status, body["status"]) == (200, "starting")
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == EXIT_UNREACHABLE
    assert _lines(stderr)[-1]["event"] == "startup.gave_up"
