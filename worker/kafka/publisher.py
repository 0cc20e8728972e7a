"""Publishing through the Faust app's producer, with broker errors translated into faults."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from aiokafka.errors import KafkaError

from worker.faults import BrokerUnavailable, PoisonFault
from worker.kafka.records import Headers


def _translate(exc: Exception) -> Exception:
    if isinstance(exc, KafkaError) and not getattr(exc, "retriable", False):
        return PoisonFault(f"broker refused the record: {type(exc).__name__}")
    return BrokerUnavailable(f"broker unavailable: {type(exc).__name__}")


class ProducerPublisher:
    """:class:`worker.stream.ports.Publisher` over a Faust (aiokafka) producer."""

    def __init__(self, producer: Any) -> None:
        self._producer = producer

    async def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes,
        headers: Headers,
        partition: int | None = None,
    ) -> Awaitable[object]:
        """Enqueue one record; await the result for the broker's acknowledgement."""
        try:
            fut = await self._producer.send(topic, key, value, partition, None, list(headers))
        except (KafkaError, OSError, TimeoutError) as exc:
            raise _translate(exc) from exc
        return _translated(fut)


def _translated(fut: asyncio.Future[object]) -> asyncio.Future[object]:
    """A future with ``fut``'s result, or its broker error translated into a fault.

    A done-callback, not a coroutine: a batch hands hundreds of records over at once, and one
    task per record cost more than the send itself.
    """
    out: asyncio.Future[object] = fut.get_loop().create_future()

    def settle(done: asyncio.Future[object]) -> None:
        if out.done():
            return
        if done.cancelled():
            out.cancel()
            return
        exc = done.exception()
        if exc is None:
            out.set_result(done.result())
        elif isinstance(exc, KafkaError | OSError | TimeoutError):
            out.set_exception(_translate(exc))
        else:
            out.set_exception(exc)

    fut.add_done_callback(settle)
    return out
