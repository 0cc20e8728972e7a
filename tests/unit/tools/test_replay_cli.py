"""``replay``'s options into a run, or into usage errors (exit 2) before anything is read."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest

from worker.settings import Settings
from worker.tools.replay import EXIT_USAGE
from worker.tools.replay_cli import ReplayArgs, UsageError, replay_options, run_replay_command

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
CLASSES = ["infra_unavailable", "internal_error"]


def test_options_default_the_max_replay_count_to_the_settings() -> None:
    args = ReplayArgs(error_classes=["internal_error"], partitions=[2], from_offset=5, since="2h")
    options = replay_options(args, Settings(replay_max_count=7), NOW, CLASSES)
    assert options.max_replays == 7
    assert options.selection.error_classes == frozenset({"internal_error"})
    assert (options.selection.partitions, options.selection.from_offset) == (frozenset({2}), 5)
    assert options.selection.since_ms == int(NOW.timestamp() * 1000) - 2 * 3600 * 1000
    given = replay_options(args._replace(max_replays=0), Settings(replay_max_count=7), NOW, CLASSES)
    assert given.max_replays == 0


@pytest.mark.parametrize(
    ("args", "problems"),
    [
        (ReplayArgs(since="yesterday"), ["'yesterday' is not an RFC 3339 time"]),
        (
            ReplayArgs(error_classes=["oops"], from_offset=1),
            ["unknown --error-class oops", "exactly one --partition"],
        ),
    ],
)
def test_unusable_options_are_usage_errors_each_on_its_line(
    args: ReplayArgs, problems: list[str]
) -> None:
    with pytest.raises(UsageError) as raised:
        replay_options(args, Settings(), NOW, CLASSES)
    assert len(raised.value.problems) == len(problems)
    for got, want in zip(raised.value.problems, problems, strict=True):
        assert want in got
    err = io.StringIO()
    assert run_replay_command(Settings(), args, now=NOW, known_classes=CLASSES, err=err) == (
        EXIT_USAGE
    )
    lines = err.getvalue().splitlines()
    assert len(lines) == len(problems)
    assert all(line.startswith("usage error: ") for line in lines)
