"""The raw baselines' loop (``dev.bench.floor raw``, ``dev.bench.passthrough raw``): plain aiokafka.

Consume a batch, hand the producer what each record maps to, wait for every acknowledgement
before the next batch, commit about once a second; until SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

#: One record to produce: topic, key, value, headers, partition (``None``: the partitioner's).
Out = tuple[str, bytes | None, bytes, Sequence[tuple[str, bytes]], int | None]


async def relay(
    consumer: AIOKafkaConsumer,
    producer: AIOKafkaProducer,
    out_of: Callable[[Any], Iterable[Out]],
    *,
    wait_s: float,
    batch: int,
) -> None:
    """Start both clients, relay until a stop signal, stop both."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await consumer.start()
    await producer.start()
    try:
        last_commit = time.monotonic()
        while not stop.is_set():
            got = await consumer.getmany(timeout_ms=round(wait_s * 1000), max_records=batch)
            futures = []
            for msgs in got.values():
                for m in msgs:
                    for topic, key, value, headers, partition in out_of(m):
                        futures.append(
                            await producer.send(
                                topic, value, key=key, headers=list(headers), partition=partition
                            )
                        )
            await asyncio.gather(*futures)
            if futures and time.monotonic() - last_commit >= 1.0:
                await consumer.commit()
                last_commit = time.monotonic()
    finally:
        await consumer.stop()
        await producer.stop()
