"""Scenario 5: hostile input. Generated drafts (``hostile.generated``, a seeded grammar of
mutations) and the hand-made corpus (``hostile.hand_made``) go to one worker in waves of 100.

The worker must never die, and each draft must yield exactly one of: dead letters (with a
``dlq.error.class``), or a routed verdict (grounded answer, regenerate request or could-not-ground
event). Processing time per draft is the time from the broker's append of the draft
(``LogAppendTime``) to the worker's first output for it (its producer's timestamp): queueing
inside a wave of 100 included. Peak RSS is the worker's ``VmHWM``.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from chaoslib import ChaosWorker, Fleet, scale
from hostile import generated, hand_made

from dev.harness import Bus

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

WAVE = 100
VERDICT_ROLES = ("validated", "regenerate", "could_not_ground")
DLQ_CLASSES = {
    b"oversized",
    b"malformed_envelope",
    b"unsupported_schema_version",
    b"identity_mismatch",
    b"infra_unavailable",
    b"internal_error",
}


def traceparent(run: int, index: int) -> bytes:
    return f"00-{run:016x}{index:016x}-{index + 1:016x}-01".encode()


def index_of(value: bytes | None, run: int) -> int | None:
    if not value or len(value) < 35 or value[3:19] != f"{run:016x}".encode():
        return None
    return int(value[19:35], 16)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def test_hostile_input(
    new_worker: Callable[..., ChaosWorker], servers: Any, record: Callable[[dict[str, Any]], None]
) -> None:
    n_generated = int(scale(2000, 10_000))
    run_tag = secrets.token_hex(3)
    run = int(secrets.token_hex(7), 16)
    drafts = list(hand_made(f"hh-{run_tag}")) + list(generated(f"hg-{run_tag}", n_generated))
    worker = new_worker("hostile", partitions=4, env={"GW_BATCH_SIZE": "100"})
    appended: dict[int, int] = {}
    outcome: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    first_out: dict[int, int] = {}
    dlq_class: Counter[str] = Counter()
    internal: list[str] = []
    async with Fleet([worker]) as fleet:
        await fleet.start(worker, min_partitions=4)
        async with Bus(worker.kafka_bootstrap, worker.topics) as bus:
            producer = bus._producer
            assert producer is not None
            seen = 0

            def absorb() -> None:
                nonlocal seen
                records = [
                    r for role in (*VERDICT_ROLES, "dlq", "ledger") for r in bus.messages(role)
                ]
                for rec in records:
                    i = index_of(rec.header("traceparent"), run)
                    if i is None:
                        continue
                    key = (rec.role, rec.partition, rec.offset)
                    if key in done_keys:
                        continue
                    done_keys.add(key)
                    outcome[i][rec.role] += 1
                    if rec.role == "dlq":
                        cls = (rec.header("dlq.error.class") or b"?").decode()
                        dlq_class[cls] += 1
                        if cls == "internal_error":
                            internal.append(
                                f"{drafts[i][0]}: {rec.header('dlq.error.message')!r} "
                                f"{drafts[i][2][:200]!r}"
                            )
                    first_out[i] = min(first_out.get(i, rec.timestamp_ms), rec.timestamp_ms)
                seen = len(records)

            done_keys: set[tuple[str, int, int]] = set()
            t0 = time.monotonic()
            stuck: list[int] = []
            for start in range(0, len(drafts), WAVE):
                wave = range(start, min(start + WAVE, len(drafts)))
                futures = []
                for i in wave:
                    _, key, raw = drafts[i]
                    futures.append(
                        await producer.send(
                            bus.name("drafts"),
                            raw,
                            key=key.encode("utf-8", "surrogatepass"),
                            headers=[("traceparent", traceparent(run, i))],
                        )
                    )
                for i, meta in zip(wave, await asyncio.gather(*futures), strict=True):
                    appended[i] = meta.timestamp

                def wave_done(wave: range = wave) -> bool:
                    absorb()
                    return all(
                        any(outcome[i].get(r) for r in (*VERDICT_ROLES, "dlq")) for i in wave
                    )

                try:
                    await bus.wait_until(wave_done, timeout=120, what="wave decided")
                except TimeoutError:
                    stuck.extend(
                        i
                        for i in wave
                        if not any(outcome[i].get(r) for r in (*VERDICT_ROLES, "dlq"))
                    )
                if fleet.crashes:
                    break
            await bus.settle(2.0, timeout=60)
            absorb()
            healthy = await worker.health()
            rss = worker.peak_rss_mib()
            elapsed = time.monotonic() - t0
    unrouted, both, bad_class = [], [], []
    for i, (name, _, raw) in enumerate(drafts):
        got = outcome.get(i, {})
        verdict = any(got.get(r) for r in VERDICT_ROLES)
        dead = bool(got.get("dlq"))
        if not verdict and not dead:
            unrouted.append(f"{name} ({len(raw)} B): nothing")
        elif (verdict and dead) or got.get("dlq", 0) > 1:
            both.append(f"{name}: {dict(got)}")
    bad_class = [c for c in dlq_class if c.encode() not in DLQ_CLASSES]
    latencies = [first_out[i] - appended[i] for i in first_out if i in appended]
    by_route: Counter[str] = Counter()
    for got in outcome.values():
        by_route[
            "dlq" if got.get("dlq") else next((r for r in VERDICT_ROLES if got.get(r)), "none")
        ] += 1
    row = {
        "scenario": "5 hostile input",
        "load": f"{len(drafts) - n_generated} hand-made + {n_generated} generated drafts, "
        f"waves of {WAVE}",
        "faults": "hostile bytes",
        "lost": 0,
        "conflicting": 0,
        "leaked": 0,
        "unrouted_hostile": len(unrouted) + len(both),
        "routed": dict(by_route),
        "dead_letters": dict(dlq_class),
        "unknown_dlq_classes": bad_class,
        "internal_errors": dlq_class.get("internal_error", 0),
        "p99_ms": percentile(latencies, 0.99),
        "max_ms": max(latencies, default=0),
        "p50_ms": percentile(latencies, 0.5),
        "peak_rss_mib": round(rss or 0, 1),
        "worker_crashes": len(fleet.crashes),
        "crash_details": fleet.crashes[:2],
        "health_at_end": healthy.get("status"),
        "run_s": round(elapsed, 1),
        "recovery_s": None,
        "examples": {
            "internal_error": internal[:10],
            "unrouted": unrouted[:10],
            "both": both[:5],
            "stuck": stuck[:10],
        },
    }
    record(row)
    assert row["worker_crashes"] == 0, row["crash_details"]
    assert not unrouted, unrouted[:10]
    assert not both, both[:5]
    assert not bad_class
