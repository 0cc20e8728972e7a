"""Prometheus metrics of the worker, in a registry of its own (served at ``/metrics``).

Besides the worker's own series, the registry carries the process collector (CPU, RSS, open
files), the GC and platform collectors, and ``grounding_build_info``. Counters and histograms
export no ``_created`` series (they double the series count and no dashboard reads them).
"""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)

from worker import __version__

disable_created_metrics()  # type: ignore[no-untyped-call]


def _version_of(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


class Metrics:
    """Every metric the worker exports. One instance per process, passed down."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        for collector in (PROCESS_COLLECTOR, GC_COLLECTOR, PLATFORM_COLLECTOR):
            r.register(collector)
        self.build_info = Gauge(
            "grounding_build_info",
            "Always 1; the labels say which build runs.",
            ["version", "python", "faust"],
            registry=r,
        )
        self.build_info.labels(
            version=__version__,
            python=platform.python_version(),
            faust=_version_of("faust-streaming"),
        ).set(1)
        self.drafts = Counter(
            "grounding_drafts_total", "Drafts decided, by outcome.", ["outcome"], registry=r
        )
        self.failure_codes = Counter(
            "grounding_failure_codes_total",
            "Failure codes found in decided drafts.",
            ["code"],
            registry=r,
        )
        self.dead_letters = Counter(
            "grounding_dead_letters_total",
            "Records dead-lettered, by class.",
            ["error_class"],
            registry=r,
        )
        self.store_latency = Histogram(
            "grounding_store_fetch_seconds",
            "Latency of one batched evidence look-up, by store (postgres, mongo).",
            ["store"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
            registry=r,
        )
        self.store_retries = Counter(
            "grounding_store_retries_total",
            "Retries of a batched look-up, by the store that was unavailable.",
            ["store"],
            registry=r,
        )
        self.batch_size = Histogram(
            "grounding_batch_size",
            "Records per processed batch.",
            buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
            registry=r,
        )
        self.consumer_lag = Gauge(
            "grounding_consumer_lag",
            "Records past the group's committed offset, per topic and owned partition "
            "(log-end offset from the broker minus the committed offset).",
            ["topic", "partition"],
            registry=r,
        )
        self.draft_latency = Histogram(
            "grounding_draft_latency_seconds",
            "End to end: from the draft's produced_at (since=produced_at; else its record's "
            "timestamp, since=record) to the broker acknowledging its outputs. Producer clocks "
            "count: a clock ahead of the worker's is counted as 0.",
            ["since"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
            registry=r,
        )
        self.rebalances = Counter(
            "grounding_rebalances_total",
            "Consumer-group rebalances this process took part in (a new assignment received).",
            registry=r,
        )
        self.assigned_partitions = Gauge(
            "grounding_assigned_partitions",
            "Partitions of agent.drafts this process owns since the last rebalance.",
            registry=r,
        )
        self.kafka_reachable = Gauge(
            "grounding_kafka_reachable",
            "1 while the broker answers the worker's metadata probe, 0 once it has not for "
            "GW_READY_KAFKA_UNREACHABLE_S (kafka.unreachable logged, /ready 503).",
            registry=r,
        )
        self.kafka_reachable.set(1)
        self.rereads = Counter(
            "grounding_partition_rereads_total",
            "Partitions sought back to their committed offset by the stall watchdog.",
            registry=r,
        )
        self.ledger_rows = Counter(
            "grounding_ledger_rows_written_total", "Ledger rows the sink inserted.", registry=r
        )
        self.batch_stage_seconds = Histogram(
            "grounding_batch_stage_seconds",
            "Where a batch's time goes, by stage: window (its first record's wait for the batch "
            "to close), evidence (admission and the store look-up left after any read-ahead), "
            "decide (the verdicts, turn states and outputs), publish (until the broker "
            "acknowledged every output).",
            ["stage"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=r,
        )
        self.batch_seconds = Histogram(
            "grounding_batch_processing_seconds",
            "Wall time from taking a batch to its outputs acknowledged (every draft of the batch "
            "waits this long, plus the batch window).",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=r,
        )
