"""Worker CPU per draft under each drafts intake (``GW_DRAFTS_INTAKE``), interleaved in one run.

    set -a; source <services env>; set +a
    .venv/bin/python -m dev.bench.intake [--drafts 3000] [--rounds 3]

Uses the end-to-end bench's own scenario (``bench_e2e.scenarios.scale_out`` with one process):
one worker with its ledger sink, a warm-up, then a burst of ``--drafts`` drafts; the worker
process's CPU (``/proc/<pid>/stat``) over the burst only, start-up excluded. Rounds alternate the
order (stream then channel, then channel then stream) so a slow minute of a shared machine hits
both; prints each run, each round's channel/stream ratio and the medians. Figures on a busy
machine are provisional: compare the same-run ratios, not the absolute milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dev.bench import report, scenarios
from dev.bench.__main__ import seeded
from worker.settings import Settings

INTAKES = ("stream", "channel")


def log(msg: str) -> None:
    print(f"[bench-intake {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


async def run(drafts: int, rounds: int) -> dict[str, list[dict[str, Any]]]:
    settings = Settings()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    tag = f"{stamp[4:8]}{stamp[9:15]}{random.randrange(100):02d}"
    bench = scenarios.Bench(
        settings=settings,
        run_tag=tag,
        run_id=random.getrandbits(60) | 1,
        out_dir=Path(tempfile.mkdtemp(prefix="bench-intake-")),
        batch_size=Settings.model_fields["batch_size"].default,
        batch_wait_s=Settings.model_fields["batch_wait_s"].default,
        partitions=4,
    )
    runs: dict[str, list[dict[str, Any]]] = {i: [] for i in INTAKES}
    base = 7 * 10**15 + random.randrange(10**6) * 10**6
    async with seeded(settings, {"stores": {}}, "tenants_1", tag + "i", 1, base) as one:
        for r in range(rounds):
            for intake in INTAKES if r % 2 == 0 else reversed(INTAKES):
                bench.worker_settings = {"GW_DRAFTS_INTAKE": intake}
                log(f"round {r + 1}/{rounds}: {intake}, {drafts} drafts")
                res = await scenarios.scale_out(bench, 1, one, drafts, suffix=f"{intake}{r}")
                log(
                    f"  worker {res['process_cpu_ms_per_draft']} ms/draft, "
                    f"{res['throughput_per_s']} drafts/s, complete {res['complete']}"
                )
                runs[intake].append(res)
    return runs


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m dev.bench.intake", description=__doc__)
    p.add_argument("--drafts", type=int, default=3000, help="drafts per measured burst")
    p.add_argument("--rounds", type=int, default=3, help="pairs of runs (one per intake)")
    a = p.parse_args()
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    runs = asyncio.run(run(a.drafts, a.rounds))
    cpu = {i: [r["process_cpu_ms_per_draft"] for r in runs[i]] for i in INTAKES}
    rate = {i: [r["throughput_per_s"] for r in runs[i]] for i in INTAKES}
    for i in INTAKES:
        print(f"{i:8} worker CPU ms/draft {cpu[i]}  median {report.median(cpu[i])}")
        print(f"{i:8} drafts/s {rate[i]}  median {report.median(rate[i])}")
    ratios = [round(c / s, 3) for s, c in zip(cpu["stream"], cpu["channel"], strict=True) if s]
    print(f"channel/stream CPU per draft by round: {ratios}  median {report.median(ratios)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
