"""OverlappedTake's rules, fed by the stream intake over a stand-in for the Faust stream (no Kafka
here; the channel intake's own feed is tests/unit/stream/intake/test_drafts_channel.py).

The real thing runs under every e2e test (tests/e2e/); these pin the rules that make the overlap
safe: a batch is acknowledged only after the body returned from it, the buffer keeps filling
meanwhile but never beyond one batch, discarded records are never acknowledged, and the window
follows the load.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any, NamedTuple

import pytest

from worker.stream.intake.delivery import feed_from_stream, stream_acknowledge
from worker.stream.intake.take import OverlappedTake, close_at


class Channel:
    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        raise StopAsyncIteration


class FakeStream:
    """The parts of a Faust stream that ``OverlappedTake`` touches."""

    def __init__(self) -> None:
        self.enable_acks = True
        self.should_stop = False
        self.current_event: Any = None
        self.acked: list[int] = []
        self.processors: list[Any] = []
        self.channel = Channel()

    def add_processor(self, processor: Any) -> None:
        self.processors.append(processor)

    def _enable_passive(self, channel: Any) -> None:
        pass

    async def wait(self, event: asyncio.Event) -> None:
        await event.wait()

    async def wait_for_stopped(
        self,
        event: asyncio.Event,
        timeout: float | None = None,  # noqa: ASYNC109 - Faust's (mode's) own signature
    ) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)
        return self.should_stop

    async def ack(self, event: Any) -> None:
        self.acked.append(event.message.offset)

    async def deliver(self, offset: int, partition: int = 0) -> None:
        """What Faust's passive drainer does for one record: run the processors in its context."""
        self.current_event = SimpleNamespace(
            message=SimpleNamespace(partition=partition, offset=offset)
        )
        for processor in self.processors:
            await processor(offset)


def offsets(batch: list[Any]) -> list[int]:
    return [e.message.offset for e in batch]


class Started(NamedTuple):
    stream: FakeStream
    take: OverlappedTake
    batches: AsyncIterator[list[Any]]
    #: The agent's request for its first batch, already waiting.
    first: asyncio.Future[list[Any]]


async def started(*, max_size: int, quiet: float, max_wait: float) -> Started:
    """A take over a fresh stream, with the agent already waiting for its first batch."""
    stream = FakeStream()
    take: OverlappedTake[Any] = OverlappedTake(
        stream,
        max_size=max_size,
        quiet=quiet,
        max_wait=max_wait,
        acknowledge=stream_acknowledge(stream),
    )
    feed_from_stream(stream, take, lambda e: e)
    batches = take.batches()
    first = asyncio.ensure_future(anext(batches))
    await asyncio.sleep(0)
    return Started(stream, take, batches, first)


@pytest.mark.parametrize(
    ("first", "last", "expected"),
    [
        (10.0, 10.0, 10.005),  # one record, then silence: the quiet gap
        (10.0, 10.03, 10.035),  # records keep coming: the window moves with them ...
        (10.0, 10.048, 10.05),  # ... up to the longest wait after the first one
    ],
)
def test_a_batch_closes_after_a_quiet_gap_or_the_longest_wait(
    first: float, last: float, expected: float
) -> None:
    assert close_at(first, last, quiet=0.005, max_wait=0.05) == pytest.approx(expected)


async def test_records_arriving_during_the_body_form_the_next_batch_acked_only_after_it() -> None:
    stream, take, batches, first = await started(max_size=3, quiet=0.001, max_wait=0.002)
    assert stream.enable_acks is False
    for offset in (0, 1):
        await stream.deliver(offset)
    batch = await first
    assert offsets(batch) == [0, 1]
    # The body is running: the buffer keeps filling, nothing is acknowledged yet.
    for offset in (2, 3, 4):
        await stream.deliver(offset)
    assert stream.acked == []
    second = await batches.__anext__()  # the body returned from the first batch
    assert stream.acked == [0, 1]
    assert offsets(second) == [2, 3, 4]
    assert take.last_size == 3
    stream.should_stop = True
    await batches.aclose()
    assert stream.acked == [0, 1]  # a batch abandoned by a shutdown is never acknowledged


async def test_the_buffer_holds_at_most_one_batch_while_the_body_runs() -> None:
    stream, _, batches, pending = await started(max_size=2, quiet=0.001, max_wait=0.001)
    await stream.deliver(0)
    await stream.deliver(1)
    assert offsets(await pending) == [0, 1]
    await stream.deliver(2)
    await stream.deliver(3)
    blocked = asyncio.ensure_future(stream.deliver(4))
    await asyncio.sleep(0.01)
    assert not blocked.done()  # back-pressure: the drainer waits for room
    assert offsets(await batches.__anext__()) == [2, 3]
    await asyncio.wait_for(blocked, 1)
    assert offsets(await batches.__anext__()) == [4]
    assert stream.acked == [0, 1, 2, 3]
    await batches.aclose()


async def test_a_full_buffer_announces_the_next_batch_once_while_the_body_runs() -> None:
    stream, take, batches, pending = await started(max_size=2, quiet=0.001, max_wait=0.001)
    announced: list[list[int]] = []
    take.on_full = lambda records: announced.append(offsets(records))
    await stream.deliver(0)
    await stream.deliver(1)
    assert announced == [[0, 1]]  # full before the agent took it: announced too (harmless)
    assert offsets(await pending) == [0, 1]
    await stream.deliver(2)
    assert announced == [[0, 1]]  # not full yet
    await stream.deliver(3)
    assert announced == [[0, 1], [2, 3]]  # the next batch is complete: exactly its records
    assert offsets(await batches.__anext__()) == [2, 3]
    await batches.aclose()


async def test_discarded_records_are_never_handed_out_or_acknowledged() -> None:
    stream, take, batches, pending = await started(max_size=10, quiet=0.001, max_wait=0.001)
    await stream.deliver(0, partition=0)
    assert offsets(await pending) == [0]
    await stream.deliver(7, partition=1)
    await stream.deliver(1, partition=0)
    await stream.deliver(8, partition=1)
    assert take.discard(1) == 2  # partition 1 is being read again from an earlier offset
    assert offsets(await batches.__anext__()) == [1]
    assert stream.acked == [0]
    await batches.aclose()
    assert 7 not in stream.acked
    assert 8 not in stream.acked


async def test_a_thin_stream_closes_a_batch_after_the_quiet_gap() -> None:
    stream, take, batches, pending = await started(max_size=200, quiet=0.01, max_wait=5.0)
    await stream.deliver(0)
    assert offsets(await asyncio.wait_for(pending, 2)) == [0]
    assert take.last_wait < 1.0  # not the 5 s longest wait
    await batches.aclose()


async def test_records_that_keep_coming_are_gathered_into_one_batch() -> None:
    stream, _, batches, pending = await started(max_size=200, quiet=0.05, max_wait=5.0)
    for offset in range(5):
        await stream.deliver(offset)
        await asyncio.sleep(0.01)  # well inside the quiet gap
    assert offsets(await asyncio.wait_for(pending, 2)) == [0, 1, 2, 3, 4]
    await batches.aclose()


async def test_records_of_a_partition_left_after_a_rebalance_are_not_acknowledged() -> None:
    stream, take, batches, pending = await started(max_size=10, quiet=0.001, max_wait=0.001)
    await stream.deliver(0, partition=0)
    await stream.deliver(5, partition=1)
    await stream.deliver(1, partition=0)
    assert offsets(await pending) == [0, 5, 1]
    take.leave({1})  # partition 1 went to another member while the batch was buffered
    nxt = asyncio.ensure_future(batches.__anext__())
    await asyncio.sleep(0)
    await stream.deliver(2, partition=0)
    assert offsets(await nxt) == [2]
    assert stream.acked == [0, 1]
    await batches.aclose()


async def test_each_record_is_converted_once_on_arrival() -> None:
    stream = FakeStream()
    converted: list[int] = []

    def convert(event: Any) -> str:
        converted.append(event.message.offset)
        return f"rec-{event.message.offset}"

    take: OverlappedTake[str] = OverlappedTake(
        stream, max_size=2, quiet=0.001, max_wait=0.001, acknowledge=stream_acknowledge(stream)
    )
    feed_from_stream(stream, take, convert)
    announced: list[list[str]] = []
    take.on_full = announced.append
    batches = take.batches()
    pending = asyncio.ensure_future(anext(batches))
    await asyncio.sleep(0)
    await stream.deliver(0)
    await stream.deliver(1)
    assert await pending == ["rec-0", "rec-1"]
    await stream.deliver(2)
    await stream.deliver(3)
    assert announced == [["rec-0", "rec-1"], ["rec-2", "rec-3"]]
    assert take.discard(5) == 0
    assert await batches.__anext__() == ["rec-2", "rec-3"]
    assert converted == [0, 1, 2, 3]  # once each: the full buffer and the batch share them
    assert stream.acked == [0, 1]
    await batches.aclose()
