"""``grounding-worker replay``: re-publish chosen dead letters to ``agent.drafts`` (contract §7).

A batch job. It reads the replay log (what earlier runs replayed), then the DLQ up to the end
offsets it finds at start, decides per record (``replay_select.replay_action``), and re-publishes
the chosen ones with their key, value and headers and ``dlq.replay.count`` raised by one. Each
replayed (partition, offset) is written to the replay log only after the broker acknowledged the
draft, so a crash or a broker error loses nothing and a re-run resumes where the log says.

Sends are pipelined in chunks: a chunk's drafts are sent, all acknowledgements awaited, then the
acknowledged ones are logged (and that acknowledged too) before the next chunk starts. A failed
send stops the run after logging what was acknowledged (exit 3); running again continues.

Exit codes: 0 done (nothing to do included); 1 done, but some selected dead letters were at the
max replay count and were skipped; 2 usage error (the CLI); 3 could not finish (broker, topic).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, TextIO

import orjson
from aiokafka.errors import KafkaError

from worker import __version__
from worker.core import Incoming, replay_count
from worker.faults import BrokerUnavailable, GaveUpFault
from worker.kafka.bounded_read import acked_producer, batch_consumer, partitions_of, read_to_end
from worker.kafka.records import from_consumer_record
from worker.settings import Settings
from worker.tools.progress import Meter, Progress
from worker.tools.replay_log import ensure_log_topic, log_key, log_value, read_log
from worker.tools.replay_select import (
    ReplayAction,
    ReplayFilter,
    error_class_of,
    replay_action,
    replayed_headers,
    tenant_of,
)
from worker.tools.replay_summary import ReplaySummary

EXIT_OK = 0
EXIT_OVER_MAX = 1
EXIT_USAGE = 2
EXIT_FAILED = 3
#: Drafts in flight before their acknowledgements are awaited and logged.
CHUNK = 100


class ReplayOptions(NamedTuple):
    """Everything a run was asked for."""

    selection: ReplayFilter
    max_replays: int
    dry_run: bool = False
    limit: int | None = None
    #: Records per second; ``None``: as fast as the broker acknowledges.
    rate: float | None = None
    #: Ignore the replay log: replay again what earlier runs replayed.
    from_beginning: bool = False
    json: bool = False


class ReplayFailedError(GaveUpFault):
    """The run could not finish; what was acknowledged is logged."""


@dataclass
class _Pending:
    record: Incoming
    ack: Awaitable[Any]


class _Pacer:
    """At most ``rate`` sends per second, evenly spaced."""

    def __init__(self, rate: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = rate
        self._clock = clock
        self._start: float | None = None
        self._sent = 0

    async def wait(self) -> None:
        if self._rate is None:
            return
        now = self._clock()
        if self._start is None:
            self._start = now
        due = self._start + self._sent / self._rate
        self._sent += 1
        if due > now:
            await asyncio.sleep(due - now)


def chunk_size(rate: float | None) -> int:
    """Keep acknowledgement and logging about a tenth of a second behind the sends."""
    if rate is None:
        return CHUNK
    return max(1, min(CHUNK, int(rate / 10)))


class _Run:
    def __init__(
        self,
        settings: Settings,
        options: ReplayOptions,
        summary: ReplaySummary,
        progress: Progress,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.options = options
        self.summary = summary
        self.progress = progress
        self.producer: Any = None
        self.pending: list[_Pending] = []
        self.pacer = _Pacer(options.rate)
        self.chunk = chunk_size(options.rate)
        self.clock = clock
        #: The DLQ records this run reads, once their end offsets are known.
        self.meter: Meter | None = None

    def reading(self, total: int) -> None:
        """The run reads ``total`` DLQ records (by their offsets): time them from now."""
        self.meter = Meter(total, clock=self.clock)

    def show(self, *, force: bool = False) -> None:
        """``replay: read 120/450 (26.7%), replayed 100, skipped 20 (0 at max), 85.2/s, eta 4s``
        (without the total, the rate and the time left until the end offsets are known)."""
        s = self.summary
        verb = "planned" if self.options.dry_run else "replayed"
        done = s.planned if self.options.dry_run else s.replayed
        skipped = f"skipped {s.scanned - s.planned} ({s.skipped_over_max} at max)"
        if self.meter is None:
            text = f"replay: read {s.scanned}, {verb} {done}, {skipped}"
        else:
            read = self.meter.read(s.scanned)
            text = f"replay: read {read.done}, {verb} {done}, {skipped}, {read.pace}"
        self.progress.update(text, force=force)

    async def take(self, record: Incoming, done: set[tuple[int, int]]) -> None:
        """Decide one dead letter, count it, and send it if it is to be replayed."""
        options = self.options
        tenant = tenant_of(record.value)
        what = replay_action(
            record,
            tenant,
            options.selection,
            already_replayed=(record.partition, record.offset) in done,
            max_replays=options.max_replays,
            replays_so_far=self.summary.planned,
            limit=options.limit,
        )
        self.summary.note(record, tenant, what)
        if what is ReplayAction.REPLAY and not options.dry_run:
            await self.send(record)
        self.show()

    async def send(self, record: Incoming) -> None:
        await self.pacer.wait()
        headers = replayed_headers(record.headers, replay_count(record))
        ack = await self.producer.send(
            self.settings.topics.drafts, record.value, key=record.key, headers=list(headers)
        )
        self.pending.append(_Pending(record, ack))
        if len(self.pending) >= self.chunk:
            await self.flush()

    async def flush(self) -> None:
        """Await the chunk's acknowledgements; log the acknowledged; fail if any send failed."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        results = await asyncio.gather(*(p.ack for p in pending), return_exceptions=True)
        acked = [
            p.record
            for p, r in zip(pending, results, strict=True)
            if not isinstance(r, BaseException)
        ]
        now_ms = int(time.time() * 1000)
        logged = [
            await self.producer.send(
                self.settings.replay_log,
                log_value(
                    replayed_at_ms=now_ms,
                    replay_count=replay_count(r) + 1,
                    error_class=error_class_of(r),
                    version=__version__,
                ),
                key=log_key(r.partition, r.offset).encode("ascii"),
            )
            for r in acked
        ]
        log_results = await asyncio.gather(*logged, return_exceptions=True)
        failed = [r for r in (*results, *log_results) if isinstance(r, BaseException)]
        self.summary.replayed += sum(1 for r in log_results if not isinstance(r, BaseException))
        self.show()
        if failed:
            raise ReplayFailedError(
                f"{len(failed)} publish(es) failed ({type(failed[0]).__name__}); "
                f"{self.summary.replayed} replayed and logged so far: run again to continue"
            )


class _Plan(NamedTuple):
    """What one run reads: the DLQ partitions, their offset bounds, and what was replayed."""

    partitions: list[int]
    start: dict[int, int] | None
    stop: dict[int, int] | None
    done: set[tuple[int, int]]


async def _plan(consumer: Any, settings: Settings, options: ReplayOptions) -> _Plan:
    """The partitions and offsets the options select; the replay log unless ignored."""
    dlq = settings.topics.dlq
    partitions = await partitions_of(consumer, dlq)
    if partitions is None:
        raise ReplayFailedError(f"dead-letter topic {dlq!r} does not exist")
    selection = options.selection
    if selection.partitions:
        missing = sorted(selection.partitions - set(partitions))
        if missing:
            raise ReplayFailedError(f"{dlq!r} has no partition {missing}")
        partitions = sorted(selection.partitions)
    done = set() if options.from_beginning else await read_log(consumer, settings)
    start = stop = None
    if selection.from_offset is not None:
        start = dict.fromkeys(partitions, selection.from_offset)
    if selection.to_offset is not None:
        stop = dict.fromkeys(partitions, selection.to_offset + 1)
    return _Plan(partitions, start, stop, done)


async def _replay(
    settings: Settings, options: ReplayOptions, summary: ReplaySummary, progress: Progress
) -> None:
    run = _Run(settings, options, summary, progress)
    consumer = batch_consumer(settings)
    await consumer.start()
    try:
        plan = await _plan(consumer, settings, options)
        if not options.dry_run:
            await ensure_log_topic(settings)
            run.producer = acked_producer(settings)
            await run.producer.start()
        try:
            async for raw in read_to_end(
                consumer,
                settings.topics.dlq,
                plan.partitions,
                start=plan.start,
                stop=plan.stop,
                stall_timeout_s=settings.replay_read_timeout_s,
                on_total=run.reading,
            ):
                await run.take(from_consumer_record(raw), plan.done)
            await run.flush()
        finally:
            if run.producer is not None:
                await run.producer.stop()
    finally:
        await consumer.stop()
    run.show(force=True)


def run_replay(
    settings: Settings,
    options: ReplayOptions,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run one replay; print the summary on ``out``, progress on ``err``; return the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    summary = ReplaySummary(dry_run=options.dry_run, max_replays=options.max_replays)
    progress = Progress(err)
    failure: str | None = None
    try:
        asyncio.run(_replay(settings, options, summary, progress))
    except (ReplayFailedError, BrokerUnavailable) as exc:
        failure = str(exc)
    except (KafkaError, OSError, TimeoutError) as exc:
        failure = f"broker unreachable or refused: {type(exc).__name__}"
    if options.json:
        body = summary.as_json() | {"error": failure}
        out.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write("\n".join(summary.lines()) + "\n")
    if failure is not None:
        err.write(f"replay failed: {failure}\n")
        return EXIT_FAILED
    return EXIT_OVER_MAX if summary.skipped_over_max else EXIT_OK
