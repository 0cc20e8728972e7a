"""The measured scenarios: saturation, latency under open-loop load, scale-out, profile.

Each scenario gets its own topics (``bench.<run>.<name>.*``) and Faust app id, so no consumer
group, table or offset carries over; it stops every process it started and deletes its topics.
Every wait is bounded in time.

The worker runs as ``deploy/k8s`` runs it: ``GW_RUN_LEDGER_SINK=false``, with the ledger sink
(``grounding-worker ledger-sink``) as a process of its own beside it, whose CPU is measured and
reported next to the worker's (``--ledger-sink in-process`` runs the sink inside the worker as
before). A saturation run also checks that the ledger arrived: one batch on the ledger topic
per decided draft, every batch committed by the sink, and each decided draft's rows in Postgres.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import pymongo

from dev.bench import kafka_io
from dev.bench.corpus import TenantEvidence
from dev.bench.drafts import EXPECTED_ROLE, DraftRecord, MixGenerator
from dev.bench.procs import (
    CpuSampler,
    Proc,
    free_port,
    health,
    http_get,
    machine_cpu,
    python_argv,
    scrape,
    scrape_by_label,
)
from worker.settings import Settings

#: Outputs before this fraction of a saturation run are the warm-up and are not timed.
WARMUP_FRACTION = 0.05
WORKER_METRICS = (
    "grounding_store_fetch_seconds_count",
    "grounding_store_fetch_seconds_sum",
    "grounding_batch_size_count",
    "grounding_batch_size_sum",
    "grounding_drafts_total",
    "grounding_dead_letters_total",
)


@dataclass
class Bench:
    """What every scenario shares: settings, the run's ids, where logs go."""

    settings: Settings
    run_tag: str
    run_id: int
    out_dir: Path
    batch_size: int
    batch_wait_s: float
    partitions: int
    #: ``process``: the ledger sink as a process of its own (as deployed); ``in-process``: inside
    #: the worker (``GW_RUN_LEDGER_SINK=true``).
    ledger_sink: str = "process"
    #: Extra ``GW_*`` settings of the worker and its sink (``--worker-setting``), not the baselines.
    worker_settings: dict[str, str] = field(default_factory=dict)
    #: The floor's records (``dev.bench.shapes.write``), for ``floor`` and ``floor-raw``.
    templates: Path | None = None
    names: Counter[str] = field(default_factory=Counter)

    @property
    def sink_apart(self) -> bool:
        return self.ledger_sink == "process"

    @property
    def bootstrap(self) -> str:
        return self.settings.kafka_bootstrap_servers

    def unique(self, name: str) -> str:
        self.names[name] += 1
        return f"{name}{self.names[name]}" if self.names[name] > 1 else name


# --- figures -----------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, round(q / 100 * len(sorted_values) + 0.5) - 1))
    return float(sorted_values[rank])


def saturated_rate(out_ms: Sequence[int]) -> float:
    """Outputs per second between the end of the warm-up and the last output.

    Output timestamps have millisecond resolution: outputs that all share one millisecond are
    counted over that millisecond (a lower bound), not over a zero span.
    """
    ts = sorted(out_ms)
    k = int(len(ts) * WARMUP_FRACTION)
    span = max(ts[-1] - ts[k], 1) / 1000
    return (len(ts) - 1 - k) / span


def steady_cpu_ms(sampler: CpuSampler, name: str, out_ms: Sequence[int]) -> float | None:
    """CPU ms per draft of one process over the window ``saturated_rate`` times: from the end of
    the warm-up to the last output (its start-up and idle tail left out)."""
    ts = sorted(out_ms)
    if len(ts) <= 20:
        return None
    k = int(len(ts) * WARMUP_FRACTION)
    cpu = sampler.between(name, ts[k] / 1000, ts[-1] / 1000)
    drafts = len(ts) - 1 - k
    return round(1000 * cpu / drafts, 4) if cpu is not None and drafts > 0 else None


#: A stretch of time longer than this (ms) with drafts waiting and no output is a pause.
PAUSE_MS = 1000


def pauses(sent_and_out_ms: Sequence[tuple[int, int]], over_ms: float = PAUSE_MS) -> int:
    """Pauses: stretches with no output at all during which some draft waited for its own
    longer than ``over_ms`` (counted from the first draft's append time). A process that
    stalls (a blocked loop, a long collection, a rebalance) pauses; one that merely falls behind
    keeps publishing and does not (its latency shows that instead)."""
    if not sent_and_out_ms:
        return 0
    marks = sorted({min(at for at, _ in sent_and_out_ms), *(out for _, out in sent_and_out_ms)})
    count = 0
    for a, b in itertools.pairwise(marks):
        if b - a > over_ms and any(
            out >= b and b - max(a, at) > over_ms for at, out in sent_and_out_ms
        ):
            count += 1
    return count


def mongo_finds(url: str) -> tuple[int, int]:
    """(find, getMore) commands the MongoDB-protocol server has run so far (serverStatus)."""
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
        url, serverSelectionTimeoutMS=5000
    )
    try:
        status = client.admin.command("serverStatus")
    finally:
        client.close()
    commands = status.get("metrics", {}).get("commands", {})
    if commands:  # FerretDB
        return int(commands.get("find", {}).get("total", 0)), int(
            commands.get("getMore", {}).get("total", 0)
        )
    counters = status.get("opcounters", {})  # MongoDB
    return int(counters.get("query", 0)), int(counters.get("getmore", 0))


#: The worker's evidence look-ups (``worker.stores.postgres``: one tenant, several tenants), as
#: pg_stat_statements shows them.
EVIDENCE_SELECTS = [
    "SELECT id, acl, revoked_at, summary FROM %",
    "SELECT e.tenant_id, e.id, e.acl, e.revoked_at, e.summary FROM %",
]


async def pg_queries(dsn: str, tables: Sequence[str]) -> tuple[int, str]:
    """Evidence queries run so far, and how they were counted.

    Exact with ``pg_stat_statements`` (preloaded on the server); otherwise the tables' scan
    counters, which before PostgreSQL 17 count one index scan per element of ``id = ANY($2)``
    (and per pair of the several-tenant join) and so are only an upper bound.
    """
    conn = await asyncpg.connect(dsn)
    try:
        with contextlib.suppress(asyncpg.PostgresError):
            value = await conn.fetchval(
                "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements"
                " WHERE query LIKE ANY($1::text[])",
                EVIDENCE_SELECTS,
            )
            return int(value), "pg_stat_statements"
        await conn.execute("SELECT pg_stat_clear_snapshot()")
        value = await conn.fetchval(
            "SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0)"
            " FROM pg_stat_user_tables WHERE relname = ANY($1::text[])",
            list(tables),
        )
        return int(value), "scan counters (upper bound)"
    finally:
        await conn.close()


# --- processes -----------------------------------------------------------------------------------


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GW_")}
    env.update(extra)
    return env


def start_system(
    bench: Bench, system: str, settings: Settings, app_id: str, log_name: str
) -> tuple[Proc, int]:
    """Start ``worker``, ``profiled-worker``, ``ledger-sink``, a floor (``floor``: Faust,
    ``floor-raw``: aiokafka) or a passthrough (``faust``, ``raw``)."""
    port = free_port()
    data_dir = bench.out_dir / "data" / log_name
    data_dir.mkdir(parents=True, exist_ok=True)
    topics = settings.topics
    log_path = bench.out_dir / "logs" / f"{log_name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    gw = {
        "GW_APP_ID": app_id,
        "GW_WEB_PORT": str(port),
        "GW_DATA_DIR": str(data_dir),
        "GW_TOPIC_PARTITIONS": str(settings.topic_partitions),
        "GW_BATCH_SIZE": str(bench.batch_size),
        "GW_BATCH_WAIT_S": str(bench.batch_wait_s),
        **{f"GW_TOPICS__{f.upper()}": getattr(topics, f) for f in type(topics).model_fields},
        "GW_RUN_LEDGER_SINK": "false" if bench.sink_apart else "true",
    }
    if system in ("worker", "profiled-worker", "ledger-sink"):
        gw.update(bench.worker_settings)
    if system == "ledger-sink":
        argv = python_argv("-m", "worker.cli", "ledger-sink")
    elif system == "worker":
        argv = python_argv("-m", "worker.cli", "run")
    elif system == "profiled-worker":
        argv = python_argv(
            "-m", "dev.bench.profile_worker", str(bench.out_dir / f"profile-{log_name}.txt")
        )
    elif system == "faust":
        argv = python_argv(
            "-m", "dev.bench.passthrough", "faust", topics.drafts, topics.validated, app_id,
            str(bench.batch_size), str(bench.batch_wait_s), str(port), str(data_dir),
        )  # fmt: skip
    elif system in ("floor", "floor-raw"):
        mode = "faust" if system == "floor" else "raw"
        argv = python_argv("-m", "dev.bench.floor", mode, str(bench.templates))
    elif system == "raw":
        argv = python_argv(
            "-m", "dev.bench.passthrough", "raw", topics.drafts, topics.validated, app_id,
            str(bench.batch_size), str(bench.batch_wait_s),
        )  # fmt: skip
    else:
        raise ValueError(system)
    return Proc(log_name, argv, _env(gw), log_path), port


def output_topics(system: str, settings: Settings) -> list[str]:
    t = settings.topics
    if system in ("worker", "profiled-worker", "floor", "floor-raw"):
        return [t.validated, t.regenerate, t.could_not_ground, t.dlq]
    return [t.validated]


async def wait_outputs(
    collector: kafka_io.Collector, procs: Sequence[Proc], indices: Sequence[int], timeout_s: float
) -> bool:
    """Wait for every output while checking that the processes are still alive."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for p in procs:
            p.check_alive()
        if await collector.wait_for(indices, timeout_s=min(2.0, deadline - time.monotonic())):
            return True
    return False


class Scenario:
    """Topics, collector and processes of one scenario; ``async with`` cleans everything up."""

    def __init__(self, bench: Bench, name: str, system: str, partitions: int | None = None):
        self.bench = bench
        self.name = bench.unique(name)
        self.system = system
        self.prefix = f"bench.{bench.run_tag}.{self.name}"
        self.app_id = f"bench-{bench.run_tag}-{self.name}"
        self.settings = kafka_io.scenario_settings(
            bench.settings, self.prefix, partitions or bench.partitions, self.app_id
        )
        self.collector = kafka_io.Collector(
            bench.bootstrap, output_topics(system, self.settings), bench.run_id
        )
        self.procs: list[Proc] = []
        self.ports: list[int] = []
        #: The ledger sink beside the workers (``Bench.sink_apart``), apart from ``procs``.
        self.sink: Proc | None = None
        self.sink_port: int | None = None
        #: The sink's CPU seconds once it served ``/health`` (its start-up: imports, clients).
        self.sink_startup_cpu_s: float | None = None

    async def __aenter__(self) -> Scenario:
        await kafka_io.make_topics(self.settings)
        await self.collector.start()
        return self

    def start(self, system: str | None = None) -> Proc:
        n = len(self.procs)
        proc, port = start_system(
            self.bench, system or self.system, self.settings, self.app_id, f"{self.name}-{n}"
        )
        self.procs.append(proc)
        self.ports.append(port)
        return proc

    async def start_sink(self, timeout_s: float = 60) -> Proc | None:
        """The ledger sink of the scenario's workers, when it runs apart (else ``None``).

        Started first and waited for (its ``/health``), so its start-up does not compete with
        the worker's and is known (``sink_startup_cpu_s``).
        """
        if not (self.bench.sink_apart and self.sink is None and "worker" in self.system):
            return self.sink
        self.sink, self.sink_port = start_system(
            self.bench, "ledger-sink", self.settings, self.app_id, f"{self.name}-sink"
        )
        deadline = time.monotonic() + timeout_s
        while http_get(self.sink_port, "/health") is None:
            self.sink.check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: the ledger sink did not start in {timeout_s} s")
            await asyncio.sleep(0.2)
        self.sink_startup_cpu_s = self.sink.cpu_seconds()
        return self.sink

    @property
    def all_procs(self) -> list[Proc]:
        return self.procs + ([self.sink] if self.sink is not None else [])

    def stop_all(self) -> None:
        for p in self.all_procs:
            p.stop()

    async def __aexit__(self, *exc: object) -> None:
        self.stop_all()
        await self.collector.stop()
        with contextlib.suppress(Exception):
            await kafka_io.delete_topics(self.bench.bootstrap, [self.prefix, self.app_id])
        shutil.rmtree(self.bench.out_dir / "data", ignore_errors=True)

    async def drafts_in(self, records: Sequence[DraftRecord]) -> kafka_io.Sent:
        return await kafka_io.produce_all(
            self.bench.bootstrap, self.settings.topics.drafts, records
        )

    def role_counts(self, indices: Sequence[int]) -> dict[str, int]:
        t = self.settings.topics
        role = {
            t.validated: "validated",
            t.regenerate: "regenerate",
            t.could_not_ground: "could_not_ground",
            t.dlq: "dlq",
        }
        got = Counter(
            role[self.collector.seen[i].topic] for i in indices if i in self.collector.seen
        )
        return dict(got)


# --- saturation -------------------------------------------------------------------------------


async def saturation(
    bench: Bench,
    name: str,
    system: str,
    tenants: tuple[TenantEvidence, ...],
    n: int,
) -> dict[str, Any]:
    """Pre-load ``n`` drafts, start one consumer, time the outputs (warm-up trimmed)."""
    async with Scenario(bench, name, system) as sc:
        records = MixGenerator(tenants, bench.run_id, scope=sc.name).take(n)
        expected = Counter(EXPECTED_ROLE[r.category] for r in records)
        indices = [r.index for r in records]
        await sc.drafts_in(records)
        evidence_tables = [bench.settings.observations_table, bench.settings.events_table]
        dsn = bench.settings.postgres_dsn.get_secret_value()
        queries_before, _ = await pg_queries(dsn, evidence_tables)
        mongo_url = bench.settings.mongo_url.get_secret_value()
        finds_before = mongo_finds(mongo_url)
        sink = await sc.start_sink()
        busy0, total0 = machine_cpu()
        t_start = time.time()
        proc = sc.start()
        sampler = CpuSampler({"proc": proc}).start()
        try:
            complete = await wait_outputs(sc.collector, sc.all_procs, indices, max(120, n / 50))
        finally:
            await sampler.stop()
        busy1, total1 = machine_cpu()
        metrics = scrape(sc.ports[0], WORKER_METRICS) if "worker" in system else {}
        stages = _batch_stages(sc.ports[0]) if "worker" in system else None
        batches = (health(sc.ports[0]) or {}).get("batches") if "worker" in system else None
        cpu_s = proc.cpu_seconds() or 0.0
        rss = proc.peak_rss_mb()
        ledger: dict[str, Any] = {}
        if "worker" in system:
            ledger = await ledger_arrived(sc, records, sink)
        sc.stop_all()
        out_ms = [sc.collector.seen[i].timestamp_ms for i in indices if i in sc.collector.seen]
        result: dict[str, Any] = {
            "system": system,
            "log_name": proc.name,
            "tenants": len(tenants),
            "drafts": n,
            "outputs_seen": len(out_ms),
            "complete": complete,
            "throughput_per_s": round(saturated_rate(out_ms), 1) if len(out_ms) > 20 else None,
            "start_to_last_output_s": round(max(out_ms) / 1000 - t_start, 2) if out_ms else None,
            "first_output_after_s": round(min(out_ms) / 1000 - t_start, 2) if out_ms else None,
            "process_cpu_s": round(cpu_s, 2),
            "process_cpu_ms_per_draft": round(1000 * cpu_s / n, 3),
            # The process alone, while the timed drafts went through (start-up left out).
            "cpu_ms_per_draft_saturated": steady_cpu_ms(sampler, "proc", out_ms),
            "peak_rss_mb": round(rss, 1) if rss else None,
            "machine_cpu_busy": round((busy1 - busy0) / max(1.0, total1 - total0), 3),
        }
        if out_ms:
            span = max(out_ms) / 1000 - t_start
            result["process_cpu_share"] = round(cpu_s / span, 3) if span > 0 else None
        if "worker" in system:
            result |= cpu_split(bench, cpu_s, ledger.pop("sink_cpu_s"), n, sc.sink_startup_cpu_s)
            result["ledger"] = ledger
            await asyncio.sleep(0.5)  # the backends' exit flushed their statistics
            queries_after, method = await pg_queries(dsn, evidence_tables)
            scans = queries_after - queries_before
            finds = mongo_finds(mongo_url)
            mongo_queries = finds[0] - finds_before[0]
            fetches = metrics.get("grounding_store_fetch_seconds_count")
            result |= {
                "outcomes": sc.role_counts(indices),
                "expected_outcomes": dict(expected),
                "batches": batches,
                "mean_batch_size": round(n / batches, 1) if batches else None,
                "postgres_queries": scans,
                "postgres_queries_counted_by": method,
                "mongo_queries": mongo_queries,
                "mongo_get_mores": finds[1] - finds_before[1],
                # The whole run, warm-up included: where the batches' time went.
                "stage_ms_per_batch": _stages_between(_NO_STAGES, stages).get("stage_ms_per_batch")
                if stages
                else None,
                "store_queries_per_draft": round((scans + mongo_queries) / n, 4),
                "store_queries_per_draft_counted_by": method,
                # None when the worker's /metrics page does not answer.
                "store_fetch_calls": int(fetches) if fetches else None,
                "mean_store_fetch_ms": round(
                    1000 * metrics["grounding_store_fetch_seconds_sum"] / fetches, 2
                )
                if fetches
                else None,
            }
            if method != "pg_stat_statements" and fetches:
                # A tighter upper bound: each store call runs at most one query per Postgres
                # table (2) and MongoDB's finds are counted exactly.
                calls = (2 * int(fetches) + mongo_queries) / n
                if calls < result["store_queries_per_draft"]:
                    result["store_queries_per_draft"] = round(calls, 4)
                    result["store_queries_per_draft_counted_by"] = (
                        "worker store calls x 2 tables + MongoDB finds (upper bound)"
                    )
        return result


def cpu_split(
    bench: Bench, worker_s: float, sink_s: float | None, n: int, sink_startup_s: float | None = None
) -> dict[str, Any]:
    """CPU per draft of the worker, of the ledger sink, and of both (nothing left out).

    Both whole processes, start-up included (as the worker has always been measured);
    ``ledger_sink_startup_cpu_s`` says how much of the sink's was its start-up.
    """
    worker_ms = 1000 * worker_s / n
    sink_ms = 1000 * sink_s / n if sink_s is not None else None
    return {
        "ledger_sink_mode": bench.ledger_sink,
        "worker_cpu_ms_per_draft": round(worker_ms, 3),
        # In-process, the sink's CPU is the worker's: counted there, not apart.
        "ledger_sink_cpu_s": round(sink_s, 2) if sink_s is not None else None,
        "ledger_sink_startup_cpu_s": round(sink_startup_s, 2) if sink_startup_s else None,
        "ledger_sink_cpu_ms_per_draft": round(sink_ms, 3) if sink_ms is not None else None,
        "total_cpu_ms_per_draft": round(worker_ms + (sink_ms or 0.0), 3),
    }


async def ledger_arrived(
    sc: Scenario, records: Sequence[DraftRecord], sink: Proc | None, timeout_s: float = 120
) -> dict[str, Any]:
    """Whether every decided draft's ledger batch reached Postgres; the sink's CPU once it has.

    Decided: a draft whose output is not a dead letter. Waits (bounded) until the sink's group
    has committed every record of the ledger topic (it commits only after writing), then counts
    the decided drafts with rows in ``citation_ledger`` (their draft ids are this scenario's
    alone: ``MixGenerator``'s scope is the scenario's name).
    """
    bench, t = sc.bench, sc.settings.topics
    decided = [
        r
        for r in records
        if r.index in sc.collector.seen and sc.collector.seen[r.index].topic != t.dlq
    ]
    group = f"{sc.app_id}-ledger-sink"
    started = time.monotonic()
    published = committed = 0
    while time.monotonic() - started < timeout_s:
        for p in sc.all_procs:
            p.check_alive()
        published, committed = await kafka_io.ledger_progress(bench.bootstrap, t.ledger, group)
        if published >= len(decided) and committed >= published:
            break
        await asyncio.sleep(0.5)
    waited = time.monotonic() - started
    sink_cpu = sink.cpu_seconds() if sink is not None else None
    sink_rss = sink.peak_rss_mb() if sink is not None else None
    conn = await asyncpg.connect(bench.settings.postgres_dsn.get_secret_value())
    try:
        drafts, rows = await conn.fetchrow(
            f'SELECT count(DISTINCT l.draft_id), count(*) FROM "{bench.settings.ledger_table}" l'
            " JOIN unnest($2::text[], $3::text[]) AS d(turn_id, draft_id)"
            " ON l.turn_id = d.turn_id AND l.draft_id = d.draft_id"
            " WHERE l.tenant_id = ANY($1::text[])",
            sorted({r.tenant_id for r in decided}),
            [r.key.decode() for r in decided],
            [r.draft_id for r in decided],
        )
    finally:
        await conn.close()
    return {
        "decided_drafts": len(decided),
        "batches_published": published,
        "batches_committed_by_sink": committed,
        "drafts_with_rows_in_postgres": int(drafts),
        "rows_in_postgres": int(rows),
        "sink_caught_up_s_after_outputs": round(waited, 1),
        "arrived": published >= len(decided) == int(drafts) and committed >= published,
        "sink_cpu_s": sink_cpu,
        "sink_peak_rss_mb": round(sink_rss, 1) if sink_rss else None,
    }


# --- latency under an open-loop load ------------------------------------------------------------


async def latency(
    bench: Bench,
    name: str,
    system: str,
    tenants: tuple[TenantEvidence, ...],
    rates: Sequence[float],
    seconds: float,
) -> list[dict[str, Any]]:
    """One consumer; for each offered rate, an open-loop producer for ``seconds``: latency per
    draft, pauses, and the CPU per draft of the consumer's process (and of the ledger sink's)."""
    points = []
    async with Scenario(bench, name, system) as sc:
        gen = MixGenerator(tenants, bench.run_id, scope=sc.name)
        sink = await sc.start_sink()
        proc = sc.start()
        watched = {"proc": proc} | ({"sink": sink} if sink is not None else {})
        sampler = CpuSampler(watched).start()
        try:
            warm = gen.take(40, categories=["grounded"])
            await sc.drafts_in(warm)
            if not await wait_outputs(sc.collector, sc.all_procs, [r.index for r in warm], 180):
                raise RuntimeError(f"{sc.name}: no output for the warm-up drafts within 180 s")
            for rate in rates:
                points.append(await _latency_point(sc, gen, sampler, rate, seconds))
                await asyncio.sleep(1.0)
        finally:
            await sampler.stop()
        if "worker" in system:
            rss = proc.peak_rss_mb()
            for p in points:
                p["peak_rss_mb"] = round(rss, 1) if rss else None
    return points


async def _latency_point(
    sc: Scenario, gen: MixGenerator, sampler: CpuSampler, rate: float, seconds: float
) -> dict[str, Any]:
    bench, system = sc.bench, sc.system
    before = _batch_stages(sc.ports[0]) if "worker" in system else None
    count = max(20, int(rate * seconds))
    records = gen.take(count)
    indices = [r.index for r in records]
    t_send = time.time()
    sent = await kafka_io.produce_paced(bench.bootstrap, sc.settings.topics.drafts, records, rate)
    complete = await wait_outputs(sc.collector, sc.all_procs, indices, seconds + 120)
    sampler.sample()
    seen = sc.collector.seen
    in_order = sorted((sent.append_ms[i], i) for i in indices if i in seen)
    lat_in_order = [seen[i].timestamp_ms - at for at, i in in_order]
    lat = sorted(lat_in_order)
    out_ms = [seen[i].timestamp_ms for i in indices if i in seen]
    first_in = min(sent.append_ms.values())
    # Per second of the load: drafts and their worst latency, to tell stalls from noise.
    per_second: dict[int, list[int]] = {}
    for at, i in in_order:
        per_second.setdefault((at - first_in) // 1000, []).append(seen[i].timestamp_ms - at)
    point: dict[str, Any] = {
        "offered_per_s": round(rate, 1),
        "sent_per_s": round(count / max(1e-3, sent.last_send_s - sent.first_send_s), 1),
        "sender_max_late_ms": sent.max_late_ms,
        "achieved_per_s": round(len(out_ms) / max(1e-3, (max(out_ms) - first_in) / 1000), 1)
        if out_ms
        else None,
        "drafts": count,
        "complete": complete,
        "p50_ms": percentile(lat, 50),
        "p95_ms": percentile(lat, 95),
        "p99_ms": percentile(lat, 99),
        "max_ms": float(lat[-1]) if lat else None,
        f"pauses_over_{PAUSE_MS}ms": pauses([(at, seen[i].timestamp_ms) for at, i in in_order]),
        f"drafts_over_{PAUSE_MS}ms": sum(1 for v in lat if v > PAUSE_MS),
        "max_ms_per_second": [max(v) for _, v in sorted(per_second.items())],
    }
    # CPU per draft at this rate: from the first send to the last output (idle time included,
    # as a process at this rate spends it), the consumer's process alone; the sink apart.
    end = max(out_ms) / 1000 if out_ms else time.time()
    for key, label in (("proc", "cpu_ms_per_draft"), ("sink", "ledger_sink_cpu_ms_per_draft")):
        if key in sampler.samples:
            cpu = sampler.between(key, t_send, end)
            point[label] = round(1000 * cpu / count, 4) if cpu is not None else None
    if before is not None:
        point.update(_stages_between(before, _batch_stages(sc.ports[0])))
    return point


STAGES = ("window", "evidence", "decide", "publish")
_NO_STAGES: dict[str, dict[str, float]] = {"sum": {}, "count": {}, "size": {}}


def _batch_stages(port: int) -> dict[str, dict[str, float]]:
    """The worker's batch-stage histogram (sum and count by stage) and its batch sizes, now."""
    return {
        "sum": scrape_by_label(port, "grounding_batch_stage_seconds_sum", "stage"),
        "count": scrape_by_label(port, "grounding_batch_stage_seconds_count", "stage"),
        "size": scrape(port, ("grounding_batch_size_sum", "grounding_batch_size_count")),
    }


def _stages_between(
    before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]
) -> dict[str, Any]:
    """Mean ms per batch of each stage, and the mean batch size, between two scrapes."""
    out: dict[str, Any] = {}
    batches = after["size"].get("grounding_batch_size_count", 0.0) - before["size"].get(
        "grounding_batch_size_count", 0.0
    )
    if batches > 0:
        drafts = after["size"]["grounding_batch_size_sum"] - before["size"].get(
            "grounding_batch_size_sum", 0.0
        )
        out["batches"] = int(batches)
        out["mean_batch_size"] = round(drafts / batches, 1)
    stages = {}
    for stage in STAGES:
        n = after["count"].get(stage, 0.0) - before["count"].get(stage, 0.0)
        if n > 0:
            total = after["sum"].get(stage, 0.0) - before["sum"].get(stage, 0.0)
            stages[stage] = round(1000 * total / n, 1)
    if stages:
        out["stage_ms_per_batch"] = stages
    return out


# --- scale-out -----------------------------------------------------------------------------------


async def wait_assigned(sc: Scenario, partitions: int, timeout_s: float = 180) -> None:
    """Until every worker owns partitions and together they own all, twice in a row."""
    deadline = time.monotonic() + timeout_s
    stable = 0
    while time.monotonic() < deadline:
        for p in sc.procs:
            p.check_alive()
        docs = [health(port) for port in sc.ports]
        owned = [set(d.get("assigned_partitions", [])) if d else set() for d in docs]
        if (
            all(owned)
            and set().union(*owned) == set(range(partitions))
            and sum(map(len, owned)) == partitions
        ):
            stable += 1
            if stable >= 3:
                return
        else:
            stable = 0
        await asyncio.sleep(1.0)
    raise RuntimeError(f"{sc.name}: partitions not assigned to every worker within {timeout_s} s")


async def scale_out(
    bench: Bench, processes: int, tenants: tuple[TenantEvidence, ...], n: int, *, suffix: str = ""
) -> dict[str, Any]:
    """``processes`` workers in one group; a burst of ``n`` drafts once the group is stable."""
    async with Scenario(bench, f"scale{processes}{suffix}", "worker") as sc:
        gen = MixGenerator(tenants, bench.run_id, scope=sc.name)
        sink = await sc.start_sink()
        for _ in range(processes):
            sc.start()
        await wait_assigned(sc, sc.settings.topic_partitions)
        warm = gen.take(80, categories=["grounded"])
        await sc.drafts_in(warm)
        if not await wait_outputs(sc.collector, sc.all_procs, [r.index for r in warm], 120):
            raise RuntimeError(f"{sc.name}: no output for the warm-up drafts")
        records = gen.take(n)
        indices = [r.index for r in records]
        cpu0 = [p.cpu_seconds() or 0.0 for p in sc.procs]
        sink0 = sink.cpu_seconds() or 0.0 if sink is not None else None
        t0 = time.time()
        await sc.drafts_in(records)
        complete = await wait_outputs(sc.collector, sc.all_procs, indices, max(120, n / 50))
        cpu = [round((p.cpu_seconds() or 0.0) - c, 2) for p, c in zip(sc.procs, cpu0, strict=True)]
        # The sink's share of the burst: until it has committed the burst's ledger batches.
        ledger = await ledger_arrived(sc, [*warm, *records], sink)
        sink_s = (
            ledger["sink_cpu_s"] - sink0 if sink0 is not None and ledger["sink_cpu_s"] else None
        )
        out_ms = [sc.collector.seen[i].timestamp_ms for i in indices if i in sc.collector.seen]
        span = max(out_ms) / 1000 - t0 if out_ms else float("nan")
        return {
            "processes": processes,
            "drafts": n,
            "complete": complete,
            "throughput_per_s": round(saturated_rate(out_ms), 1) if len(out_ms) > 20 else None,
            "process_cpu_s": cpu,
            "process_cpu_ms_per_draft": round(1000 * sum(cpu) / n, 3),
            "process_cpu_share": [round(c / span, 3) for c in cpu] if span > 0 else None,
            **cpu_split(bench, sum(cpu), sink_s, n),
            "ledger_arrived": ledger["arrived"],
        }
