"""Peak RSS of one worker process deciding N preloaded drafts of a given size (memory sizing).

    eval "$(scripts/services env)"
    .venv/bin/python -m dev.bench.memory 100 900     # 100 drafts of ~900 KiB

Produces the drafts to private topics first, then starts the worker (ledger sink off, one
partition, the default batch settings), waits until every draft is decided and prints the
process's ``VmHWM`` at start and at the end. The figures in docs/operations.md ("Scale") come from
here. Uses the e2e harness (the package `harness`) and the test bed's servers; stops what it
started.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from dev.harness import Bus, WorkerProcess, answer, draft, unique_id
from worker.kafka.topics_admin import create_topics

SENTENCE = "Checkout latency rose after the deploy [OBS-1001]. "
OUTPUTS = ("validated", "regenerate", "could_not_ground", "dlq")


def vm_hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


async def measure(
    count: int,
    size_kib: int,
    workdir: Path,
    partitions: int = 1,
    settings: dict[str, str] | None = None,
) -> str:
    env = os.environ
    worker = WorkerProcess(
        env["KAFKA_BOOTSTRAP_SERVERS"],
        env["POSTGRES_DSN"],
        env["MONGO_URL"],
        workdir,
        partitions=partitions,
        env={"GW_RUN_LEDGER_SINK": "false", **(settings or {})},
    )
    await create_topics(worker.settings())
    body = SENTENCE * (size_kib * 1024 // len(SENTENCE))
    async with Bus(worker.kafka_bootstrap, worker.topics) as bus:
        for _ in range(count):
            await bus.send(draft(unique_id("t-mem"), answer(body)))
        started = time.monotonic()
        await worker.start()
        try:
            assert worker.pid is not None
            at_start = vm_hwm_mib(worker.pid)
            await bus.wait_until(
                lambda: sum(len(bus.messages(role)) for role in OUTPUTS) >= count,
                timeout=900,
                what=f"{count} drafts decided",
            )
            took = time.monotonic() - started
            peak = vm_hwm_mib(worker.pid)
        finally:
            await worker.stop()
    return (
        f"drafts={count} size_kib={len(body) / 1024:.0f} partitions={partitions} "
        f"rss_at_start_mib={at_start:.0f} "
        f"peak_rss_mib={peak:.0f} seconds={took:.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dev.bench.memory", description=(__doc__ or "").split("\n", 1)[0]
    )
    parser.add_argument("count", type=int, help="drafts to preload")
    parser.add_argument("size_kib", type=int, help="size of each draft's answer, KiB")
    parser.add_argument(
        "--partitions",
        type=int,
        default=1,
        help="partitions of every topic, all owned by the one worker",
    )
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="GW_NAME=VALUE",
        help="a worker setting (repeatable), e.g. GW_ROCKSDB_BLOCK_CACHE_MIB=2048",
    )
    args = parser.parse_args()
    for name in ("KAFKA_BOOTSTRAP_SERVERS", "POSTGRES_DSN", "MONGO_URL"):
        if not os.environ.get(name):
            parser.error(f'{name} is not set: eval "$(scripts/services env)" first')
    with tempfile.TemporaryDirectory(prefix="measure-memory-") as tmp:
        settings = dict(s.split("=", 1) for s in args.setting)
        print(asyncio.run(measure(args.count, args.size_kib, Path(tmp), args.partitions, settings)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
