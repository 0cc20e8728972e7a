"""``scripts/bench [--quick]``: run the end-to-end benchmark and print figures and ratios.

Progress goes to stderr; the table and, last, ``ratio_vs_faust_passthrough=<x.xx>`` to stdout.
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

from bench_e2e import corpus, report, scenarios
from worker.settings import Settings

FRACTIONS = (0.25, 0.5, 0.8)


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
        help="short run (< 3 min): baselines, 1 tenant, and a saturation-only run of --tenants",
    )
    p.add_argument("--drafts", type=int, help="drafts per worker saturation run")
    p.add_argument("--baseline-drafts", type=int, help="drafts per baseline saturation run")
    p.add_argument("--latency-seconds", type=float, help="seconds of paced load per latency point")
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
        "(default; its CPU is reported apart and in the total), or inside the worker process",
    )
    p.add_argument(
        "--worker-setting",
        action="append",
        default=[],
        metavar="GW_NAME=VALUE",
        help="a setting for the worker (and its ledger sink) only, not the baselines: "
        "a same-machine A/B of one lever (repeatable)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        help="rounds of each saturation run (passthrough and worker alternated, scale-out 1 and 2 "
        "processes alternated); the figures are the median run's, the range is reported "
        "(default 3, 1 with --quick)",
    )
    p.add_argument("--no-profile", action="store_true", help="full run without the profiled pass")
    p.add_argument("--out", type=Path, default=Path("bench-results"), help="results directory")
    a = p.parse_args(argv)
    a.drafts = a.drafts or (4000 if a.quick else 15000)
    a.baseline_drafts = a.baseline_drafts or (10000 if a.quick else 30000)
    a.latency_seconds = a.latency_seconds or (5.0 if a.quick else 20.0)
    a.repeat = a.repeat or (1 if a.quick else 3)
    if a.repeat < 1:
        p.error("--repeat must be at least 1")
    return a


async def run(a: argparse.Namespace) -> dict[str, Any]:
    settings = Settings()
    started = datetime.now(UTC)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    run_tag = f"{stamp[4:8]}{stamp[9:15]}{random.randrange(100):02d}"
    bench = scenarios.Bench(
        settings=settings,
        run_tag=run_tag,
        run_id=random.getrandbits(60) | 1,
        out_dir=a.out.resolve() / f"run-{stamp}",
        batch_size=a.batch_size,
        batch_wait_s=a.batch_wait_s,
        partitions=a.partitions,
        ledger_sink=a.ledger_sink,
        worker_settings=dict(_setting(s) for s in a.worker_setting),
    )
    doc: dict[str, Any] = {
        "meta": {
            "started": started.isoformat(timespec="seconds"),
            "mode": "quick" if a.quick else "full",
            "machine": report.machine(),
            "git": report.git_revision(),
            "kafka": settings.kafka_bootstrap_servers,
        },
        "settings": {
            "batch_size": a.batch_size,
            "batch_wait_s": a.batch_wait_s,
            "partitions": a.partitions,
            "ledger_sink": a.ledger_sink,
            "worker_settings": a.worker_setting,
            "worker_drafts": a.drafts,
            "baseline_drafts": a.baseline_drafts,
            "latency_seconds_per_point": a.latency_seconds,
            "saturation_rounds": a.repeat,
            "load_fractions": list(FRACTIONS),
            "mix": "70% grounded, 15% regenerate, 5% could-not-ground, "
            "5% hidden-doc redaction, 5% malformed",
        },
        "baselines": {},
        "worker": {},
    }
    base = 7 * 10**15 + random.randrange(10**6) * 10**6
    doc["stores"] = {}
    async with seeded(settings, doc, "tenants_1", run_tag + "a", 1, base) as one:
        log(f"baseline: aiokafka consume->produce, {a.baseline_drafts} drafts")
        doc["baselines"]["aiokafka_raw"] = await scenarios.saturation(
            bench, "raw", "raw", one, a.baseline_drafts
        )
        log(f"  {doc['baselines']['aiokafka_raw']['throughput_per_s']} drafts/s")
        # The passthrough and the worker alternate, so a slow minute of the machine hits both.
        passthroughs: list[dict[str, Any]] = []
        workers: list[dict[str, Any]] = []
        for r in range(a.repeat):
            log(f"baseline: Faust passthrough agent, {a.baseline_drafts} drafts{_round(a, r)}")
            passthroughs.append(
                await scenarios.saturation(
                    bench, f"faust{_suffix(r)}", "faust", one, a.baseline_drafts
                )
            )
            log(f"  {passthroughs[-1]['throughput_per_s']} drafts/s")
            workers.append(await worker_saturation(a, bench, one, r))
        doc["baselines"]["faust_passthrough"] = report.median_run(passthroughs)
        if a.repeat > 1:
            doc["baselines"]["faust_passthrough"]["round_ratios"] = [
                report._ratio(w["throughput_per_s"], p["throughput_per_s"])
                for w, p in zip(workers, passthroughs, strict=True)
            ]
        await worker_runs(a, bench, doc, "tenants_1", one, workers)
        if not a.quick:
            await full_extras(a, bench, doc, one)
    key = f"tenants_{a.tenants}"
    async with seeded(
        settings, doc, key, run_tag + "b", a.tenants, base + 10**5, docs_per_tenant=20
    ) as many:
        # --quick: saturation only, so the run still says what many tenants cost against one.
        runs = [await worker_saturation(a, bench, many, r) for r in range(a.repeat)]
        await worker_runs(a, bench, doc, key, many, runs, latency=not a.quick)
    doc["meta"]["loadavg_at_end"] = list(os.getloadavg())
    doc["meta"]["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    report.finish(doc)
    json_path = a.out / f"bench-{stamp}.json"
    png_path = a.out / f"bench-{stamp}.png"
    report.write(doc, json_path)
    report.chart(doc, png_path)
    doc["meta"]["files"] = {"json": str(json_path), "png": str(png_path)}
    report.write(doc, json_path)
    return doc


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
    log(f"  {sat['throughput_per_s']} drafts/s, outcomes {sat.get('outcomes')}")
    log("  " + report.cpu_line(sat))
    log("  " + report.stages_line(sat))
    log("  " + report.ledger_line(sat))
    return sat


async def worker_runs(
    a: argparse.Namespace,
    bench: scenarios.Bench,
    doc: dict[str, Any],
    key: str,
    tenants: tuple[corpus.TenantEvidence, ...],
    runs: list[dict[str, Any]],
    *,
    latency: bool = True,
) -> None:
    """The median of the saturation ``runs``, then (unless ``latency`` is false) latency at
    fractions of its rate."""
    sat = report.median_run(runs)
    if len(runs) > 1:
        rates = ", ".join(f"{r['throughput_per_s']}" for r in runs)
        log(f"worker, {len(tenants)} tenant(s): median {sat['throughput_per_s']} of {rates}/s")
    doc["worker"][key] = {"saturation": sat}
    rate = sat["throughput_per_s"]
    if not latency or not rate or not sat["complete"]:
        return
    log(f"worker latency at {FRACTIONS} of {rate}/s, {a.latency_seconds} s each")
    pts = await scenarios.latency(
        bench,
        f"lat{len(tenants)}t",
        "worker",
        tenants,
        [f * rate for f in FRACTIONS],
        a.latency_seconds,
    )
    for f, p in zip(FRACTIONS, pts, strict=True):
        p["fraction"] = f
    doc["worker"][key]["latency"] = pts
    log("  p99 ms: " + ", ".join(f"{p['p99_ms']:.0f}" for p in pts))


async def full_extras(
    a: argparse.Namespace, bench: scenarios.Bench, doc: dict[str, Any], one: Any
) -> None:
    """Passthrough latency at the worker's offered rates, scale-out, a repeat baseline, profile."""
    rate = doc["worker"]["tenants_1"]["saturation"]["throughput_per_s"]
    if rate:
        log("Faust passthrough latency at the worker's offered rates")
        pts = await scenarios.latency(
            bench, "latfaust", "faust", one, [f * rate for f in FRACTIONS], a.latency_seconds
        )
        for f, p in zip(FRACTIONS, pts, strict=True):
            p["fraction"] = f
        doc["faust_passthrough_latency"] = pts
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
    log("baseline again (drift check): Faust passthrough")
    doc["baselines_repeat"] = {
        "faust_passthrough": await scenarios.saturation(
            bench, "faust", "faust", one, a.baseline_drafts
        )
    }
    if not a.no_profile:
        log("profile: worker under pyinstrument, 1 tenant")
        prof = await scenarios.saturation(bench, "profile", "profiled-worker", one, a.drafts)
        doc["profile"] = {
            "throughput_per_s_under_profiler": prof["throughput_per_s"],
            "text": str(bench.out_dir / f"profile-{prof['log_name']}.txt"),
        }


def main(argv: list[str] | None = None) -> int:
    a = parse(sys.argv[1:] if argv is None else argv)
    # A fresh topic has no leader for a moment: the client retries and says so; that is no news.
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    doc = asyncio.run(run(a))
    print(report.table(doc))
    print(f"results: {doc['meta']['files']['json']}  chart: {doc['meta']['files']['png']}")
    print(f"ratio_{a.tenants}_tenants_vs_1={doc['ratios'].get('many_tenants_vs_1') or 0:.2f}")
    print(f"ratio_vs_faust_passthrough={doc['ratio_vs_faust_passthrough'] or 0:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
