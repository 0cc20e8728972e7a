"""A safety net for records Faust fetched but never delivered: re-read a stalled partition.

Around a restart or a rebalance, faust-streaming can advance its fetch position past a record it
never hands to the agent (the fetcher resumes before the seek to committed offsets; cf. faust
#216). Nothing is acknowledged for that record, so its offset is never committed past; but
nothing reads it again either until the next rebalance, and a later record of the same partition
(a deadline control record, say) can be decided first. The contract wants every draft decided, in
order, and nothing lost.

The watchdog notices the symptom without relying on Faust's internals: while the agent is idle, a
partition of ``agent.drafts`` whose committed offset stays below the log end for
``stall_after_s`` is sought back to its committed offset. Records are then read again from there;
those already decided are decided again with the same outputs and event ids (the turn state
makes a repeated draft change nothing), so the cost of a false alarm is a few duplicates.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping
from types import TracebackType
from typing import Any, NamedTuple, Self

import faust
import structlog
from aiokafka import AIOKafkaConsumer, TopicPartition

from worker.kafka.access import client_security
from worker.runtime.metrics import Metrics
from worker.settings import Settings

log = structlog.get_logger("worker.stall_watchdog")


class Lag(NamedTuple):
    """Where a partition's consumer group stands against the log."""

    committed: int
    end: int


class StallDetector:
    """Pure bookkeeping: which partitions have lagged without progress for too long."""

    def __init__(self, stall_after_s: float) -> None:
        self._stall_after_s = stall_after_s
        #: partition -> (committed offset when first seen lagging, since when)
        self._lagging: dict[int, tuple[int, float]] = {}

    def observe(self, partition: int, lag: Lag, now: float) -> bool:
        """Record one observation; ``True`` when the partition must be re-read."""
        if lag.committed >= lag.end:
            self._lagging.pop(partition, None)
            return False
        seen = self._lagging.get(partition)
        if seen is None or seen[0] != lag.committed:
            self._lagging[partition] = (lag.committed, now)
            return False
        if now - seen[1] < self._stall_after_s:
            return False
        self._lagging.pop(partition, None)
        return True

    def reset(self) -> None:
        """Forget every observation (the agent made progress, or partitions moved)."""
        self._lagging.clear()


class OffsetProbe:
    """Reads the group's committed offsets and the log-end offsets, without joining the group."""

    def __init__(self, settings: Settings) -> None:
        self._topic = settings.topics.drafts
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=settings.kafka_bootstrap_servers,
            **client_security(settings),
            group_id=settings.app_id,
            enable_auto_commit=False,
        )

    async def __aenter__(self) -> Self:
        await self._consumer.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._consumer.stop()

    async def starts(self, partitions: Collection[int]) -> Mapping[int, int]:
        """Where the group resumes each partition: its committed offset, else the log start."""
        return {p: lag.committed for p, lag in (await self.lag(partitions)).items()}

    async def lag(self, partitions: Collection[int]) -> Mapping[int, Lag]:
        """Committed and end offset of each partition (no commit yet: its first offset)."""
        tps = [TopicPartition(self._topic, p) for p in partitions]
        if not tps:
            return {}
        ends = await self._consumer.end_offsets(tps)
        starts = await self._consumer.beginning_offsets(tps)
        out: dict[int, Lag] = {}
        for tp in tps:
            committed = await self._consumer.committed(tp)
            base = committed if committed is not None else starts[tp]
            out[tp.partition] = Lag(committed=base, end=ends[tp])
        return out


async def watch_partitions(
    app: Any, settings: Settings, metrics: Metrics, *, busy: Callable[[], bool]
) -> None:
    """Run for the app's lifetime: publish the lag of the owned partitions at every check (from
    the broker's end offsets, so it keeps growing while the agent is stuck), and look for stalls
    while the agent is idle."""
    detector = StallDetector(settings.stall_after_s)
    reported: set[int] = set()
    async with OffsetProbe(settings) as probe:
        while True:
            await asyncio.sleep(settings.stall_check_interval_s)
            if app.rebalancing:
                detector.reset()
                continue
            owned = {
                tp.partition
                for tp in app.assignor.assigned_actives()
                if tp.topic == settings.topics.drafts
            }
            try:
                lags = await probe.lag(owned)
            except Exception as exc:  # noqa: BLE001 - a failed probe only delays the check
                log.warning("stall_check.failed", error=type(exc).__name__)
                continue
            for gone in reported - owned:
                metrics.consumer_lag.remove(settings.topics.drafts, str(gone))
            reported = set(lags)
            for partition, lag in lags.items():
                metrics.consumer_lag.labels(
                    topic=settings.topics.drafts, partition=str(partition)
                ).set(max(0, lag.end - lag.committed))
            if busy():
                detector.reset()
                continue
            now = time.monotonic()
            for partition, lag in lags.items():
                if detector.observe(partition, lag, now) and not busy():
                    log.warning(
                        "partition.reread",
                        partition=partition,
                        committed=lag.committed,
                        end=lag.end,
                    )
                    metrics.rereads.inc()
                    await app.consumer.seek(
                        faust.types.TP(settings.topics.drafts, partition), lag.committed
                    )
