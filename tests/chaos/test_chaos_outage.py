"""Scenario 2: PostgreSQL down, the MongoDB-protocol server down, both at once, each during a
steady stream.

Two workers (two groups, their own topics) get the same stream:

- *patient* (the default unlimited retry budget): nothing may be decided on the outage - no
  could-not-ground event, no regenerate request that a healthy run would not publish; when the
  server is back every turn ends as planned, and the time from the restart until the last turn
  sent during the outage ended is the recovery time;
- *bounded* (``GW_RETRY_BUDGET=2``): drafts it cannot resolve are dead-lettered
  ``infra_unavailable``; once the server is back, ``grounding-worker replay`` (the real command)
  re-publishes them, and each turn must end on the same topic with the same failure codes as the
  same draft did in a run before the outage (the baseline, sent first).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from chaoslib import (
    ChaosWorker,
    Expect,
    Fleet,
    Stream,
    check,
    policy,
    produce,
    produce_paced,
    scale,
    settled,
    wait_settled,
)

from dev.harness import Bus, ServiceControl, replay_cli, unique_id

pytestmark = [pytest.mark.integration, pytest.mark.e2e, pytest.mark.outage]

DEADLINE_S = 4.0
FAST_RETRY = {
    "GW_RETRY_INITIAL_BACKOFF_S": "0.2",
    "GW_RETRY_MAX_BACKOFF_S": "1.0",
    "GW_STORE_TIMEOUT_S": "2",
    "GW_BATCH_SIZE": "50",
}
#: Single-draft turns only: a replayed first draft must meet the same turn state as before.
BOUNDED_ROUTES = ["grounded"] * 4 + ["hidden", "hidden", "cng", "cross_tenant", "regen_timeout"]


def rename(records: list[tuple[str, Any]], suffix: str) -> list[tuple[str, Any]]:
    out = []
    for key, value in records:
        assert isinstance(value, dict)
        renamed = {**value, "turn_id": key + suffix, "draft_id": value["draft_id"] + suffix}
        out.append((key + suffix, renamed))
    return out


def final(bus: Bus, turn: str) -> tuple[str, tuple[str, ...], bool]:
    """(terminal topic, its failure codes, whether a regenerate request was published)."""
    for role in ("validated", "could_not_ground"):
        recs = bus.messages(role, key=turn)
        if recs:
            codes = tuple(sorted({r["code"] for r in recs[0].json().get("reasons", [])}))
            return role, codes, bool(bus.messages("regenerate", key=turn))
    return "none", (), bool(bus.messages("regenerate", key=turn))


OUTAGES = [("postgres",), ("mongo",), ("postgres", "mongo")]


async def test_store_outages(
    new_worker: Callable[..., ChaosWorker],
    pg: Any,
    bed: ServiceControl,
    record: Callable[[dict[str, Any]], None],
) -> None:
    down_s = scale(15, 60)
    rate = scale(15, 20)
    patient = new_worker("patient", partitions=4, policy=policy(DEADLINE_S), env=FAST_RETRY)
    bounded = new_worker(
        "bounded",
        partitions=4,
        policy=policy(DEADLINE_S),
        env={**FAST_RETRY, "GW_RETRY_BUDGET": "2"},
    )
    failures: list[str] = []
    async with Fleet([patient, bounded]) as fleet:
        await fleet.start(patient, min_partitions=4)
        await fleet.start(bounded, min_partitions=4)
        async with (
            Bus(patient.kafka_bootstrap, patient.topics) as pbus,
            Bus(bounded.kafka_bootstrap, bounded.topics) as bbus,
        ):
            for services in OUTAGES:
                name = "+".join(services)
                crashes_before = len(fleet.crashes)
                # Patient: every route; bounded: single-draft turns, with a baseline run first.
                pstream = Stream(unique_id("po"), seed=len(name))
                bstream = Stream(unique_id("bo"), seed=len(name) + 100)
                n = int((down_s + 6) * rate)
                precs = pstream.take(n)
                brecs = bstream.take(n, BOUNDED_ROUTES)
                base = rename(brecs, "-base")
                base_plan = {
                    k + "-base": Expect(**{**vars(e), "turn": k + "-base"})
                    for k, e in bstream.plan.items()
                }
                await produce(bbus, base)
                await wait_settled(bbus, base_plan, timeout=120)
                baseline = {k: final(bbus, k + "-base") for k in bstream.plan}

                async def outage(services: tuple[str, ...] = services) -> float:
                    await asyncio.sleep(3)
                    for s in services:
                        await asyncio.to_thread(bed.stop, s)
                    await asyncio.sleep(down_s)
                    for s in services:
                        await asyncio.to_thread(bed.start, s)
                    return time.monotonic()

                t_out = asyncio.create_task(outage())
                await asyncio.gather(
                    produce_paced(pbus, precs, rate), produce_paced(bbus, brecs, rate)
                )
                up_at = await t_out
                await wait_settled(pbus, pstream.plan, timeout=scale(180, 400))
                recovery = time.monotonic() - up_at
                await pbus.settle(2.0, timeout=60)
                pv = (await check(pbus, pstream.plan, pg)).summary()

                # Bounded: every turn ended or dead-lettered; replay the dead letters.
                def decided_or_dead(bstream: Stream = bstream) -> bool:
                    dead = {r.key_str for r in bbus.messages("dlq")}
                    ok = settled(bbus, bstream.plan)
                    return (
                        all(
                            t in dead
                            or bbus.messages("validated", key=t)
                            or bbus.messages("could_not_ground", key=t)
                            or bbus.messages("regenerate", key=t)
                            for t in bstream.plan
                        )
                        or ok()
                    )

                await bbus.wait_until(decided_or_dead, timeout=scale(180, 400))
                dead_turns = {r.key_str for r in bbus.messages("dlq") if r.key_str in bstream.plan}
                # The worker answers again once a probe turn is grounded.
                probe = Stream(unique_id("probe"), seed=5)
                for _ in range(30):
                    recs = probe.take(1, ["grounded"])
                    await produce(bbus, recs)
                    key = recs[0][0]
                    await bbus.wait_until(
                        lambda key=key: bool(
                            bbus.messages("validated", key=key) or bbus.messages("dlq", key=key)
                        ),
                        timeout=60,
                    )
                    if bbus.messages("validated", key=key):
                        break
                    await asyncio.sleep(1)
                code, summary, err = await replay_cli(
                    bounded, "--error-class", "infra_unavailable", timeout=300
                )
                if code != 0:
                    failures.append(f"{name}: replay exited {code}: {err[-500:]}")
                await wait_settled(bbus, bstream.plan, timeout=scale(120, 300))
                await bbus.settle(2.0, timeout=60)
                bv = (
                    await check(
                        bbus,
                        bstream.plan,
                        pg,
                        allowed_dlq=lambda r: r.header("dlq.error.class") == b"infra_unavailable",
                    )
                ).summary()
                differs = [
                    f"{t}: {final(bbus, t)} vs baseline {baseline[t]}"
                    for t in bstream.plan
                    if final(bbus, t) != baseline[t]
                ]
                row = {
                    "scenario": f"2 {name} down {down_s:.0f} s",
                    "load": f"{len(precs) + len(brecs)} drafts at {2 * rate:.0f}/s, "
                    "patient + bounded worker",
                    "faults": f"scripts/services stop {' '.join(services)} for {down_s:.0f} s",
                    "lost": pv["lost"] + bv["lost"],
                    "conflicting": pv["conflicting"] + bv["conflicting"] + len(differs),
                    "outage_verdicts_patient": pv["wrong_outcome"],
                    "replay_differs_from_baseline": len(differs),
                    "leaked": pv["leaked"] + bv["leaked"],
                    "dead_letters": {"patient": pv["dead_letters"], "bounded": bv["dead_letters"]},
                    "infra_unavailable_replayed": summary.get("replayed"),
                    "bounded_turns_dead_lettered": len(dead_turns),
                    "unplanned_dead_letters": pv["unplanned_dead_letters"]
                    + bv["unplanned_dead_letters"],
                    "ledger_missing": pv["ledger_missing"] + bv["ledger_missing"],
                    "ledger_duplicates": pv["ledger_duplicates"] + bv["ledger_duplicates"],
                    "recovery_s": round(recovery, 1),
                    "worker_crashes": len(fleet.crashes) - crashes_before,
                    "crash_details": fleet.crashes[crashes_before:][:2],
                    "examples": {
                        "patient": pv["examples"],
                        "bounded": bv["examples"],
                        "differs": differs[:5],
                    },
                }
                record(row)
                if row["lost"] or row["conflicting"] or row["leaked"]:
                    failures.append(f"{name}: {row}")
                if row["unplanned_dead_letters"] or row["ledger_missing"] or row["worker_crashes"]:
                    failures.append(f"{name}: {row}")
                if len(dead_turns) == 0:
                    failures.append(f"{name}: the bounded worker dead-lettered nothing")
    assert not failures, failures
