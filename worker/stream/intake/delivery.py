"""How ``agent.drafts`` reaches the overlapped take (``GW_DRAFTS_INTAKE``).

Two feeds put the same records into the same :class:`worker.stream.intake.take.OverlappedTake`:

- ``stream`` (:func:`feed_from_stream`): a Faust agent's stream with a processor, as
  ``take_events`` does inside Faust. Each record costs Faust an ``Event``, a pass of the stream
  iterator (sensors, context variables, processors) and an awaited ``stream.ack``.
- ``channel`` (:class:`DraftsChannel`): the topic's own conductor delivery. Faust's conductor
  hands every fetched message of ``agent.drafts`` to the channels subscribed to it through
  ``decode`` and the channel's queue; this channel's ``decode`` returns the message itself (no
  ``Event``) and its queue is the take's buffer, so a record is converted once and buffered. The
  batch is acknowledged through the consumer, ``message.ack(consumer)`` (Faust's reference count:
  the conductor counted this channel in; the consumer marks the offset once the count is
  down to zero), after the body returns.

Both keep the take's rules: a full buffer makes delivery wait (the conductor awaits ``put``,
which waits for room, and the consumer stops handing out records behind it); a record is
acknowledged only after the body returned from its batch. The channel keeps the stream's own
steps on each message that matter here: one fetched under an earlier consumer generation, or met
while flow control is suspended (a rebalance), is not buffered (and, unlike the stream, not
acknowledged either: the partition is read again from the committed offset, and the offset guard,
``worker.stream.intake.offsets``, sees the gap if it is not); one buffered is tracked by the
consumer (a rebalance or a stop waits for it to be acknowledged) and marks its partition's stream as
moving (the consumer's check for stalled streams reads it). Its take lives as long as the consumer
(:class:`ConsumerLifetime`), as an agent's stream does, so that the wait at a stop ends.
"""

from __future__ import annotations

from collections.abc import Callable
from time import monotonic
from typing import Any

import faust

from worker.stream.faust_internals import UndecodedTopic, enable_passive
from worker.stream.intake.take import Acknowledge, OverlappedTake


def feed_from_stream(stream: Any, take: OverlappedTake[Any], convert: Callable[[Any], Any]) -> None:
    """Feed ``take`` from a Faust agent's stream (``GW_DRAFTS_INTAKE=stream``)."""

    async def add(value: Any) -> Any:
        # Stream processor: buffer the current event; wait for room when the buffer is full.
        if not await take.room():
            return value
        event = stream.current_event
        if event is None:
            raise RuntimeError("take buffer found current_event is None")
        take.add(event, event.message.partition, convert(event))
        return value

    stream.enable_acks = False  # acknowledged by the take, after the body, like take_events
    stream.add_processor(add)
    enable_passive(stream)


def stream_acknowledge(stream: Any) -> Acknowledge:
    """Acknowledge a batch's events through the stream (the agent's own acknowledgement)."""

    async def acknowledge(events: list[Any]) -> None:
        for event in events:
            await stream.ack(event)

    return acknowledge


class ConsumerLifetime:
    """The channel take's lifetime (:class:`worker.stream.intake.take.Lifetime`): the app's
    consumer.

    Not the app: when the app stops, Faust suspends delivery and then waits, its consumer still
    running, until every tracked record is acknowledged (``stream_wait_empty``); the take must
    keep handing out its buffered batches until then, as an agent's stream does. The consumer
    is looked up on use (it is built lazily, in the app's loop).
    """

    __slots__ = ("_app",)

    def __init__(self, app: faust.App) -> None:
        self._app = app

    @property
    def _consumer(self) -> Any:
        """A mode service (``ConsumerT`` does not declare the waits)."""
        return self._app.consumer

    @property
    def should_stop(self) -> bool:
        return bool(self._consumer.should_stop)

    async def wait(self, *coros: Any, timeout: Any = None) -> Any:  # noqa: ASYNC109 - mode's
        return await self._consumer.wait(*coros, timeout=timeout)

    async def wait_for_stopped(self, *coros: Any, timeout: Any = None) -> bool:  # noqa: ASYNC109
        return bool(await self._consumer.wait_for_stopped(*coros, timeout=timeout))


def consumer_acknowledge(app: faust.App) -> Acknowledge:
    """Acknowledge a batch's messages through the consumer, by Faust's reference count."""

    async def acknowledge(messages: list[Any]) -> None:
        consumer = app.consumer
        for message in messages:
            message.ack(consumer)

    return acknowledge


class _Buffer:
    """The queue the conductor sees on :class:`DraftsChannel`: the take's buffer."""

    __slots__ = ("_channel",)

    def __init__(self, channel: DraftsChannel) -> None:
        self._channel = channel

    def full(self) -> bool:
        return self._channel.take.full()

    def put_nowait_enhanced(self, value: Any, **_pressure: Any) -> None:
        # The pressure callbacks pause fetching for a partition whose queue fills up; here a
        # full buffer makes delivery itself wait (``put``), which stops fetching altogether.
        self._channel.offer(value)


class DraftsChannel(UndecodedTopic):
    """``agent.drafts`` as a conductor channel whose deliveries go straight into a take.

    Registered with the app's conductor (``app.topics.add``) before the consumer subscribes
    (``worker.stream.app.WorkerApp.on_start``); never iterated.
    """

    def __init__(
        self,
        app: faust.App,
        topic: str,
        *,
        partitions: int,
        take: OverlappedTake[Any],
        convert: Callable[[Any], Any],
    ) -> None:
        super().__init__(
            app,
            topics=[topic],
            key_type=bytes,
            value_type=bytes,
            key_serializer="raw",
            value_serializer="raw",
            partitions=partitions,
            is_iterator=True,
        )
        self.take = take
        self._convert = convert
        self._buffer = _Buffer(self)

    @property
    def queue(self) -> Any:
        """What the conductor puts into: the take's buffer."""
        return self._buffer

    async def decode(self, message: Any, *, propagate: bool = False) -> Any:
        """The message itself: no ``Event`` (the take converts it once, on arrival)."""
        return message

    async def put(self, value: Any) -> None:
        """The conductor found the buffer full: wait for room (back-pressure), then buffer."""
        if await self.take.room():
            self.offer(value)

    def offer(self, message: Any) -> None:
        """Buffer one message (there is room), unless it belongs to an earlier generation."""
        app = self.app
        if message.generation_id != app.consumer_generation_id or not app.flow_control.is_active():
            return
        if not message.tracked:
            # Pending until acknowledged: a rebalance or a stop waits for it (wait_empty).
            message.tracked = True
            app.consumer.track_message(message)
        # What a stream's sensor records per event: Faust's consumer warns that a partition's
        # "stream is not processing" when this stops moving while the partition has lag.
        app.monitor.stream_inbound_time[message.tp] = monotonic()
        self.take.add(message, message.partition, self._convert(message))
