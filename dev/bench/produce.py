"""CPU per record of the worker's two produce paths, against the real broker.

    .venv/bin/python -m dev.bench.produce [--batches 20] [--drafts 200] [--rounds 5]

Settings come from the environment as the worker reads them (``KAFKA_BOOTSTRAP_SERVERS``). The
producer is the worker's own: the Faust app built by ``worker.stream.app`` (acks=all, zstd, its
batch and request sizes), started on its own. Each batch is what a decided draft batch publishes:
per draft an output (~2 KB JSON, keyed by turn), its ledger batch (~0.5 KB, same key) and its
turn-state changelog record (~0.1 KB, explicit partition), in decision order, on three private
6-partition topics (deleted afterwards).

The two paths, each handing a batch over and then awaiting every acknowledgement (what
``BatchProcessor._publish`` does):

- ``per_record``: ``ProducerPublisher.send`` per record (Faust ``Producer.send`` -> aiokafka
  ``send``), ``GW_PRODUCE_BATCHED=false``;
- ``batched``: one ``ProducerPublisher.send_many`` (aiokafka ``send_batch`` per partition).

Rounds alternate the paths (which goes first alternates too); a round times ``--batches`` batches
per path by the process's CPU time (the producer's sender task, compression and response handling
run in this process, so they count) and wall time. The minimum over the rounds is printed, in
microseconds per record, and the ratio batched / per_record. Not a test: figures depend on the
machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import orjson
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from worker.core import OutRecord
from worker.kafka.publisher import ProducerPublisher
from worker.settings import Settings
from worker.stream.faust_app import new_app
from worker.stream.faust_internals import aiokafka_producer

PARTITIONS = 6


def _records(topics: tuple[str, str, str], drafts: int, batch: int) -> list[OutRecord]:
    out_t, ledger_t, changelog_t = topics
    records: list[OutRecord] = []
    headers = (("traceparent", b"00-" + secrets.token_hex(16).encode() + b"-00f067aa0ba902b7-01"),)
    for d in range(drafts):
        turn = f"turn-{batch}-{d}-{secrets.token_hex(4)}".encode()
        answer = {
            "schema_version": 1,
            "turn_id": turn.decode(),
            "tenant_id": "acme",
            "markdown": " ".join(f"Claim {i}: revenue rose {i}% [OBS-{i}]." for i in range(40)),
            "claims": [{"index": i, "status": "cited", "evidence": [f"OBS-{i}"]} for i in range(8)],
        }
        ledger = {
            "turn_id": turn.decode(),
            "tenant_id": "acme",
            "outcome": "grounded",
            "citations": [{"id": f"OBS-{i}", "kind": "OBS", "ok": True} for i in range(10)],
        }
        state = {"phase": "done", "attempt": 0, "digest": secrets.token_hex(16)}
        records.append(OutRecord(out_t, turn, orjson.dumps(answer), headers, None))
        records.append(OutRecord(ledger_t, turn, orjson.dumps(ledger), (), None))
        records.append(OutRecord(changelog_t, turn, orjson.dumps(state), (), d % PARTITIONS))
    return records


async def _per_record(publisher: ProducerPublisher, records: Sequence[OutRecord]) -> None:
    acks: list[Awaitable[object]] = []
    for record in records:
        acks.append(await publisher.send(record))
    for ack in acks:
        await ack


async def _batched(publisher: ProducerPublisher, records: Sequence[OutRecord]) -> None:
    acks = await publisher.send_many(records)
    await asyncio.wait(acks)
    for ack in acks:
        ack.result()


async def _timed(
    path: Callable[[ProducerPublisher, Sequence[OutRecord]], Awaitable[None]],
    publisher: ProducerPublisher,
    batches: list[list[OutRecord]],
) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    for records in batches:
        await path(publisher, records)
    return time.process_time() - cpu, time.perf_counter() - wall


async def measure(args: argparse.Namespace) -> None:
    run = secrets.token_hex(4)
    topics = (f"bench-produce-out-{run}", f"bench-produce-ledger-{run}", f"bench-produce-cl-{run}")
    data_dir = Path(tempfile.mkdtemp(prefix="bench-produce-"))
    settings = Settings(app_id=f"bench-produce-{run}", data_dir=data_dir)
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap_servers)
    await admin.start()
    await admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in topics])
    app = new_app(settings)
    await app.producer.start()
    publisher = ProducerPublisher(app.producer, lambda: aiokafka_producer(app.producer))
    paths = {"per_record": _per_record, "batched": _batched}
    best: dict[str, tuple[float, float]] = {}
    try:
        warm = [_records(topics, args.drafts, -1 - w) for w in range(3)]  # leaders elected
        for path in paths.values():
            await _timed(path, publisher, warm)
        n = args.batches * args.drafts * 3
        for r in range(args.rounds):
            order = list(paths) if r % 2 == 0 else list(reversed(paths))
            for name in order:
                batches = [_records(topics, args.drafts, b) for b in range(args.batches)]
                cpu, wall = await _timed(paths[name], publisher, batches)
                us = (cpu / n * 1e6, wall / n * 1e6)
                print(f"round {r} {name}: cpu {us[0]:.1f} us/record, wall {us[1]:.1f} us/record")
                prev = best.get(name)
                best[name] = us if prev is None else (min(prev[0], us[0]), min(prev[1], us[1]))
    finally:
        await app.producer.stop()
        await admin.delete_topics(list(topics))
        await admin.close()
    for name, (cpu, wall) in best.items():
        print(f"{name}_cpu_us_per_record={cpu:.1f} {name}_wall_us_per_record={wall:.1f}")
    ratio = best["batched"][0] / best["per_record"][0]
    print(f"batched_vs_per_record_cpu={ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m dev.bench.produce", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--batches", type=int, default=20, help="batches per path per round")
    parser.add_argument("--drafts", type=int, default=200, help="drafts per batch (3 records each)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds; min is kept")
    if not {"KAFKA_BOOTSTRAP_SERVERS", "GW_KAFKA_BOOTSTRAP_SERVERS"} & set(os.environ):
        parser.error('set KAFKA_BOOTSTRAP_SERVERS (eval "$(scripts/services env)")')
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
