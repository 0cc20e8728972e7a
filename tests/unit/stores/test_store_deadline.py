"""A store call returns by its deadline even when the cancelled call never ends (a driver that
swallows the cancellation, or whose cleanup waits on a restarted server): ``asyncio.wait_for``
on Python 3.11 would wait for it for ever."""

from __future__ import annotations

import asyncio
import time

import pytest
from structlog.testing import capture_logs

from worker.stores.deadline import within


async def _stubborn(started: asyncio.Event, release: asyncio.Event) -> str:
    """A call that ignores every cancellation until ``release`` is set."""
    started.set()
    while True:
        try:
            await release.wait()
        except asyncio.CancelledError:
            continue  # swallowed, as a faulty driver would
        return "late"


async def test_a_call_that_swallows_its_cancellation_is_left_behind_at_the_deadline() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    t0 = time.monotonic()
    with capture_logs() as logs, pytest.raises(TimeoutError, match="select from observations"):
        await within(
            0.05, _stubborn(started, release), what="select from observations", grace_s=0.05
        )
    assert time.monotonic() - t0 < 2.0
    (line,) = [e for e in logs if e["event"] == "store.call_abandoned"]
    assert line["call"] == "select from observations"
    assert line["log_level"] == "warning"
    # What wait_for does with the same call: it never returns.
    started2, release2 = asyncio.Event(), asyncio.Event()
    stuck = asyncio.ensure_future(asyncio.wait_for(_stubborn(started2, release2), 0.05))
    done, _ = await asyncio.wait({stuck}, timeout=0.5)
    assert not done
    release.set()
    release2.set()
    assert await stuck == "late"


async def test_an_answer_in_time_is_returned() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 7

    assert await within(1.0, answer(), what="find") == 7


async def test_a_fault_of_the_call_is_raised_as_it_is() -> None:
    async def refused() -> int:
        raise ConnectionRefusedError("down")

    with pytest.raises(ConnectionRefusedError, match="down"):
        await within(1.0, refused(), what="find")


async def test_a_call_that_honours_its_cancellation_times_out_without_being_left_behind() -> None:
    cleaned: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            cleaned.append("closed")

    with capture_logs() as logs, pytest.raises(TimeoutError):
        await within(0.05, slow(), what="find", grace_s=1.0)
    assert cleaned == ["closed"]
    assert [e for e in logs if e["event"] == "store.call_abandoned"] == []


async def test_cancelling_the_caller_cancels_the_call() -> None:
    cancelled: list[bool] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    caller = asyncio.ensure_future(within(5.0, slow(), what="find"))
    await asyncio.sleep(0.05)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.sleep(0)
    assert cancelled == [True]
