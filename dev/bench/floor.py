"""The floor: what any worker must do per draft on the worker's transport, and nothing else.

    python -m dev.bench.floor faust TEMPLATES     (settings from GW_* as for the worker)
    python -m dev.bench.floor raw   TEMPLATES

For each draft it consumes from ``agent.drafts`` it publishes the records the worker publishes for
a draft of the mix: its output, its ledger batch and its turn-table changelog record (a
dead-lettered draft: its output alone), ~2.9 records a draft. The values are the worker's own
records for a sample of the mix (``dev.bench.shapes``; the floor cycles through them), so their
sizes and what the producer's compression makes of them are the worker's; the key is the draft's,
the output and ledger records carry the draft's headers (its ``traceparent``), the changelog record
goes to the draft's partition of ``<app_id>-turns-changelog``. No parsing, no evidence, no
decision, no turn table, no log line per draft.

``faust``: the worker's Faust app (``worker.stream.faust_app.new_app``: broker, producer
compression, linger and batch size, acks=all, at-least-once, fetch wait, web server), its event
loop and thread switch interval, its overlapped take (``worker.stream.intake.take``: batch size,
quiet and wait) and its bulk hand-over (``ProducerPublisher.send_many``, or one ``send`` per
record when ``GW_PRODUCE_BATCHED=false``); each batch's sends acknowledged before the next batch,
as the worker does. ``raw``: the same records with plain aiokafka (one ``send`` per record, the same
producer settings, consume with the same fetch wait, commit about once a second).

The worker's CPU per draft divided by this floor's, in the same run, is the benchmark's headline
(``cpu_ratio_vs_floor``): what deciding a draft costs beyond moving its records.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
from collections.abc import AsyncIterator, Awaitable, Sequence
from pathlib import Path
from typing import Any

from dev.bench.shapes import read
from worker.core import OutRecord

Template = Sequence[tuple[str, bytes]]


def _topics(settings: Any) -> dict[str, str]:
    """The topic of each template role, for this scenario's settings."""
    from worker.kafka.topic_specs import changelog_topic  # noqa: PLC0415

    t = settings.topics
    return {
        "validated": t.validated,
        "regenerate": t.regenerate,
        "could_not_ground": t.could_not_ground,
        "dlq": t.dlq,
        "ledger": t.ledger,
        "changelog": changelog_topic(settings),
    }


def records_for(
    templates: Sequence[Template],
    n: int,
    key: bytes | None,
    headers: Sequence[tuple[str, bytes]],
    partition: int,
    topics: dict[str, str],
) -> list[OutRecord]:
    """The records the worker published for template ``n`` (cycled), for one consumed draft."""
    out: list[OutRecord] = []
    for role, value in templates[n % len(templates)]:
        if role == "changelog":
            out.append(OutRecord(topics[role], key, value, (), partition))
        else:
            out.append(OutRecord(topics[role], key, value, tuple(headers), None))
    return out


def run_faust(templates_path: Path) -> None:
    """The worker's Faust app, intake and take; each draft's records handed over as the worker
    does. The intake is the worker's own setting (``GW_DRAFTS_INTAKE``), so the floor pays for
    the same delivery of drafts as the worker it is compared with."""
    import faust  # noqa: PLC0415 - per mode

    from worker.runtime.event_loop import use_event_loop, use_thread_switch_interval  # noqa: PLC0415
    from worker.settings import Settings  # noqa: PLC0415
    from worker.stream.app import wire_intake  # noqa: PLC0415
    from worker.stream.faust_app import app_publisher, new_app  # noqa: PLC0415
    from worker.stream.intake.take import OverlappedTake  # noqa: PLC0415

    settings = Settings()
    use_event_loop(settings.event_loop)
    use_thread_switch_interval(settings.thread_switch_interval_s)
    templates = read(templates_path)
    topics = _topics(settings)
    app = new_app(settings)

    async def publish_batches(take: OverlappedTake[Any]) -> AsyncIterator[None]:
        publisher = app_publisher(app)
        n = 0
        async for batch in take.batches():
            out = []
            for rec in batch:
                out += records_for(templates, n, rec.key, rec.headers, rec.partition, topics)
                n += 1
            futures: list[Awaitable[object]]
            if settings.produce_batched:
                futures = list(await publisher.send_many(out))
            else:
                futures = [await publisher.send(r) for r in out]
            await asyncio.gather(*futures)
            yield None

    wire_intake(app, settings, publish_batches)

    worker = faust.Worker(
        app, loglevel="WARNING", quiet=True, override_logging=False, redirect_stdouts=False
    )
    worker.spinner = None
    worker.execute_from_commandline()


async def run_raw(templates_path: Path) -> None:
    """Consume -> the same records with plain aiokafka; acknowledged per batch, commit ~1/s."""
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # noqa: PLC0415 - per mode

    from dev.bench.relay import relay  # noqa: PLC0415
    from worker.kafka.topic_specs import FRAMING_BYTES  # noqa: PLC0415
    from worker.settings import Settings  # noqa: PLC0415
    from worker.stream.faust_app import PRODUCER_BATCH_BYTES  # noqa: PLC0415

    settings = Settings()
    templates = read(templates_path)
    topics = _topics(settings)
    consumer = AIOKafkaConsumer(
        settings.topics.drafts,
        bootstrap_servers=settings.kafka_bootstrap_servers,
        group_id=settings.app_id,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=round(settings.consumer_fetch_max_wait_s * 1000),
        max_partition_fetch_bytes=2 * settings.max_draft_bytes + FRAMING_BYTES,
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap_servers,
        acks="all",
        compression_type=None
        if settings.producer_compression == "none"
        else settings.producer_compression,
        linger_ms=round(settings.producer_linger_s * 1000),
        max_batch_size=PRODUCER_BATCH_BYTES,
        max_request_size=4 * settings.max_draft_bytes + FRAMING_BYTES,
    )
    counter = itertools.count()

    def out_of(m: Any) -> list[OutRecord]:
        return records_for(templates, next(counter), m.key, list(m.headers), m.partition, topics)

    await relay(consumer, producer, out_of, wait_s=settings.batch_wait_s, batch=settings.batch_size)


def main(argv: list[str]) -> None:
    mode, templates = argv[0], Path(argv[1])
    if mode == "faust":
        run_faust(templates)
    elif mode == "raw":
        from worker.runtime.event_loop import use_event_loop  # noqa: PLC0415
        from worker.settings import Settings  # noqa: PLC0415

        use_event_loop(Settings().event_loop)  # the worker's loop: the same transport underneath
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(run_raw(templates))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
