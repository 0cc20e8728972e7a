"""``scripts/bench [--quick]`` (``python -m dev.bench``): the worker end to end against its floor.

Progress goes to stderr; the table and, last, one line to stdout:
``cpu_ratio_vs_floor=<x.xx> p99_ms_at_500=<ms> p99_ms_at_500_50t=<ms>``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import sys
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dev.bench import corpus, kafka_io, report, scenarios, shapes
from worker.settings import Settings

#: Fixed offered rates of the latency points, drafts/s per worker process.
RATES_FULL = (250.0, 500.0)
RATES_QUICK = (500.0,)
#: ``BENCH_MONGO`` (set by scripts/bench): the server the evidence documents are on.
MONGO_SERVERS = {
    "ferretdb": "FerretDB 1.24 on SQLite (the test bed's; scans the collection for each find)",
    "memory": "mongo-java-server 1.46, in memory (the test bed's optional mongo-memory)",
}
#: More topics than this on the broker at start: warn (a test run's leftovers load the broker).
BUSY_BROKER_TOPICS = 200
#: The rate of the headline's p99 figures.
HEADLINE_RATE = 500.0


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _setting(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.startswith("GW_"):
        raise SystemExit(f"--worker-setting wants GW_NAME=VALUE, got {text!r}")
    return name, value


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="scripts/bench", description=__doc__)
    p.add_argument(
        "--quick",
        action="store_true",
        help="short run (~3 min): the floors and the worker saturated (1 tenant), and latency "
        "at 500 drafts/s for the floor and the worker (1 and --tenants tenants)",
    )
    p.add_argument("--drafts", type=int, help="drafts per worker saturation run")
    p.add_argument(
        "--floor-drafts",
        "--baseline-drafts",
        dest="floor_drafts",
        type=int,
        help="drafts per floor (and passthrough) saturation run",
    )
    p.add_argument("--latency-seconds", type=float, help="seconds of paced load per latency point")
    p.add_argument(
        "--rates",
        type=lambda text: tuple(float(r) for r in text.split(",")),
        help="offered drafts/s of the latency points, comma-separated "
        "(default 250,500; 500 with --quick)",
    )
    p.add_argument("--tenants", type=int, default=50, help="tenants of the multi-tenant run")
    p.add_argument("--batch-size", type=int, default=Settings.model_fields["batch_size"].default)
    p.add_argument(
        "--batch-wait-s", type=float, default=Settings.model_fields["batch_wait_s"].default
    )
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument(
        "--ledger-sink",
        choices=("process", "in-process"),
        default="process",
        help="the ledger sink as its own process beside the worker, as deploy/k8s runs it "
        "(default; its CPU is reported apart, never in the worker's), or inside the worker process",
    )
    p.add_argument(
        "--worker-setting",
        action="append",
        default=[],
        metavar="GW_NAME=VALUE",
        help="a setting for the worker (and its ledger sink) only, not the floors: "
        "a same-machine A/B of one lever (repeatable)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        help="rounds of each saturation run (floor and worker alternated, scale-out 1 and 2 "
        "processes alternated); the figures are the median run's, the range is reported "
        "(default 3, 1 with --quick)",
    )
    p.add_argument("--no-profile", action="store_true", help="full run without the profiled pass")
    p.add_argument("--out", type=Path, default=Path("bench-results"), help="results directory")
    a = p.parse_args(argv)
    a.drafts = a.drafts or (4000 if a.quick else 15000)
    a.floor_drafts = a.floor_drafts or (6000 if a.quick else 30000)
    a.latency_seconds = a.latency_seconds or (5.0 if a.quick else 20.0)
    a.rates = a.rates or (RATES_QUICK if a.quick else RATES_FULL)
    a.repeat = a.repeat or (1 if a.quick else 3)
    if a.repeat < 1:
        p.error("--repeat must be at least 1")
    return a


async def run(a: argparse.Namespace) -> dict[str, Any]:
    settings = Settings()
    started = datetime.now(UTC)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    run_tag = f"{stamp[4:8]}{stamp[9:15]}{random.randrange(100):02d}"
    out_dir = a.out.resolve() / f"run-{stamp}"
    log("the floor's records: the worker's own for a sample of the mix (in-process)")
    found = await shapes.templates()
    shapes.write(found, out_dir / "floor-templates.json")
    bench = scenarios.Bench(
        settings=settings,
        run_tag=run_tag,
        run_id=random.getrandbits(60) | 1,
        out_dir=out_dir,
        batch_size=a.batch_size,
        batch_wait_s=a.batch_wait_s,
        partitions=a.partitions,
        ledger_sink=a.ledger_sink,
        worker_settings=dict(_setting(s) for s in a.worker_setting),
        templates=out_dir / "floor-templates.json",
    )
    doc: dict[str, Any] = {
        "meta": {
            "started": started.isoformat(timespec="seconds"),
            "mode": "quick" if a.quick else "full",
            "machine": report.machine(),
            "interpreter": report.interpreter(),
            "git": report.git_revision(),
            "kafka": settings.kafka_bootstrap_servers,
            "mongo": mongo_server(),
        },
        "settings": {
            "batch_size": a.batch_size,
            "batch_wait_s": a.batch_wait_s,
            "partitions": a.partitions,
            "ledger_sink": a.ledger_sink,
            "worker_settings": a.worker_setting,
            "worker_drafts": a.drafts,
            "floor_drafts": a.floor_drafts,
            "latency_seconds_per_point": a.latency_seconds,
            "rates_per_s": list(a.rates),
            "saturation_rounds": a.repeat,
            "mix": "70% grounded, 15% regenerate, 5% could-not-ground, "
            "5% hidden-doc redaction, 5% malformed",
        },
        "floor_records": shapes.summary(found),
        "floor": {},
        "baselines": {},
        "worker": {},
    }
    topics = await kafka_io.topic_count(settings.kafka_bootstrap_servers)
    doc["meta"]["broker_topics_at_start"] = topics
    if topics > BUSY_BROKER_TOPICS:
        log(
            f"warning: the broker already holds {topics} topics (a test run's?); its background "
            "work on their partitions shares the cores and is measured too. "
            "`scripts/services clean` gives a fresh test bed."
        )
    stale = await corpus.remove_stale(settings)
    if stale:
        log(f"removed {stale} evidence rows and documents left by an earlier run that was killed")
    base = 7 * 10**15 + random.randrange(10**6) * 10**6
    doc["stores"] = {}
    async with seeded(settings, doc, "tenants_1", run_tag + "a", 1, base) as one:
        log(f"floor, raw aiokafka: {a.floor_drafts} drafts")
        doc["floor"]["aiokafka_raw"] = await scenarios.saturation(
            bench, "floorraw", "floor-raw", one, a.floor_drafts
        )
        log("  " + report.sat_line(doc["floor"]["aiokafka_raw"]))
        # The floor and the worker alternate, so a slow minute of the machine hits both.
        floors: list[dict[str, Any]] = []
        workers: list[dict[str, Any]] = []
        for r in range(a.repeat):
            log(f"floor, Faust on the worker's transport: {a.floor_drafts} drafts{_round(a, r)}")
            floors.append(
                await scenarios.saturation(
                    bench, f"floor{_suffix(r)}", "floor", one, a.floor_drafts
                )
            )
            log("  " + report.sat_line(floors[-1]))
            workers.append(await worker_saturation(a, bench, one, r))
        doc["floor"]["faust"] = report.median_run(floors)
        doc["cpu_rounds"] = [
            report._ratio(w["cpu_ms_per_draft_saturated"], f["cpu_ms_per_draft_saturated"])
            for w, f in zip(workers, floors, strict=True)
        ]
        doc["cpu_ms_per_draft_saturated"] = {
            "worker": report.median([w["cpu_ms_per_draft_saturated"] for w in workers]),
            "floor": report.median([f["cpu_ms_per_draft_saturated"] for f in floors]),
        }
        doc["worker"]["tenants_1"] = {"saturation": report.median_run(workers)}
        if not a.quick:
            await passthroughs(a, bench, doc, one)
        log(f"floor latency at {_rates(a)}, {a.latency_seconds} s each")
        doc["floor"]["latency"] = await scenarios.latency(
            bench, "latfloor", "floor", one, a.rates, a.latency_seconds
        )
        log("  " + report.latency_line(doc["floor"]["latency"]))
        await worker_latency(a, bench, doc, "tenants_1", one)
        if not a.quick:
            await full_extras(a, bench, doc, one)
    key = f"tenants_{a.tenants}"
    async with seeded(
        settings, doc, key, run_tag + "b", a.tenants, base + 10**5, docs_per_tenant=20
    ) as many:
        doc["worker"][key] = {}
        if not a.quick:
            runs = [await worker_saturation(a, bench, many, r) for r in range(a.repeat)]
            doc["worker"][key]["saturation"] = report.median_run(runs)
        await worker_latency(a, bench, doc, key, many)
    doc["meta"]["loadavg_at_end"] = list(os.getloadavg())
    doc["meta"]["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    report.finish(doc, tenants=a.tenants, headline_rate=HEADLINE_RATE)
    json_path = a.out / f"bench-{stamp}.json"
    svg_path = a.out / f"bench-{stamp}.svg"
    doc["meta"]["files"] = {"json": str(json_path), "svg": str(svg_path)}
    report.write(doc, json_path)
    svg_path.write_text(report.svg(doc))
    return doc


def _rates(a: argparse.Namespace) -> str:
    return ", ".join(f"{r:g}" for r in a.rates) + " drafts/s"


@contextlib.asynccontextmanager
async def seeded(
    settings: Settings, doc: dict[str, Any], key: str, tag: str, tenants: int, base: int, **kw: Any
) -> AsyncIterator[tuple[corpus.TenantEvidence, ...]]:
    """A corpus of ``tenants`` tenants in both stores for the scenarios inside; removed after."""
    evidence, rows = corpus.build(tag, tenants, base, **kw)
    log(f"seeding {tenants} tenant(s): {sum(map(len, rows.values()))} evidence entries")
    await corpus.seed(settings, rows)
    try:
        doc["stores"][key] = {
            "documents": len(rows["documents"]),
            "postgres_rows": len(rows["observations"]) + len(rows["events"]),
            "mongo_find_all_of_a_tenant_ms": corpus.probe_mongo(settings, evidence, rows),
        }
        yield evidence.tenants
    finally:
        await corpus.remove(settings, evidence)


def _suffix(r: int) -> str:
    """Each round's scenarios get topics and a group of their own."""
    return f"r{r + 1}" if r else ""


def _round(a: argparse.Namespace, r: int) -> str:
    return f" (round {r + 1} of {a.repeat})" if a.repeat > 1 else ""


async def worker_saturation(
    a: argparse.Namespace,
    bench: scenarios.Bench,
    tenants: tuple[corpus.TenantEvidence, ...],
    r: int,
) -> dict[str, Any]:
    """One saturation run of the worker over ``tenants``."""
    log(f"worker saturation, {len(tenants)} tenant(s), {a.drafts} drafts{_round(a, r)}")
    name = f"worker{len(tenants)}t{_suffix(r)}"
    sat = await scenarios.saturation(bench, name, "worker", tenants, a.drafts)
    log("  " + report.sat_line(sat))
    log(f"  outcomes {sat.get('outcomes')}")
    log("  " + report.cpu_line(sat))
    log("  " + report.stages_line(sat))
    log("  " + report.ledger_line(sat))
    return sat


async def worker_latency(
    a: argparse.Namespace,
    bench: scenarios.Bench,
    doc: dict[str, Any],
    key: str,
    tenants: tuple[corpus.TenantEvidence, ...],
) -> None:
    """Latency of the worker over ``tenants`` at each fixed rate of ``--rates``."""
    log(f"worker latency, {len(tenants)} tenant(s), at {_rates(a)}, {a.latency_seconds} s each")
    pts = await scenarios.latency(
        bench, f"lat{len(tenants)}t", "worker", tenants, a.rates, a.latency_seconds
    )
    doc["worker"][key]["latency"] = pts
    log("  " + report.latency_line(pts))


async def passthroughs(
    a: argparse.Namespace, bench: scenarios.Bench, doc: dict[str, Any], one: Any
) -> None:
    """The forwarders of earlier runs (one record a draft, unchanged): information only."""
    for name, system in (("aiokafka_raw", "raw"), ("faust_passthrough", "faust")):
        log(f"passthrough ({name}, information only): {a.floor_drafts} drafts")
        doc["baselines"][name] = await scenarios.saturation(
            bench, f"pass{system}", system, one, a.floor_drafts
        )
        log("  " + report.sat_line(doc["baselines"][name]))


async def full_extras(
    a: argparse.Namespace, bench: scenarios.Bench, doc: dict[str, Any], one: Any
) -> None:
    """Scale-out, the floor again (drift check), profile."""
    so: dict[str, Any] = {}
    by_k: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    for r in range(a.repeat):
        for k in (1, 2):
            log(
                f"scale-out: {k} worker process(es), {a.partitions} partitions, {a.drafts} drafts"
                + _round(a, r)
            )
            by_k[k].append(await scenarios.scale_out(bench, k, one, a.drafts, suffix=_suffix(r)))
            log(f"  {by_k[k][-1]['throughput_per_s']} drafts/s")
            log("  " + report.cpu_line(by_k[k][-1]))
    for k, runs in by_k.items():
        so[f"processes_{k}"] = report.median_run(runs)
    so["ratio"] = report._ratio(
        so["processes_2"]["throughput_per_s"], so["processes_1"]["throughput_per_s"]
    )
    # CPU per draft: the median of each side's runs (the rate's median run need not be the CPU's).
    cpu = {
        k: report.median([r["process_cpu_ms_per_draft"] for r in runs]) for k, runs in by_k.items()
    }
    so["cpu_per_draft_2_vs_1"] = report._ratio(cpu[2], cpu[1])
    if a.repeat > 1:
        so["round_cpu_per_draft_2_vs_1"] = [
            report._ratio(two["process_cpu_ms_per_draft"], one_["process_cpu_ms_per_draft"])
            for one_, two in zip(by_k[1], by_k[2], strict=True)
        ]
    doc["scale_out"] = so
    log("the floor again (drift check)")
    doc["floor_repeat"] = await scenarios.saturation(bench, "floor", "floor", one, a.floor_drafts)
    log("  " + report.sat_line(doc["floor_repeat"]))
    if not a.no_profile:
        log("profile: worker under pyinstrument, 1 tenant")
        prof = await scenarios.saturation(bench, "profile", "profiled-worker", one, a.drafts)
        doc["profile"] = {
            "throughput_per_s_under_profiler": prof["throughput_per_s"],
            "text": str(bench.out_dir / f"profile-{prof['log_name']}.txt"),
        }


def mongo_server() -> str:
    """Which MongoDB-protocol server holds the evidence documents (``BENCH_MONGO``)."""
    chosen = os.environ.get("BENCH_MONGO", "")
    return MONGO_SERVERS.get(chosen, "the server at MONGO_URL")


def main(argv: list[str] | None = None) -> int:
    a = parse(sys.argv[1:] if argv is None else argv)
    # A fresh topic has no leader for a moment: the client retries and says so; that is no news.
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    log("interpreter: " + report.interpreter_line(report.interpreter()))
    log("evidence documents on: " + mongo_server())
    doc = asyncio.run(run(a))
    print(report.table(doc))
    print(f"interpreter: {report.interpreter_line(doc['meta']['interpreter'])}")
    print(f"evidence documents on: {doc['meta']['mongo']}")
    print(f"results: {doc['meta']['files']['json']}  plot: {doc['meta']['files']['svg']}")
    print(report.headline_line(doc["headline"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
