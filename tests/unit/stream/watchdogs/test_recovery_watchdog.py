"""The recovery watchdog: a table recovery without progress exits the worker (code 75) for its
supervisor to restart it (found by scripts/chaos, scenario 3: after a broker restart Faust's
recovery waited for changelog events that never came, and the worker decided nothing again)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, NamedTuple

import pytest
from structlog.testing import capture_logs

from worker.settings import Settings
from worker.stream.watchdogs.recovery import (
    EXIT_RECOVERY_STALLED,
    RecoveryStallDetector,
    awaiting,
    task_stacks,
    watch_recovery,
)


def test_no_recovery_never_exits() -> None:
    d = RecoveryStallDetector(exit_after_s=10)
    assert [d.observe(False, (), t) for t in (0, 50, 100)] == [False] * 3


def test_recovery_without_progress_exits_once_the_delay_passed() -> None:
    d = RecoveryStallDetector(exit_after_s=10)
    stuck = (("turns-changelog-2", 41),)
    assert d.observe(True, stuck, 100.0) is False
    assert d.observe(True, stuck, 109.9) is False
    assert d.observe(True, stuck, 110.0) is True


def test_progress_or_the_end_of_recovery_restarts_the_clock() -> None:
    d = RecoveryStallDetector(exit_after_s=10)
    assert d.observe(True, (("c-0", 1),), 0) is False
    assert d.observe(True, (("c-0", 5),), 9) is False  # moving: a long recovery is fine
    assert d.observe(True, (("c-0", 5),), 18) is False
    assert d.observe(False, (("c-0", 5),), 19) is False  # done
    assert d.observe(True, (("c-0", 5),), 25) is False  # a new recovery starts afresh
    assert d.observe(True, (("c-0", 5),), 34) is False
    assert d.observe(True, (("c-0", 5),), 35) is True


async def test_the_watchdog_exits_the_process_with_75_on_a_stalled_recovery() -> None:
    recovery = SimpleNamespace(in_recovery=True, active_offsets={"turns-changelog-2": 41})
    app = SimpleNamespace(tables=SimpleNamespace(recovery=recovery))
    settings = Settings(recovery_stall_exit_s=0.05)
    exits: list[int] = []
    await asyncio.wait_for(
        watch_recovery(app, settings, exit_process=exits.append, interval_s=0.01), timeout=5
    )
    assert exits == [EXIT_RECOVERY_STALLED] == [75]


async def test_the_watchdog_leaves_a_worker_that_is_not_recovering_alone() -> None:
    recovery = SimpleNamespace(in_recovery=False, active_offsets={})
    app = SimpleNamespace(tables=SimpleNamespace(recovery=recovery))
    exits: list[int] = []
    task = asyncio.create_task(
        watch_recovery(
            app, Settings(recovery_stall_exit_s=0.05), exit_process=exits.append, interval_s=0.01
        )
    )
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert exits == []


async def test_offsets_not_yet_known_are_progress_data_not_a_crash() -> None:
    """Faust keeps ``None`` for a changelog partition nothing was read from yet (the chaos
    suite's rebalance storm crashed a worker on ``int(None)``)."""
    recovery = SimpleNamespace(in_recovery=True, active_offsets={"turns-changelog-0": None})
    app = SimpleNamespace(tables=SimpleNamespace(recovery=recovery))
    exits: list[int] = []
    await asyncio.wait_for(
        watch_recovery(
            app, Settings(recovery_stall_exit_s=0.05), exit_process=exits.append, interval_s=0.01
        ),
        timeout=5,
    )
    assert exits == [75]


async def test_a_failing_check_is_skipped_not_raised() -> None:
    class Broken:
        @property
        def in_recovery(self) -> bool:
            raise RuntimeError("faust internals changed")

    app = SimpleNamespace(tables=SimpleNamespace(recovery=Broken()))
    task = asyncio.create_task(
        watch_recovery(
            app, Settings(recovery_stall_exit_s=0.05), exit_process=lambda c: None, interval_s=0.01
        )
    )
    await asyncio.sleep(0.2)
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def stalled_line(app: object) -> tuple[dict[str, Any], list[int]]:
    """The one ``recovery.stalled`` line the watchdog logs for ``app`` (stalled at once), and the
    exit codes it asked for."""
    exits: list[int] = []
    with capture_logs() as logs:
        await asyncio.wait_for(
            watch_recovery(
                app,
                Settings(recovery_stall_exit_s=0.05),
                exit_process=exits.append,
                interval_s=0.01,
            ),
            timeout=5,
        )
    (stalled,) = [e for e in logs if e["event"] == "recovery.stalled"]
    return stalled, exits


class TP(NamedTuple):
    topic: str
    partition: int


async def test_the_stall_names_the_partitions_still_waited_on_and_how_far() -> None:
    """On-call reads which changelog partition stalled, and how far from its end, in the one
    ``recovery.stalled`` line (no partition already caught up, none not yet measured)."""
    late, done, unknown = (
        TP(topic="c", partition=2),
        TP(topic="c", partition=0),
        TP(topic="c", partition=1),
    )
    recovery = SimpleNamespace(
        in_recovery=True,
        active_offsets={late: None, done: 9, unknown: 3},
        active_highwaters={late: 41, done: 9, unknown: None},
    )
    app = SimpleNamespace(tables=SimpleNamespace(recovery=recovery))
    stalled, exits = await stalled_line(app)
    assert (stalled["waiting"], exits) == (["c[2] have None need 41"], [75])


async def test_the_stall_says_what_each_task_awaits_down_to_the_blocked_call() -> None:
    """The exit's line shows where delivery stopped: a task blocked in a channel's ``put``
    (waiting for room that never comes) is named with its whole ``await`` chain."""

    class Channel:
        def __init__(self) -> None:
            self.room = asyncio.Event()

        async def put(self, value: object) -> None:
            await self.room.wait()

    async def deliver(channel: Channel) -> None:
        await channel.put(b"draft")

    channel = Channel()
    blocked = asyncio.create_task(deliver(channel), name="conductor")
    await asyncio.sleep(0)
    try:
        (line,) = [s for s in task_stacks() if s.startswith("conductor: ")]
        frames = line.removeprefix("conductor: ").split(" > ")
        assert [f.rsplit(" ", 1)[1] for f in frames[:3]] == ["deliver", "put", "wait"]
        assert "test_recovery_watchdog.py:" in frames[0]
    finally:
        blocked.cancel()


def test_awaiting_ends_at_what_is_not_a_coroutine() -> None:
    async def waits(fut: asyncio.Future[None]) -> None:
        await fut

    loop = asyncio.new_event_loop()
    try:
        coro = waits(loop.create_future())
        coro.send(None)  # runs up to the future, which suspends it
        chain = awaiting(coro)
        assert chain[0].endswith(" waits")
        assert chain[-1].startswith("<")
        coro.close()
    finally:
        loop.close()


async def test_the_stall_line_carries_the_consumer_state_and_the_tasks() -> None:
    late = TP(topic="c", partition=2)
    recovery = SimpleNamespace(
        in_recovery=True, active_offsets={late: -1}, active_highwaters={late: 41}
    )
    consumer = SimpleNamespace(
        flow_active=True,
        _active_partitions={late},
        _paused_partitions=set(),
        _read_offset={late: 7},
        _unacked_messages=set(),
        _thread=SimpleNamespace(_consumer=None),  # aiokafka's consumer not started
    )
    app = SimpleNamespace(
        tables=SimpleNamespace(recovery=recovery, changelog_queue=SimpleNamespace(qsize=lambda: 0)),
        consumer=consumer,
        flow_control=SimpleNamespace(is_active=lambda: True),
        rebalancing=False,
        consumer_generation_id=3,
    )
    stalled, exits = await stalled_line(app)
    assert stalled["waiting"] == ["c[2] have -1 need 41"]
    assert stalled["state"]["flow_active"] is True
    assert stalled["state"]["partitions"] == {
        "c[2]": {"fetching": True, "paused": False, "read_offset": 7, "assigned": False}
    }
    assert isinstance(stalled["tasks"], list)
    assert exits == [75]
