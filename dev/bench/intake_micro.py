"""The drafts intake alone, in one process: CPU per record of each ``GW_DRAFTS_INTAKE``.

    .venv/bin/python -m dev.bench.intake_micro [--records 20000] [--rounds 7]

No broker and no pipeline: Faust's own conductor callback (what the consumer calls for each
fetched message) delivers prebuilt ``ConsumerMessage`` objects of four partitions, and the
batches go to an empty body; each record is acknowledged after it. ``stream``: the topic's
iterator channel, an agent-like stream fed into the take by a processor (``feed_from_stream``),
acknowledged by ``stream.ack``; ``channel``: ``DraftsChannel``, acknowledged through the consumer.
Faust's monitor is a sensor, as in a running worker. What is left out is the same for both
(fetching, building the messages, the pipeline), so the difference is the intake's cost.
Process CPU (``time.process_time``) per record; rounds alternate the order. Figures on a busy
machine are provisional: compare the same-run ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from faust.types import TP, ConsumerMessage

from worker.settings import Settings
from worker.stream.faust_app import message_to_incoming, new_app, to_incoming
from worker.stream.intake.delivery import (
    DraftsChannel,
    consumer_acknowledge,
    feed_from_stream,
    stream_acknowledge,
)
from worker.stream.intake.take import OverlappedTake

TOPIC = "bench.drafts"
PARTITIONS = 4
VALUE = b"x" * 1500  # about a draft's size


def messages(n: int) -> list[ConsumerMessage]:
    return [
        ConsumerMessage(
            TOPIC,
            i % PARTITIONS,
            i // PARTITIONS,
            1.7e9,
            0,
            [],
            b"turn-%d" % i,
            VALUE,
            None,
            generation_id=0,
        )
        for i in range(n)
    ]


async def drain(take: OverlappedTake[Any], batch: list[ConsumerMessage]) -> None:
    """Take every batch; return once the last one is acknowledged (its body returned)."""
    batches = take.batches()
    seen = 0
    while seen < len(batch):
        seen += len(await anext(batches))
    after = asyncio.ensure_future(anext(batches))  # the body returned: the take acknowledges
    while not batch[-1].acked:  # noqa: ASYNC110 - a few loop steps: no event to wait on
        await asyncio.sleep(0)
    after.cancel()


async def one_run(intake: str, n: int, batch_size: int) -> float:
    """CPU seconds per record for ``n`` records through ``intake``."""
    with tempfile.TemporaryDirectory() as tmp:
        app: Any = new_app(Settings(data_dir=Path(tmp), app_id=f"micro-{intake}"))
        app.sensors.add(app.monitor)
        app.flow_control.resume()
        tps = {TP(TOPIC, p) for p in range(PARTITIONS)}
        stream: Any = None
        if intake == "stream":
            topic = app.topic(
                TOPIC,
                key_type=bytes,
                value_type=bytes,
                key_serializer="raw",
                value_serializer="raw",
                partitions=PARTITIONS,
            )
            stream = app.stream(topic)
            take: OverlappedTake[Any] = OverlappedTake(
                stream, batch_size, 0.002, 0.005, stream_acknowledge(stream)
            )
            feed_from_stream(stream, take, to_incoming)
            await stream.maybe_start()
            channel = stream.channel
        else:
            take = OverlappedTake(app, batch_size, 0.002, 0.005, consumer_acknowledge(app))
            channel = DraftsChannel(
                app, TOPIC, partitions=PARTITIONS, take=take, convert=message_to_incoming
            )
        app.topics.add(channel)
        await app.topics._update_indices()
        await app.topics.on_partitions_assigned(tps)
        on_message = app.topics.on_message
        batch = messages(n)
        taker = asyncio.ensure_future(drain(take, batch))
        await asyncio.sleep(0.01)
        t0 = time.process_time()
        for m in batch:
            await on_message(m)
        await taker
        cpu = time.process_time() - t0
        assert all(m.acked for m in batch), "every record acknowledged"
        if stream is not None:
            await stream.stop()
        for loop in (app.consumer._thread.thread_loop, app.loop):
            if loop is not asyncio.get_running_loop() and not loop.is_closed():
                loop.close()
        return cpu / n


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m dev.bench.intake_micro", description=__doc__)
    p.add_argument("--records", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--batch-size", type=int, default=Settings.model_fields["batch_size"].default)
    a = p.parse_args()
    runs: dict[str, list[float]] = {"stream": [], "channel": []}
    ratios: list[float] = []

    async def all_rounds() -> None:
        await one_run("channel", 2000, a.batch_size)  # warm-up: imports, first allocations
        await one_run("stream", 2000, a.batch_size)
        for r in range(a.rounds):
            order = ("stream", "channel") if r % 2 == 0 else ("channel", "stream")
            got = {i: await one_run(i, a.records, a.batch_size) for i in order}
            for i, v in got.items():
                runs[i].append(v)
            ratios.append(got["channel"] / got["stream"])
            print(
                f"round {r + 1}: stream {1000 * got['stream']:.4f} ms/record, "
                f"channel {1000 * got['channel']:.4f} ms/record",
                file=sys.stderr,
                flush=True,
            )

    asyncio.run(all_rounds())
    for i, vals in runs.items():
        print(
            f"{i:8} ms/record median {1000 * statistics.median(vals):.4f} "
            f"(runs {[round(1000 * v, 4) for v in vals]})"
        )
    saved = 1000 * (statistics.median(runs["stream"]) - statistics.median(runs["channel"]))
    print(
        f"channel/stream by round {[round(x, 3) for x in ratios]}, "
        f"median {statistics.median(ratios):.3f}; saved {saved:.4f} ms/record"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
