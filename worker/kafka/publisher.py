"""Publishing through the Faust app's producer, with broker errors translated into faults."""

from __future__ import annotations

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
        return self._acked(fut)

    @staticmethod
    async def _acked(fut: Awaitable[object]) -> object:
        try:
            return await fut
        except (KafkaError, OSError, TimeoutError) as exc:
            raise _translate(exc) from exc
