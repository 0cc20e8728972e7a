"""Prometheus metrics of the worker, in a registry of its own (served at ``/metrics``)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class Metrics:
    """Every metric the worker exports. One instance per process, passed down."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
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
            "Records behind the high-water mark, per partition of agent.drafts.",
            ["partition"],
            registry=r,
        )
        self.rereads = Counter(
            "grounding_partition_rereads_total",
            "Partitions sought back to their committed offset by the stall watchdog.",
            registry=r,
        )
        self.ledger_rows = Counter(
            "grounding_ledger_rows_written_total", "Ledger rows the sink inserted.", registry=r
        )
