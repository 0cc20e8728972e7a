"""The shell of ``replay``: turn the command's options into a run, or into usage errors."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple, TextIO

from worker.faults import ToolUsageError as UsageError
from worker.settings import Settings
from worker.tools.replay import EXIT_USAGE, ReplayOptions, run_replay
from worker.tools.replay_select import ReplayFilter, parse_time, validate_filter


class ReplayArgs(NamedTuple):
    """The options of ``grounding-worker replay`` as typed (``None``: not given)."""

    error_classes: Iterable[str] = ()
    tenants: Iterable[str] = ()
    partitions: Iterable[int] = ()
    from_offset: int | None = None
    to_offset: int | None = None
    since: str | None = None
    until: str | None = None
    dry_run: bool = False
    limit: int | None = None
    rate: float | None = None
    max_replays: int | None = None
    from_beginning: bool = False
    json: bool = False
    all_classes: bool = False


def replay_filter(args: ReplayArgs, now: datetime, known_classes: Iterable[str]) -> ReplayFilter:
    """The selection the options ask for; :class:`UsageError` when it is unusable."""
    try:
        since_ms = None if args.since is None else parse_time(args.since, now)
        until_ms = None if args.until is None else parse_time(args.until, now)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    selection = ReplayFilter(
        error_classes=frozenset(args.error_classes),
        tenants=frozenset(args.tenants),
        partitions=frozenset(args.partitions),
        from_offset=args.from_offset,
        to_offset=args.to_offset,
        since_ms=since_ms,
        until_ms=until_ms,
        all_classes=args.all_classes,
    )
    problems = validate_filter(selection, known_classes)
    if problems:
        raise UsageError(*problems)
    return selection


def replay_options(
    args: ReplayArgs, settings: Settings, now: datetime, known_classes: Iterable[str]
) -> ReplayOptions:
    """Everything one run is asked for (the max replay count defaults to the settings')."""
    return ReplayOptions(
        selection=replay_filter(args, now, known_classes),
        max_replays=settings.replay_max_count if args.max_replays is None else args.max_replays,
        dry_run=args.dry_run,
        limit=args.limit,
        rate=args.rate,
        from_beginning=args.from_beginning,
        json=args.json,
    )


def run_replay_command(
    settings: Settings,
    args: ReplayArgs,
    *,
    now: datetime,
    known_classes: Iterable[str],
    err: TextIO | None = None,
) -> int:
    """Run ``replay`` as the command line asked; return its exit code."""
    try:
        options = replay_options(args, settings, now, known_classes)
    except UsageError as exc:
        for problem in exc.problems:
            (err or sys.stderr).write(f"usage error: {problem}\n")
        return EXIT_USAGE
    return run_replay(settings, options)
