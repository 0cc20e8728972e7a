"""The readiness decision and the store-reachability bookkeeping behind it."""

from __future__ import annotations

from worker.runtime.readiness import Readiness, StoreHealth, readiness


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_ready_when_recovered_assigned_and_stores_answer() -> None:
    got = readiness(
        recovering=False, assigned=[0, 1], stores_down_for={}, store_unreachable_after_s=30
    )
    assert got == Readiness(ready=True, reasons=())


def test_every_reason_is_listed() -> None:
    got = readiness(
        recovering=True,
        assigned=[],
        stores_down_for={"mongo": 31.0, "postgres": 29.0},
        store_unreachable_after_s=30,
    )
    assert got.ready is False
    assert got.reasons == (
        "turn table recovering",
        "no partition assigned",
        "store mongo unreachable for 31 s",
    )


def test_a_store_failing_briefly_keeps_the_worker_ready() -> None:
    got = readiness(
        recovering=False,
        assigned=[0],
        stores_down_for={"postgres": 2.0},
        store_unreachable_after_s=30,
    )
    assert got.ready is True


def test_store_health_counts_from_the_first_failure_until_a_success() -> None:
    clock = Clock()
    health = StoreHealth(clock)
    health.failed("mongo")
    clock.now = 110.0
    health.failed("mongo")  # a later failure does not restart the clock
    clock.now = 125.0
    assert health.down_for() == {"mongo": 25.0}
    health.succeeded("mongo")
    assert health.down_for() == {}
