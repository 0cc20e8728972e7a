"""The worker, the ledger sink inside it and ``replay`` over the bed's SASL_SSL listener.

``scripts/services`` gives the test bed's broker a second listener, SASL_SSL, with certificates
it made with openssl and a SCRAM user it made with Kafka's ConfigCommand; ``scripts/services env``
exports where it is (``TESTBED_KAFKA_SASL_SSL_SERVERS`` and friends). The processes under test
talk only to that listener; the test's own bus reads and writes the same topics over the plain
one. Wrong credentials end a command at once with one line naming the settings.
"""

# Waits take a plain `timeout=` (seconds), as in the harness.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable

import pytest

from dev.harness import Bus, WorkerProcess, answer, draft, running, topics_env, unique_id

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

SECURE_VARIABLES = (
    "TESTBED_KAFKA_SASL_SSL_SERVERS",
    "TESTBED_KAFKA_SASL_USERNAME",
    "TESTBED_KAFKA_SASL_PASSWORD",
    "TESTBED_KAFKA_CA_FILE",
    "TESTBED_KAFKA_CLIENT_CERT",
    "TESTBED_KAFKA_CLIENT_KEY",
)


@pytest.fixture(scope="module")
def secure() -> dict[str, str]:
    """The SASL_SSL listener of the bed, from ``scripts/services env``."""
    missing = [v for v in SECURE_VARIABLES if not os.environ.get(v)]
    if missing:
        pytest.fail(
            f"{', '.join(missing)} unset: export what `scripts/services env` prints (a bed "
            "started before its SASL_SSL listener existed needs `scripts/services stop kafka` "
            "and `scripts/services start kafka` once)",
            pytrace=False,
        )
    return {v: os.environ[v] for v in SECURE_VARIABLES}


def security_env(secure: dict[str, str], mechanism: str, **overrides: str) -> dict[str, str]:
    """Settings for a process that talks to Kafka only over SASL_SSL."""
    return {
        "KAFKA_BOOTSTRAP_SERVERS": secure["TESTBED_KAFKA_SASL_SSL_SERVERS"],
        "GW_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
        "GW_KAFKA_SASL_MECHANISM": mechanism,
        "GW_KAFKA_SASL_USERNAME": secure["TESTBED_KAFKA_SASL_USERNAME"],
        "GW_KAFKA_SASL_PASSWORD": secure["TESTBED_KAFKA_SASL_PASSWORD"],
        "GW_KAFKA_SSL_CAFILE": secure["TESTBED_KAFKA_CA_FILE"],
        **overrides,
    }


@pytest.fixture(scope="module")
async def wb(
    new_worker: Callable[..., WorkerProcess], secure: dict[str, str]
) -> AsyncIterator[tuple[WorkerProcess, Bus]]:
    """A worker over SCRAM-SHA-512 with a client certificate (mutual TLS)."""
    env = security_env(
        secure,
        "SCRAM-SHA-512",
        GW_KAFKA_SSL_CERTFILE=secure["TESTBED_KAFKA_CLIENT_CERT"],
        GW_KAFKA_SSL_KEYFILE=secure["TESTBED_KAFKA_CLIENT_KEY"],
    )
    async with running(new_worker("secure", env=env)) as pair:
        yield pair


async def cli(
    worker: WorkerProcess, env: dict[str, str], *args: str, timeout: float = 90
) -> tuple[int, str, str, float]:
    """``grounding-worker ARGS`` on the worker's topics with ``env``; (code, out, err, seconds)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("GW_")}
    full |= {"GW_APP_ID": worker.app_id, **topics_env(worker.topics), **env}
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "worker.cli",
        *args,
        env=full,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode(), time.monotonic() - started


async def test_the_worker_decides_drafts_over_sasl_ssl(wb: tuple[WorkerProcess, Bus]) -> None:
    worker, bus = wb
    turn = unique_id("t-secure")
    await bus.send(draft(turn, answer("Latency rose after the deploy [OBS-1001].")))
    (ok,) = await bus.wait_for("validated", key=turn, timeout=60)
    assert ok.json()["status"] == "grounded"
    (ledger,) = await bus.wait_for("ledger", key=turn)
    assert ledger.json()["outcome"] == "grounded"
    # The worker logs never carry the secrets it was given.
    logs = worker.log_text()
    assert os.environ["TESTBED_KAFKA_SASL_PASSWORD"] not in logs


async def test_replay_runs_over_sasl_ssl(
    wb: tuple[WorkerProcess, Bus], secure: dict[str, str]
) -> None:
    """A dead letter replayed with SCRAM-SHA-256 reaches the worker (and is dead-lettered again,
    replay count 1: it is still unusable)."""
    worker, bus = wb
    turn = unique_id("t-secure-replay")
    await bus.send(draft(turn, answer("Latency rose [OBS-1001]."), schema_version=99))
    (first,) = await bus.wait_for("dlq", key=turn)
    assert first.header("dlq.error.class") == b"unsupported_schema_version"
    env = security_env(secure, "SCRAM-SHA-256")
    code, out, err, _ = await cli(
        worker, env, "replay", "--json", "--error-class", "unsupported_schema_version"
    )
    assert code == 0, err
    assert json.loads(out)["replayed"] == 1
    again = await bus.wait_for("dlq", key=turn, count=2, timeout=60)
    assert again[1].header("dlq.replay.count") == b"1"


async def test_topics_over_sasl_plain(
    wb: tuple[WorkerProcess, Bus], secure: dict[str, str]
) -> None:
    worker, _ = wb
    code, out, err, _ = await cli(worker, security_env(secure, "PLAIN"), "topics", "list")
    assert code == 0, err
    assert f"ok      {worker.topics.drafts}" in out.splitlines()


@pytest.mark.parametrize(
    ("command", "mechanism"),
    [
        (("run",), "SCRAM-SHA-512"),
        (("replay", "--dry-run"), "SCRAM-SHA-256"),
        (("ledger-sink",), "PLAIN"),
        (("topics", "list"), "SCRAM-SHA-512"),
    ],
)
async def test_a_wrong_password_is_one_clear_line_not_a_hang(
    wb: tuple[WorkerProcess, Bus], secure: dict[str, str], command: tuple[str, ...], mechanism: str
) -> None:
    worker, _ = wb
    env = security_env(secure, mechanism, GW_KAFKA_SASL_PASSWORD="not-the-password")
    code, out, err, seconds = await cli(worker, env, *command, timeout=60)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("grounding-worker: Kafka rejected the SASL credentials"), lines
    assert "GW_KAFKA_SASL_PASSWORD" in lines[0]
    assert "not-the-password" not in err
    assert out == ""
    assert seconds < 30


async def test_an_untrusted_broker_certificate_is_one_clear_line(
    wb: tuple[WorkerProcess, Bus], secure: dict[str, str]
) -> None:
    worker, _ = wb
    other_ca = "/etc/ssl/certs/ca-certificates.crt"
    env = security_env(secure, "SCRAM-SHA-512", GW_KAFKA_SSL_CAFILE=other_ca)
    code, _, err, _ = await cli(worker, env, "run", timeout=60)
    assert code == 2, err
    (line,) = err.strip().splitlines()
    assert "GW_KAFKA_SSL_CAFILE" in line
    assert "certificate" in line


async def test_sasl_without_tls_to_a_tls_listener_is_named(
    wb: tuple[WorkerProcess, Bus], secure: dict[str, str]
) -> None:
    worker, _ = wb
    env = security_env(secure, "SCRAM-SHA-512", GW_KAFKA_SECURITY_PROTOCOL="SSL")
    code, _, err, _ = await cli(worker, env, "topics", "list", timeout=60)
    assert code == 2, err
    (line,) = err.strip().splitlines()
    assert "GW_KAFKA_SECURITY_PROTOCOL=SSL" in line
