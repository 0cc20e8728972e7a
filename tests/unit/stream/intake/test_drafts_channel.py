"""The channel intake: Faust's own conductor delivers messages into the take (no Kafka here).

The app is ``build_app``'s with ``GW_DRAFTS_INTAKE=channel`` (built, never started); the
conductor, the consumer's acknowledgement and the messages are Faust's real ones; only the broker
is absent: messages are handed to the conductor's callback as the consumer would hand them. What
is pinned: a record reaches the batch converted once and without a Faust ``Event``, a full buffer
makes delivery wait, acknowledgement goes through the consumer (Faust's reference count) only
after the body returned, what the body did not see (an abandoned batch, a discarded or left
partition, a message of an earlier generation) is never acknowledged, and the take outlives the
app's stop until the consumer's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

import faust
from faust.types import TP, ConsumerMessage

from worker.core import Incoming, PolicyBook
from worker.runtime.metrics import Metrics
from worker.settings import Settings
from worker.stream.app import build_app
from worker.stream.faust_app import WorkerApp
from worker.stream.intake.delivery import DraftsChannel
from worker.stream.intake.take import OverlappedTake

TOPIC = "agent.drafts"


class Bed(NamedTuple):
    app: WorkerApp
    take: OverlappedTake[Incoming]
    channel: DraftsChannel


def message(offset: int, partition: int = 0, *, generation: int = 0) -> ConsumerMessage:
    return ConsumerMessage(
        TOPIC,
        partition,
        offset,
        1700000000.5,
        0,
        [("h", b"v")],
        f"k{offset}".encode(),
        f"v{offset}".encode(),
        None,
        generation_id=generation,
    )


async def _unused_evidence(_settings: Settings) -> AsyncIterator[Any]:
    raise AssertionError("never opened here")
    yield  # pragma: no cover


def built(tmp_path: Path, intake: str, **settings: Any) -> WorkerApp:
    app = build_app(
        Settings(data_dir=tmp_path, app_id=f"intake-{intake}", drafts_intake=intake, **settings),  # type: ignore[arg-type]
        evidence_factory=asynccontextmanager(_unused_evidence),
        policies=PolicyBook(),
        metrics=Metrics(),
    )
    assert isinstance(app, WorkerApp)
    return app


def close_loops(app: Any) -> None:
    """The loops Faust made beside the test's (the consumer thread's)."""
    for loop in (app.consumer._thread.thread_loop, app.loop):
        if loop is not asyncio.get_running_loop() and not loop.is_closed():
            loop.close()


@asynccontextmanager
async def bed(tmp_path: Path, *, max_size: int) -> AsyncIterator[Bed]:
    """The app as ``build_app`` wires the channel intake, its conductor subscribed to the drafts
    channel and partitions 0 to 3 assigned (the app itself is never started)."""
    app = built(tmp_path, "channel", batch_size=max_size)
    (channel,) = app.intake_channels
    try:
        app.topics.add(channel)
        await app.topics._update_indices()  # what the conductor does when it subscribes
        await app.topics.on_partitions_assigned({TP(TOPIC, p) for p in range(4)})
        app.flow_control.resume()  # as after a rebalance
        yield Bed(app, channel.take, channel)
    finally:
        close_loops(app)


async def deliver(app: Any, *messages: ConsumerMessage) -> None:
    """What the consumer does with each fetched message: the conductor's callback."""
    for m in messages:
        await app.topics.on_message(m)


async def test_records_reach_the_batch_as_incoming_and_are_acked_after_the_body(
    tmp_path: Path,
) -> None:
    async with bed(tmp_path, max_size=10) as (app, take, _):
        assert app.topics.acks_enabled_for(TOPIC)
        m0, m1 = message(0), message(1, partition=2)
        await deliver(app, m0, m1)
        assert set(app.consumer.unacked) == {m0, m1}  # pending: a rebalance waits for them
        assert set(app.monitor.stream_inbound_time) == {TP(TOPIC, 0), TP(TOPIC, 2)}
        batches = take.batches()
        batch = await anext(batches)
        assert batch == [
            Incoming(TOPIC, 0, 0, 1700000000500, b"k0", b"v0", (("h", b"v"),)),
            Incoming(TOPIC, 2, 1, 1700000000500, b"k1", b"v1", (("h", b"v"),)),
        ]
        # The body runs: nothing acknowledged, each message counted once (this channel).
        assert (m0.refcount, m0.acked, m1.refcount, m1.acked) == (1, False, 1, False)
        nxt = asyncio.ensure_future(anext(batches))  # the body returned
        await asyncio.sleep(0)
        assert (m0.refcount, m0.acked, m1.refcount, m1.acked) == (0, True, 0, True)
        assert set(app.consumer.unacked) == set()
        nxt.cancel()
        with suppress(asyncio.CancelledError):
            await nxt
        await batches.aclose()


async def test_a_full_buffer_makes_delivery_wait(tmp_path: Path) -> None:
    async with bed(tmp_path, max_size=2) as (app, take, _):
        await deliver(app, message(0), message(1))
        blocked = asyncio.ensure_future(deliver(app, message(2)))
        await asyncio.sleep(0.01)
        assert not blocked.done()  # back-pressure: the conductor waits for room
        batches = take.batches()
        assert [r.offset for r in await anext(batches)] == [0, 1]
        await asyncio.wait_for(blocked, 1)
        assert [r.offset for r in await anext(batches)] == [2]
        await batches.aclose()


async def test_a_full_buffer_announces_the_next_batch(tmp_path: Path) -> None:
    async with bed(tmp_path, max_size=2) as (app, take, _):
        announced: list[list[int]] = []
        take.on_full = lambda records: announced.append([r.offset for r in records])
        await deliver(app, message(0))
        assert announced == []
        await deliver(app, message(1))
        assert announced == [[0, 1]]


async def test_an_abandoned_batch_is_never_acknowledged(tmp_path: Path) -> None:
    async with bed(tmp_path, max_size=10) as (app, take, _):
        m0 = message(0)
        await deliver(app, m0)
        batches = take.batches()
        assert [r.offset for r in await anext(batches)] == [0]
        await batches.aclose()  # the body raised, or the worker stops
        assert (m0.refcount, m0.acked) == (1, False)
        assert set(app.consumer.unacked) == {m0}


async def test_left_and_discarded_partitions_are_never_acknowledged(tmp_path: Path) -> None:
    async with bed(tmp_path, max_size=10) as (app, take, _):
        kept, lost = message(0, partition=0), message(5, partition=1)
        await deliver(app, kept, lost)
        batches = take.batches()
        assert [r.offset for r in await anext(batches)] == [0, 5]
        take.leave({1})  # partition 1 went to another member while the batch was buffered
        reread = message(6, partition=3)
        await deliver(app, reread, message(1, partition=0))
        assert take.discard(3) == 1  # partition 3 is read again from an earlier offset
        assert [r.offset for r in await anext(batches)] == [1]
        assert (kept.acked, lost.acked, reread.acked) == (True, False, False)
        assert (lost.refcount, reread.refcount) == (1, 1)
        await batches.aclose()


async def test_a_message_of_an_earlier_generation_is_neither_buffered_nor_acked(
    tmp_path: Path,
) -> None:
    async with bed(tmp_path, max_size=10) as (app, take, _):
        app.consumer_generation_id = 7
        stale, fresh = message(0, generation=6), message(1, generation=7)
        await deliver(app, stale, fresh)
        batches = take.batches()
        assert [r.offset for r in await anext(batches)] == [1]
        assert (stale.acked, stale.tracked) == (False, False)
        assert set(app.consumer.unacked) == {fresh}
        await batches.aclose()


async def test_the_channel_intake_hands_its_channel_to_the_conductor_on_start(
    tmp_path: Path,
) -> None:
    app = built(tmp_path, "channel")
    try:
        (channel,) = app.intake_channels
        assert isinstance(channel, DraftsChannel)
        assert list(app.agents) == []  # no agent, no stream: an app task runs the batches
        assert channel not in app.topics
        await app.on_start()
        assert channel in app.topics
        assert channel.topics == ["agent.drafts"]
    finally:
        close_loops(app)


def test_the_stream_intake_is_the_agent_on_the_drafts_topic(tmp_path: Path) -> None:
    app = built(tmp_path, "stream")
    assert app.intake_channels == ()
    assert [a.channel.get_topic_name() for a in app.agents.values()] == ["agent.drafts"]
    assert isinstance(app, faust.App)


async def test_the_take_hands_out_its_buffer_while_the_app_stops_until_the_consumer_does(
    tmp_path: Path,
) -> None:
    """On a stop, Faust suspends delivery and then waits, its consumer still running, for every
    tracked record to be acknowledged: a take that stopped with the app would leave them in its
    buffer and the stop would hang until the process is killed."""
    async with bed(tmp_path, max_size=10) as (app, take, _):
        m0 = message(0)
        await deliver(app, m0)
        app._stopped.set()  # what mode's ``Service.stop`` does first (no broker to stop here)
        assert app.should_stop
        batches = take.batches()
        assert [r.offset for r in await anext(batches)] == [0]
        after = asyncio.ensure_future(anext(batches))
        await asyncio.sleep(0)
        assert m0.acked  # what the app's stop waits for
        app.consumer._stopped.set()
        with suppress(StopAsyncIteration):
            await asyncio.wait_for(after, 5)
        assert after.done()
