"""The collector is off inside a batch, back on after it (also when it raises), frozen once."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from worker.stream.processing.collector import BatchCollector


@pytest.fixture(autouse=True)
def restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    gc.unfreeze()
    if was:
        gc.enable()
    else:
        gc.disable()


def test_collection_is_paused_inside_and_restored_after() -> None:
    collector = BatchCollector(enabled=True)
    gc.enable()
    with collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collection_is_restored_when_the_batch_raises() -> None:
    collector = BatchCollector(enabled=True)
    gc.enable()
    seen: list[bool] = []

    def failing_batch() -> None:
        with collector.paused():
            seen.append(gc.isenabled())
            raise RuntimeError("batch failed")

    with pytest.raises(RuntimeError, match="batch failed"):
        failing_batch()
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with BatchCollector(enabled=True).paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_disabled_it_touches_nothing() -> None:
    collector = BatchCollector(enabled=False)
    gc.enable()
    with collector.paused():
        assert gc.isenabled()
    collector.settle()
    assert gc.get_freeze_count() == 0


def test_settle_freezes_the_start_up_heap_once() -> None:
    collector = BatchCollector(enabled=True)
    gc.unfreeze()
    collector.settle()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    gc.unfreeze()
    collector.settle()  # a second call (a second first batch after a reopen) does nothing
    assert gc.get_freeze_count() == 0
