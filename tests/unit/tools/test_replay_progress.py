"""``replay``'s progress once the end offsets are known: the total, the rate and the time left,
on stderr, throttled (a fake clock stands in for time)."""

from __future__ import annotations

import io

import pytest

from worker.settings import Settings
from worker.tools.progress import Meter, Progress, Reading, duration, reading
from worker.tools.replay import ReplayOptions, _Run
from worker.tools.replay_select import ReplayAction, ReplayFilter
from worker.tools.replay_summary import ReplaySummary


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (0.2, "1s"),
        (3.87, "4s"),
        (59, "59s"),
        (59.2, "1m00s"),
        (125, "2m05s"),
        (3599, "59m59s"),
        (3600, "1h00m"),
        (3725, "1h02m"),
        (100_000, "27h46m"),
    ],
)
def test_duration_rounds_up_to_whole_seconds(seconds: float, text: str) -> None:
    assert duration(seconds) == text


@pytest.mark.parametrize(
    ("done", "total", "elapsed", "text"),
    [
        (120, 450, 120 / 85.2, "120/450 (26.7%), 85.2/s, eta 4s"),
        (120, 450, 1.5, "120/450 (26.7%), 80.0/s, eta 5s"),
        (0, 450, 0.0, "0/450 (0.0%), ?/s, eta ?"),
        (0, 450, 2.0, "0/450 (0.0%), 0.0/s, eta ?"),
        (450, 450, 5.0, "450/450 (100.0%), 90.0/s, eta 0s"),
        (4499, 4500, 10.0, "4499/4500 (99.9%), 449.9/s, eta 1s"),
        (3, 90_000, 1.0, "3/90000 (0.0%), 3.0/s, eta 8h19m"),
        (0, 0, 0.0, "0/0 (100.0%), ?/s, eta 0s"),
    ],
)
def test_reading_shows_count_share_rate_and_eta(
    done: int, total: int, elapsed: float, text: str
) -> None:
    assert str(reading(done, total, elapsed)) == text


def test_meter_times_from_when_it_was_made() -> None:
    clock = FakeClock()
    meter = Meter(450, clock=clock)
    clock.now += 2.0
    assert meter.read(120) == Reading("120/450 (26.7%)", "60.0/s, eta 6s")
    clock.now += 4.0
    assert meter.read(450) == Reading("450/450 (100.0%)", "75.0/s, eta 0s")


def run_with(stream: io.StringIO, clock: FakeClock, *, dry_run: bool = False) -> _Run:
    progress = Progress(stream, interval_s=5.0, clock=clock)
    options = ReplayOptions(ReplayFilter(), 3, dry_run=dry_run)
    summary = ReplaySummary(dry_run=dry_run, max_replays=3)
    return _Run(Settings(), options, summary, progress, clock=clock)


def count(run: _Run, replay: int, over_max: int = 0, filtered: int = 0) -> None:
    """Add dead letters to the run's summary as ``note`` would."""
    s = run.summary
    s.scanned += replay + over_max + filtered
    s.dispositions[ReplayAction.REPLAY.value] += replay
    s.dispositions[ReplayAction.OVER_MAX.value] += over_max
    s.dispositions[ReplayAction.FILTERED.value] += filtered
    if not run.options.dry_run:
        s.replayed += replay


def test_replay_lines_gain_total_rate_and_eta_once_the_end_offsets_are_known() -> None:
    clock, stream = FakeClock(), io.StringIO()
    run = run_with(stream, clock)
    clock.now += 6.0  # reading the replay log: no total yet
    count(run, 0)
    run.show()
    run.reading(450)  # the DLQ's end offsets are known
    clock.now += 2.0
    count(run, 100, filtered=20)
    run.show()  # 2 s after the last line: throttled
    clock.now += 3.0
    run.show()
    clock.now += 1.0
    count(run, 200, over_max=2)
    run.show()  # throttled again
    clock.now += 7.0
    count(run, 100, filtered=28)
    run.show(force=True)
    assert stream.getvalue().splitlines() == [
        "replay: read 0, replayed 0, skipped 0 (0 at max)",
        "replay: read 120/450 (26.7%), replayed 100, skipped 20 (0 at max), 24.0/s, eta 14s",
        "replay: read 450/450 (100.0%), replayed 400, skipped 50 (2 at max), 34.6/s, eta 0s",
    ]


def test_a_dry_run_counts_what_it_would_replay() -> None:
    clock, stream = FakeClock(), io.StringIO()
    run = run_with(stream, clock, dry_run=True)
    run.reading(1000)
    clock.now += 10.0
    count(run, 250, filtered=50)
    run.show()
    assert stream.getvalue() == (
        "replay: read 300/1000 (30.0%), planned 250, skipped 50 (0 at max), 30.0/s, eta 24s\n"
    )


def test_a_terminal_gets_one_line_rewritten_at_most_five_times_a_second() -> None:
    clock, stream = FakeClock(), Terminal()
    run = run_with(stream, clock)
    run.reading(10)
    clock.now += 0.125
    count(run, 1)
    run.show()  # 0.125 s: too soon even for a terminal
    clock.now += 0.125
    count(run, 1)
    run.show()
    clock.now += 0.75
    count(run, 8)
    run.show(force=True)
    run.progress.done("replay: done")
    erase = "\r\x1b[2K"
    assert stream.getvalue() == (
        f"{erase}replay: read 2/10 (20.0%), replayed 2, skipped 0 (0 at max), 8.0/s, eta 1s"
        f"{erase}replay: read 10/10 (100.0%), replayed 10, skipped 0 (0 at max), 10.0/s, eta 0s"
        f"{erase}replay: done\n"
    )
