"""The command line as an operator meets it: --version, and a bad setting is one clear line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from worker import __version__


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GW_")}
    return subprocess.run(
        [sys.executable, "-m", "worker.cli", *args],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0
    assert done.stdout == f"grounding-worker {__version__}\n"


@pytest.mark.parametrize(
    ("variable", "value", "command"),
    [
        ("GW_BATCH_SIZE", "abc", "run"),
        ("GW_BATCH_SIZE", "0", "ledger-sink"),
        ("GW_LOG_LEVEL", "LOUD", "migrate"),
        ("GW_TOPICS__DRAFTS", "", "topics"),
        ("GW_TOPICS", "{not json", "seed-demo"),
        ("GW_RETRY_BUDGET", "-1", "replay"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_variable(
    variable: str, value: str, command: str
) -> None:
    done = run_cli(command, env={variable: value})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"grounding-worker: invalid setting {variable}"), lines[0]
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_bad_setting_never_prints_a_secret_next_to_it() -> None:
    """The line names the variable, never a value: a DSN beside it may hold a password."""
    done = run_cli(
        "migrate", env={"POSTGRES_DSN": "postgresql://u:s3cret-pw@db/x", "GW_BATCH_SIZE": "x"}
    )
    assert done.returncode == 2
    assert "s3cret-pw" not in done.stderr
    assert "'x'" not in done.stderr
