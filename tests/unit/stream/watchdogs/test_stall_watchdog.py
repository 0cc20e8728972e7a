"""StallDetector: a partition is re-read only after lagging without progress for the full delay."""

from __future__ import annotations

from worker.stream.watchdogs.stall import Lag, StallDetector


def test_a_partition_caught_up_is_never_reread() -> None:
    d = StallDetector(stall_after_s=10)
    assert [d.observe(0, Lag(committed=7, end=7), t) for t in (0, 20, 40)] == [False] * 3


def test_a_lagging_partition_without_progress_is_reread_once_the_delay_passed() -> None:
    d = StallDetector(stall_after_s=10)
    assert d.observe(1, Lag(committed=7, end=8), now=100.0) is False
    assert d.observe(1, Lag(committed=7, end=8), now=109.9) is False
    assert d.observe(1, Lag(committed=7, end=8), now=110.0) is True
    # After a re-read the clock starts again: no second seek on the next tick.
    assert d.observe(1, Lag(committed=7, end=8), now=111.0) is False


def test_progress_restarts_the_clock() -> None:
    """A busy but moving partition (committed offset advancing) is never re-read."""
    d = StallDetector(stall_after_s=10)
    assert d.observe(0, Lag(committed=7, end=50), now=0) is False
    assert d.observe(0, Lag(committed=20, end=60), now=9) is False
    assert d.observe(0, Lag(committed=20, end=60), now=18) is False
    assert d.observe(0, Lag(committed=20, end=60), now=19) is True


def test_partitions_are_tracked_apart_and_reset_forgets_everything() -> None:
    d = StallDetector(stall_after_s=5)
    d.observe(0, Lag(3, 4), now=0)
    d.observe(1, Lag(3, 4), now=4)
    assert d.observe(0, Lag(3, 4), now=5) is True
    assert d.observe(1, Lag(3, 4), now=5) is False
    d.reset()
    assert d.observe(1, Lag(3, 4), now=100) is False
    assert d.observe(1, Lag(3, 4), now=105) is True
