"""CPU per draft of ``BatchProcessor.process`` around the pure core, in one process.

    .venv/bin/python -m dev.bench.route [--batches 5] [--size 200] [--rounds 9] [--profile N]

The drafts are the benchmark's mix (``bench``: its corpus and generator, one tenant,
~2.2 KB answers), in batches of ``--size``, decided in order so a later batch's second attempts
find their turn's state. Everything around the processor is the worker's own code over in-memory
parts: the Faust turn table's store (``FaustTurnStore`` over a dict, changelog deferred and
published with the batch, as ``worker.stream.app`` wires it), the bulk publisher
(``ProducerPublisher.send_many`` over aiokafka ``BatchBuilder``\\ s; the hand-over to the sender
is a done future), INFO logging rendered to ``/dev/null``, the real metrics registry. The
evidence store is the core's in-memory one (its fetch is a dict walk: the worker's real store
round trip is not counted here).

Two figures per round, in microseconds per draft, same drafts:

- ``core``: what ``process`` asks of the pure core, ``admit`` + ``judge`` per draft, the turn
  state kept as values between drafts (no table);
- ``process``: the whole ``BatchProcessor.process`` of every batch.

``process - core`` is the per-draft cost of the shell this script is about: classification,
evidence resolution, turn table reads and writes, trace scope, metrics, the log line, outgoing
records and the publisher's hand-over. The collector is paused while timing (as the worker
pauses it inside a batch). The minimum over ``--rounds`` is printed; rounds alternate the order.
Not a test: figures depend on the machine.

``--profile N``: instead, cProfile ``process`` and print the N functions with the most own time.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import cProfile
import gc
import os
import pstats
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from aiokafka.producer.message_accumulator import BatchBuilder

from dev.bench import corpus as bench_corpus
from dev.bench import drafts as bench_drafts
from worker.core import (
    EnvelopeRejection,
    Incoming,
    InMemoryEvidenceStore,
    OutRecord,
    PolicyBook,
    TurnState,
    admit,
    judge,
)
from worker.core import batch as core_batch
from worker.kafka.publisher import ProducerPublisher
from worker.runtime.logs import configure_logging
from worker.runtime.metrics import Metrics
from worker.settings import Settings
from worker.stream.faust_app import PRODUCER_BATCH_BYTES as BATCH_BYTES
from worker.stream.faust_internals import RocksPartitions
from worker.stream.processing.pipeline import BatchProcessor
from worker.stream.turns.table import FaustTurnStore

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
PARTITIONS = 4
CHANGELOG = "bench-route-turns-changelog"


class _Table:
    """What ``FaustTurnStore`` reads of a Faust table: its local data (``memory://``)."""

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}

    def send_changelog(self, *args: Any, **kwargs: Any) -> None:
        return None


class _Kafka:
    """What ``ProducerPublisher.send_many`` uses of aiokafka's producer; acknowledges at once."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.handed = 0

    def client(self) -> _Kafka:
        return self

    def create_batch(self) -> BatchBuilder:
        return BatchBuilder(BATCH_BYTES, 0)

    async def partitions_for(self, topic: str) -> set[int]:
        return set(range(PARTITIONS))

    async def send_batch(self, builder: BatchBuilder, topic: str, *, partition: int) -> Any:
        self.handed += builder.record_count()
        fut = self._loop.create_future()
        fut.set_result(None)
        return fut


def inputs(batches: int, size: int) -> tuple[InMemoryEvidenceStore, list[list[Incoming]]]:
    """The corpus as an in-memory store and the mix's drafts in batches."""
    corpus, rows = bench_corpus.build("route", 1, 5_000_000)
    evidence = bench_corpus.records(rows)
    mix = bench_drafts.MixGenerator(corpus.tenants, run_id=0x7011E, seed=11)
    out: list[list[Incoming]] = []
    offset = 0
    for n in range(batches):
        batch = []
        for d in mix.take(size):
            batch.append(
                Incoming(
                    topic="agent.drafts",
                    partition=d.index % PARTITIONS,
                    offset=offset,
                    timestamp_ms=int((NOW + timedelta(seconds=n)).timestamp() * 1000),
                    key=d.key,
                    value=d.value,
                    headers=tuple(d.headers),
                )
            )
            offset += 1
        out.append(batch)
    return InMemoryEvidenceStore(evidence), out


def core_only(
    store: InMemoryEvidenceStore, batches: Sequence[Sequence[Incoming]], settings: Settings
) -> Callable[[], None]:
    """``admit`` + ``judge`` of every draft, turn states kept as values."""
    policies = PolicyBook()
    found = [
        asyncio.run(
            store.fetch_batch(
                {
                    a.tenant_id: set(a.refs)
                    for a in (
                        admit(r.key, r.value, max_bytes=settings.max_draft_bytes, policies=policies)
                        for r in batch
                    )
                    if not isinstance(a, EnvelopeRejection)
                }
            )
        )
        for batch in batches
    ]

    def run() -> None:
        states: dict[str, TurnState] = {}
        for batch, evidence in zip(batches, found, strict=True):
            admitted = [
                admit(r.key, r.value, max_bytes=settings.max_draft_bytes, policies=policies)
                for r in batch
            ]
            for a in admitted:
                if isinstance(a, EnvelopeRejection):
                    continue
                turn = a.draft.turn_id
                j = judge(
                    a,
                    states.get(turn),
                    evidence.get(a.tenant_id, {}),
                    NOW,
                    retention_s=settings.turn_retention_s,
                )
                if j.decision is not None and j.decision.state is not None:
                    states[turn] = j.decision.state

    return run


def _rocksdb_table(root: Path, run: int) -> Any:
    """A Faust table in RocksDB (rocksdict) as the worker's, in a directory of its own."""
    import faust  # noqa: PLC0415 - only for --store rocksdb

    app = faust.App(
        f"bench-route-{run}", store="rocksdb://", datadir=str(root / str(run)), autodiscover=False
    )
    return app.Table("turns", default=None, key_type=bytes, value_type=bytes, partitions=PARTITIONS)


def whole_process(
    store: InMemoryEvidenceStore,
    batches: Sequence[Sequence[Incoming]],
    settings: Settings,
    table_store: str = "memory",
) -> tuple[Callable[[], None], Callable[[], None]]:
    """``BatchProcessor.process`` of every batch, a fresh processor and turn table each run; and
    what opens the next run's table (call it before timing a run)."""
    metrics = Metrics()
    tables: list[Any] = []
    runs = iter(range(1_000_000))
    root = Path(tempfile.mkdtemp(prefix="bench-route-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)

    def fresh_table() -> Any:
        if table_store == "memory":
            return _Table()
        table = _rocksdb_table(root, next(runs))
        databases = RocksPartitions(table.data)
        for partition in range(PARTITIONS):  # every database open, as after an assignment
            databases.db(partition)
        return table

    def run() -> None:
        table = tables.pop() if tables else fresh_table()

        async def go() -> None:
            loop = asyncio.get_running_loop()
            kafka = _Kafka(loop)
            turns = FaustTurnStore(table, defer_changelog=True)

            def changelog() -> list[OutRecord]:
                return [
                    OutRecord(CHANGELOG, key, value, (), partition)
                    for partition, key, value in turns.drain_unsent()
                ]

            processor = BatchProcessor(
                settings=settings,
                evidence=store,
                turns=turns,
                publisher=ProducerPublisher(kafka, kafka.client),
                policies=PolicyBook(),
                metrics=metrics,
                worker_version="bench",
                clock=lambda: NOW,
                also_publish=changelog,
            )
            for batch in batches:
                await processor.process(batch)

        asyncio.run(go())

    def prepare() -> None:
        """Open the next run's table (not timed)."""
        if not tables:
            tables.append(fresh_table())

    return run, prepare


def shell_only(process: Callable[[], None]) -> Callable[[], None]:
    """``process`` with the core's answers replayed: ``admit`` and ``judge`` (as the core's
    batch calls them) return what they returned in a recorded run, so only the shell is timed."""
    admits: dict[int, Any] = {}
    judges: list[Any] = []
    # The names the core's batch module calls (imported there, so set through its namespace).
    names = vars(core_batch)
    real_admit, real_judge = names["admit"], names["judge"]

    def record_admit(key: bytes | None, value: bytes, **kw: Any) -> Any:
        admits[id(value)] = answer = real_admit(key, value, **kw)
        return answer

    def record_judge(*args: Any, **kw: Any) -> Any:
        answer = real_judge(*args, **kw)
        judges.append(answer)
        return answer

    names.update(admit=record_admit, judge=record_judge)
    try:
        process()
    finally:
        names.update(admit=real_admit, judge=real_judge)

    def run() -> None:
        replay = iter(judges)
        names.update(
            admit=lambda key, value, **kw: admits[id(value)],
            judge=lambda *args, **kw: next(replay),
        )
        try:
            process()
        finally:
            names.update(admit=real_admit, judge=real_judge)

    return run


def timed(work: Callable[[], None], prepare: Callable[[], None] | None = None) -> float:
    if prepare is not None:
        prepare()
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        work()
        return time.process_time() - start
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m dev.bench.route", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument(
        "--store",
        choices=("memory", "rocksdb"),
        default="memory",
        help="the turn table's store (rocksdb: the worker's default, in a temporary directory)",
    )
    args = parser.parse_args()
    devnull = open(os.devnull, "w")  # noqa: SIM115 - the log stream for the whole run
    configure_logging("INFO", stream=devnull)
    settings = Settings()
    store, batches = inputs(args.batches, args.size)
    drafts = sum(len(b) for b in batches)
    core = core_only(store, batches, settings)
    process, prepare = whole_process(store, batches, settings, args.store)
    process()  # warm-up: imports, caches, the first registry children
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3):
            process()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.profile)
        return
    shell = shell_only(process)
    times: dict[str, list[float]] = {"core": [], "process": [], "shell": []}
    works = [("core", core), ("process", process), ("shell", shell)]
    for n in range(args.rounds):
        for name, work in works[n % 3 :] + works[: n % 3]:
            times[name].append(timed(work, None if work is core else prepare))
    us = 1e6 / drafts
    c, p, sh = (min(times[k]) * us for k in ("core", "process", "shell"))
    print(
        orjson.dumps(
            {
                "drafts": drafts,
                "rounds": args.rounds,
                "store": args.store,
                "core_us": round(c, 1),
                "process_us": round(p, 1),
                "shell_us": round(sh, 1),
            }
        ).decode()
    )
    print(
        f"core {c:.1f} us/draft, process {p:.1f} us/draft (process - core {p - c:.1f}), "
        f"shell alone (the core's answers replayed) {sh:.1f} us/draft"
    )


if __name__ == "__main__":
    main()
