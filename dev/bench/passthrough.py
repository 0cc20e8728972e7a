"""The two baselines: forward every draft unchanged to one output topic, nothing else.

    python -m dev.bench.passthrough raw   IN OUT GROUP BATCH WAIT_S
    python -m dev.bench.passthrough faust IN OUT APP_ID BATCH WAIT_S WEB_PORT DATA_DIR

``raw`` is a plain aiokafka consume -> produce loop; ``faust`` a do-nothing Faust agent with the
worker's Faust settings (see ``worker.stream.app.build_app``): ``take_events`` batches of the same
size and wait, raw bytes, at-least-once, acks=all, and each batch's sends acknowledged before the
next batch, as the worker does; the worker's event loop, thread switch interval and consumer
fetch wait. Together they are the transport's limit on this machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any

MAX_DRAFT = 1024 * 1024
FRAMING = 64 * 1024


async def run_raw(src: str, dst: str, group: str, batch: int, wait_s: float) -> None:
    """Consume -> produce, acknowledge the sends, commit about once a second."""
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # noqa: PLC0415 - per mode

    from dev.bench.relay import relay  # noqa: PLC0415
    from worker.settings import Settings  # noqa: PLC0415

    bootstrap = Settings().kafka_bootstrap_servers
    consumer = AIOKafkaConsumer(
        src,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=2 * MAX_DRAFT + FRAMING,
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", max_request_size=4 * MAX_DRAFT + FRAMING
    )
    await relay(
        consumer,
        producer,
        lambda m: ((dst, m.key, m.value, m.headers, None),),
        wait_s=wait_s,
        batch=batch,
    )


def run_faust(
    src: str, dst: str, app_id: str, batch: int, wait_s: float, web_port: int, data_dir: str
) -> None:
    """A Faust app with the worker's settings and an agent that only forwards."""
    import faust  # noqa: PLC0415 - per mode

    from worker.runtime.event_loop import use_event_loop, use_thread_switch_interval  # noqa: PLC0415
    from worker.settings import Settings  # noqa: PLC0415
    from worker.stream.faust_internals import InternalsApp  # noqa: PLC0415

    settings = Settings()
    use_event_loop(settings.event_loop)  # the worker's loop: the same transport underneath
    use_thread_switch_interval(settings.thread_switch_interval_s)  # and the same threads

    class App(InternalsApp):  # the worker's consumer too: the same fetch wait
        fetch_max_wait_ms = round(settings.consumer_fetch_max_wait_s * 1000)

    app = App(
        app_id,
        broker=f"kafka://{settings.kafka_bootstrap_servers}",
        store="memory://",
        autodiscover=False,
        processing_guarantee="at_least_once",
        topic_partitions=settings.topic_partitions,
        topic_replication_factor=1,
        table_standby_replicas=0,
        consumer_auto_offset_reset="earliest",
        consumer_max_fetch_size=2 * MAX_DRAFT + FRAMING,
        producer_max_request_size=4 * MAX_DRAFT + FRAMING,
        producer_acks=-1,
        broker_commit_interval=1.0,
        web_enabled=True,
        web_port=web_port,
        web_bind="127.0.0.1",
        datadir=data_dir,
    )
    topic = app.topic(
        src, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw"
    )

    @app.agent(topic, concurrency=1)
    async def forward(stream: Any) -> AsyncIterator[None]:
        async for events in stream.take_events(batch, within=wait_s):
            futures = []
            for e in events:
                msg = e.message
                futures.append(
                    await app.producer.send(
                        dst, msg.key, msg.value, None, None, list(msg.headers or ())
                    )
                )
            await asyncio.gather(*futures)
            yield None

    faust.Worker(app, loglevel="WARNING", quiet=True).execute_from_commandline()


def main(argv: list[str]) -> None:
    mode, src, dst, name, batch, wait = argv[:6]
    if mode == "raw":
        from worker.runtime.event_loop import use_event_loop  # noqa: PLC0415
        from worker.settings import Settings  # noqa: PLC0415

        use_event_loop(Settings().event_loop)  # the worker's loop: the same transport underneath
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(run_raw(src, dst, name, int(batch), float(wait)))
    elif mode == "faust":
        run_faust(src, dst, name, int(batch), float(wait), int(argv[6]), argv[7])
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
