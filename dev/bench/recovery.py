"""Restart recovery and resident memory with the turn table in memory:// and in RocksDB.

    eval "$(scripts/services env)"; .venv/bin/python -m dev.bench.recovery [--turns 100000]

For each store: start a worker (the e2e harness, private topics), publish ``--turns`` grounded
drafts (one turn each), wait until the worker has decided them all, read its RSS, stop it with
SIGTERM, start it again on the same data directory and time how long until ``/ready`` is true
(its turn table recovered, partitions assigned), then read its RSS again. A final draft after the
restart checks the worker still decides. Prints one JSON line per store and a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaProducer

from dev.harness import Bus, WorkerProcess, answer, draft, unique_id
from worker.settings import Settings
from worker.stores.demo import seed

GROUNDED = answer(
    "Checkout p95 latency rose to 840 ms after the payments-api 2.3.0 deploy [OBS-1001].",
    citations=[{"kind": "OBS", "id": 1001}],
)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def decided(worker: WorkerProcess) -> float:
    try:
        with urllib.request.urlopen(worker.metrics_url, timeout=5) as resp:
            text = resp.read().decode()
    except (OSError, urllib.error.URLError):
        return -1
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("grounding_drafts_total{")
    )


def ready(worker: WorkerProcess) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{worker.web_port}/ready", timeout=2) as r:
            return bool(json.loads(r.read())["ready"])
    except (OSError, urllib.error.URLError, ValueError):
        return False


async def produce(bootstrap: str, topic: str, turns: int, tag: str) -> float:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    await producer.start()
    started = time.monotonic()
    try:
        pending = []
        for i in range(turns):
            turn = f"{tag}-{i}"
            value = json.dumps(draft(turn, GROUNDED)).encode()
            pending.append(await producer.send(topic, value, key=turn.encode()))
            if len(pending) >= 5000:
                await asyncio.gather(*pending)
                pending = []
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
    return time.monotonic() - started


async def run_store(
    store: str, turns: int, servers: dict[str, str], workdir: Path
) -> dict[str, Any]:
    worker = WorkerProcess(
        kafka_bootstrap=servers["kafka"],
        postgres_dsn=servers["postgres"],
        mongo_url=servers["mongo"],
        workdir=workdir / store,
        partitions=4,
        env={"GW_TURN_STORE": store, "GW_RUN_LEDGER_SINK": "false", "GW_LOG_LEVEL": "WARNING"},
    )
    result: dict[str, Any] = {"store": store, "turns": turns}
    await worker.start(timeout=180)
    try:
        assert worker.pid is not None
        result["rss_start_mib"] = round(rss_mib(worker.pid), 1)
        t0 = time.monotonic()
        result["produce_s"] = round(
            await produce(servers["kafka"], worker.topics.drafts, turns, unique_id(store)), 1
        )
        while decided(worker) < turns:
            if time.monotonic() - t0 > 3600:
                raise TimeoutError(f"{store}: only {decided(worker)} of {turns} decided")
            await asyncio.sleep(1)
        result["decide_all_s"] = round(time.monotonic() - t0, 1)
        await asyncio.sleep(3)  # commits and changelog sends settle
        result["rss_after_turns_mib"] = round(rss_mib(worker.pid), 1)
    finally:
        result["first_stop_exit"] = await worker.stop(timeout=60)

    started = time.monotonic()
    await worker.start(timeout=1800)
    try:
        while not ready(worker):
            if time.monotonic() - started > 1800:
                raise TimeoutError(f"{store}: not ready after restart")
            await asyncio.sleep(0.2)
        result["restart_to_ready_s"] = round(time.monotonic() - started, 1)
        assert worker.pid is not None
        result["rss_after_restart_mib"] = round(rss_mib(worker.pid), 1)
        async with Bus(servers["kafka"], worker.topics) as bus:
            turn = unique_id("after-restart")
            await bus.send(draft(turn, GROUNDED))
            await bus.wait_for("validated", key=turn, timeout=120)
        result["decides_after_restart"] = True
        data = workdir / store / "data"
        result["data_dir_mib"] = round(
            sum(p.stat().st_size for p in data.rglob("*") if p.is_file()) / 2**20, 1
        )
    finally:
        result["second_stop_exit"] = await worker.stop(timeout=60)
    return result


async def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m dev.bench.recovery", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--stores", default="memory,rocksdb")
    args = parser.parse_args()
    servers = {
        "kafka": os.environ["KAFKA_BOOTSTRAP_SERVERS"],
        "postgres": os.environ["POSTGRES_DSN"],
        "mongo": os.environ["MONGO_URL"],
    }
    await seed(Settings(GW_POSTGRES_DSN=servers["postgres"], GW_MONGO_URL=servers["mongo"]))
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-recovery-") as tmp:
        for i, store in enumerate(args.stores.split(",")):
            result = await run_store(store, args.turns, servers, Path(tmp) / str(i))
            print(json.dumps(result), flush=True)
            results.append(result)
    print(
        "\n| store | turns | decide all (s) | RSS after turns (MiB) | restart to ready (s) "
        "| RSS after restart (MiB) | local data (MiB) |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['store']} | {r['turns']:,} | {r['decide_all_s']} | {r['rss_after_turns_mib']} "
            f"| {r['restart_to_ready_s']} | {r['rss_after_restart_mib']} | {r['data_dir_mib']} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
