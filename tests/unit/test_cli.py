"""The command line as an operator meets it: --version, a bad setting is one clear line, and an
option with a fixed set of values lists them in --help and refuses any other (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer.core
from typer.testing import CliRunner

from worker import __version__, cli
from worker.cli import app
from worker.settings import Settings
from worker.tools import check_cli, replay_cli
from worker.tools.replay_cli import ReplayArgs


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


@pytest.fixture
def plain_help(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A runner whose help and usage errors are click's plain text (``TYPER_USE_RICH=0``), so
    they can be compared exactly; rich's boxes wrap with the terminal's width."""
    monkeypatch.setattr(typer.core, "HAS_RICH", False)
    return CliRunner()


def test_replay_help_lists_every_dead_letter_class(plain_help: CliRunner) -> None:
    result = plain_help.invoke(app, ["replay", "--help"])
    assert result.exit_code == 0
    assert (
        "  --error-class <list[malformed_envelope|unsupported_schema_version|oversized"
        "|identity_mismatch|infra_unavailable|internal_error]>"
    ) in result.stdout.splitlines()


def test_topics_help_lists_its_actions(plain_help: CliRunner) -> None:
    result = plain_help.invoke(app, ["topics", "--help"])
    assert result.exit_code == 0
    assert "  action <create|list|check>  `create` (idempotent), `list`, or `check` (exit 1" in (
        result.stdout.splitlines()
    )


def test_check_help_lists_every_kind(plain_help: CliRunner) -> None:
    result = plain_help.invoke(app, ["check", "--help"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    at = lines.index("  --kind <answer|proposal|report>")
    assert lines[at + 1 : at + 3] == [
        "                                  Bare output: the kind of output.  [default:",
        "                                  answer]",
    ]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["replay", "--error-class", "infra_unavailable", "--error-class", "oops"],
            "Error: Invalid value for '--error-class': Value error, 'oops' is not one of"
            " 'malformed_envelope', 'unsupported_schema_version', 'oversized',"
            " 'identity_mismatch', 'infra_unavailable', 'internal_error'.",
        ),
        (
            ["topics", "nope", "--json"],
            "Error: Invalid value for 'action': Value error, 'nope' is not one of 'create',"
            " 'list', 'check'.",
        ),
        (
            ["check", "--tenant", "acme", "--user", "u-ana", "--kind", "memo", "draft.json"],
            "Error: Invalid value for '--kind': Value error, 'memo' is not one of 'answer',"
            " 'proposal', 'report'.",
        ),
    ],
)
def test_a_value_outside_the_choices_is_a_usage_error_naming_them(
    plain_help: CliRunner, args: list[str], error: str
) -> None:
    result = plain_help.invoke(app, args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == error


def test_replay_hands_the_chosen_classes_over_as_their_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[ReplayArgs] = []

    def fake_run(settings: object, args: ReplayArgs, **_: object) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(cli, "kafka_settings", lambda command: Settings())
    monkeypatch.setattr(replay_cli, "run_replay_command", fake_run)
    args = ["replay", "--error-class", "internal_error", "--error-class", "oversized"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert [list(a.error_classes) for a in seen] == [["internal_error", "oversized"]]
    assert {type(c) for c in seen[0].error_classes} == {str}


def test_check_hands_the_chosen_kind_over_as_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []

    def fake_check(settings: object, **kwargs: object) -> int:
        seen.append(kwargs["kind"])
        return 0

    monkeypatch.setattr(check_cli, "run_check", fake_check)
    result = CliRunner().invoke(app, ["check", "--kind", "report", "draft.json"])
    assert result.exit_code == 0, result.output
    assert seen == ["report"]
    assert type(seen[0]) is str
