"""Start-up faults a retry cannot fix end in one line naming the setting and exit 2, at once:
the pages' port held by another process, a port number out of range, and a security protocol
the broker's listener does not speak (either direction).

Runs the real command line against the real broker: its plaintext listener and its SASL_SSL
listener (``scripts/services env`` exports where that one is).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from dev.harness import free_port

pytestmark = pytest.mark.integration

EXIT_USAGE = 2


def _run(args: list[str], **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GW_")}
    full |= {
        "GW_STARTUP_TIMEOUT_S": "60",
        "GW_WEB_PORT": str(free_port()),
        "GW_DATA_DIR": f"/tmp/gw-startup-faults-{os.getpid()}",
        **env,
    }
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "worker.cli", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done, time.monotonic() - started


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == EXIT_USAGE, done.stderr[-3000:]
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("grounding-worker: "), lines
    return lines[0]


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port another process (here: this one) listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])


@pytest.mark.parametrize("command", [["run"], ["ledger-sink"]])
def test_a_web_port_another_process_holds_is_one_line_naming_gw_web_port(
    kafka_bootstrap: str, held_port: int, command: list[str]
) -> None:
    done, took = _run(command, KAFKA_BOOTSTRAP_SERVERS=kafka_bootstrap, GW_WEB_PORT=str(held_port))
    line = _one_line(done)
    assert f"GW_WEB_PORT={held_port} on GW_WEB_HOST=127.0.0.1 cannot be bound" in line
    assert "Address already in use" in line
    assert took < 30


def test_a_port_number_out_of_range_is_one_line_naming_gw_web_port(kafka_bootstrap: str) -> None:
    done, _ = _run(["run"], KAFKA_BOOTSTRAP_SERVERS=kafka_bootstrap, GW_WEB_PORT="99999")
    line = _one_line(done)
    assert "GW_WEB_PORT" in line
    assert "65535" in line
    assert "Traceback" not in done.stderr


@pytest.fixture
def secure_servers() -> str:
    servers = os.environ.get("TESTBED_KAFKA_SASL_SSL_SERVERS")
    if not servers:
        pytest.fail("TESTBED_KAFKA_SASL_SSL_SERVERS unset: export `scripts/services env`")
    return servers


def test_plaintext_to_a_tls_listener_is_one_line_naming_the_protocol(secure_servers: str) -> None:
    done, took = _run(
        ["run"], KAFKA_BOOTSTRAP_SERVERS=secure_servers, GW_KAFKA_SECURITY_PROTOCOL="PLAINTEXT"
    )
    line = _one_line(done)
    assert f"the broker at {secure_servers} closed the connection" in line
    assert "GW_KAFKA_SECURITY_PROTOCOL=PLAINTEXT match its listener?" in line
    assert took < 30


def test_tls_to_a_plaintext_listener_is_one_line_naming_the_protocol(
    kafka_bootstrap: str,
) -> None:
    done, took = _run(
        ["run"],
        KAFKA_BOOTSTRAP_SERVERS=kafka_bootstrap,
        GW_KAFKA_SECURITY_PROTOCOL="SASL_SSL",
        GW_KAFKA_SASL_MECHANISM="SCRAM-SHA-512",
        GW_KAFKA_SASL_USERNAME="gw-test",
        GW_KAFKA_SASL_PASSWORD="irrelevant-pw",
        GW_KAFKA_SSL_CAFILE=os.environ.get("TESTBED_KAFKA_CA_FILE", ""),
    )
    line = _one_line(done)
    assert "reset the TLS handshake, as a plaintext listener does" in line
    assert "GW_KAFKA_SECURITY_PROTOCOL=SASL_SSL match its listener?" in line
    assert "irrelevant-pw" not in done.stderr
    assert took < 30
