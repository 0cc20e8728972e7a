"""The process-wide runtime choices made at an entry point (worker/runtime/event_loop.py)."""

from __future__ import annotations

import sys

import pytest

from worker.runtime.event_loop import use_thread_switch_interval
from worker.settings import Settings


def test_the_thread_switch_interval_is_set_for_the_whole_process() -> None:
    before = sys.getswitchinterval()
    try:
        use_thread_switch_interval(0.0007)
        assert sys.getswitchinterval() == pytest.approx(0.0007)
    finally:
        sys.setswitchinterval(before)


def test_the_default_is_shorter_than_cpythons_and_bounded() -> None:
    assert Settings().thread_switch_interval_s == pytest.approx(0.0005)
    with pytest.raises(ValueError, match="thread_switch_interval_s"):
        Settings(thread_switch_interval_s=0)
