"""The worker's Faust app builds its Kafka consumer with the configured fetch wait.

Faust fixes ``fetch_max_wait_ms=1500``; a fetch covering only idle partitions then holds the
drafts partitions for 1.5 s under load (``worker/stream/faust_transport.py``). No broker here:
the aiokafka consumer is built by the app's own consumer thread, never started, and read back.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiokafka import AIOKafkaConsumer

from worker.settings import Settings
from worker.stream.app import _new_app
from worker.stream.faust_transport import WorkerTransport


async def fetch_wait_ms(settings: Settings) -> int:
    app = _new_app(settings)
    transport = app.transport
    assert isinstance(transport, WorkerTransport)
    built = app.consumer._thread._create_worker_consumer(transport)
    try:
        assert isinstance(built, AIOKafkaConsumer)
        return int(built._fetch_max_wait_ms)
    finally:
        await built.stop()  # never started: closes its client
        # The loops made with the consumer (its thread's, and the app's if not this one).
        for loop in (app.consumer._thread.thread_loop, app.loop):
            if loop is not asyncio.get_running_loop() and not loop.is_closed():
                loop.close()


async def test_the_drafts_consumer_waits_at_most_the_configured_fetch_wait(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, consumer_fetch_max_wait_s=0.05, app_id="fetch-wait")
    assert await fetch_wait_ms(settings) == 50


async def test_the_default_is_a_tenth_of_a_second_not_fausts_one_and_a_half(tmp_path: Path) -> None:
    assert await fetch_wait_ms(Settings(data_dir=tmp_path, app_id="fetch-default")) == 100


def test_aiokafka_still_hands_the_wait_to_its_fetcher() -> None:
    """The attribute set above is what ``AIOKafkaConsumer.start`` gives the fetcher."""
    import inspect  # noqa: PLC0415

    assert "fetch_max_wait_ms=self._fetch_max_wait_ms" in inspect.getsource(AIOKafkaConsumer.start)
