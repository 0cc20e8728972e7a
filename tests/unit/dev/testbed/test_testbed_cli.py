"""The command line of the test bed: parsing, help and exit codes, through the package and through
the thin ``scripts/services`` entry point. No server is started here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dev.testbed import cli

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["up"], cli.Command("up")),
        (["env"], cli.Command("env")),
        (["status"], cli.Command("status")),
        (["stop", "kafka"], cli.Command("stop", "kafka")),
        (["start", "mongo"], cli.Command("start", "mongo")),
    ],
)
def test_known_commands_parse(argv: list[str], expected: cli.Command) -> None:
    assert cli.parse(argv) == expected


@pytest.mark.parametrize("argv", [["stop"], ["stop", "redis"], ["start", "kafka", "mongo"]])
def test_start_and_stop_name_exactly_one_known_service(argv: list[str]) -> None:
    with pytest.raises(cli.UsageError) as caught:
        cli.parse(argv)
    names = "kafka|postgres|mongo|mongo-memory"
    assert str(caught.value) == f"usage: scripts/services {argv[0]} {names}"


@pytest.mark.parametrize("argv", [["bogus"], ["env", "extra"], ["up", "kafka"]])
def test_anything_else_is_answered_with_the_usage(argv: list[str]) -> None:
    with pytest.raises(cli.UsageError) as caught:
        cli.parse(argv)
    assert str(caught.value) == cli.USAGE


def test_help_prints_the_usage_and_no_arguments_is_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["--help"]) == 0
    assert capsys.readouterr().out == cli.USAGE + "\n"
    assert cli.main([]) == 2


def test_a_usage_error_takes_no_lock(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong command line must not wait behind another invocation's lock."""

    def no_lock() -> None:
        raise AssertionError("locked() called")

    monkeypatch.setattr(cli, "locked", no_lock)
    assert cli.main(["stop", "redis"]) == 2
    names = "kafka|postgres|mongo|mongo-memory"
    assert capsys.readouterr().err == f"usage: scripts/services stop {names}\n"


def test_the_entry_point_runs_the_package_from_any_directory(tmp_path: Path) -> None:
    """``scripts/services`` keeps its CLI: same help, same exit codes, wherever it is called."""
    script = str(ROOT / "scripts" / "services")
    shown = subprocess.run(
        [sys.executable, script, "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (shown.returncode, shown.stdout) == (0, cli.USAGE + "\n")
    wrong = subprocess.run(
        [sys.executable, script, "start", "redis"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (wrong.returncode, wrong.stdout) == (2, "")
    assert wrong.stderr == "usage: scripts/services start kafka|postgres|mongo|mongo-memory\n"
