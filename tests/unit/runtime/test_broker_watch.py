"""Broker reachability: one announcement per change, ``/ready``'s reason, and aiokafka's
repeating lines rate-limited."""

from __future__ import annotations

import logging

from worker.runtime.broker_watch import BrokerHealth, probe_interval
from worker.runtime.logs import RateLimit
from worker.runtime.readiness import readiness


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_unreachable_is_announced_once_after_the_threshold_and_recovered_once() -> None:
    clock = Clock()
    health = BrokerHealth(after_s=15, clock=clock)
    assert health.observe(True) is None
    seen = []
    for _ in range(10):  # 10 failed probes, 5 s apart: 45 s down
        seen.append(health.observe(False))
        clock.now += 5
    assert seen == [None, None, None, "unreachable", None, None, None, None, None, None]
    assert health.down_for() == 50
    assert health.observe(True) == "recovered"
    assert health.observe(True) is None
    assert health.down_for() is None


def test_a_blip_shorter_than_the_threshold_announces_nothing() -> None:
    clock = Clock()
    health = BrokerHealth(after_s=15, clock=clock)
    assert health.observe(False) is None
    clock.now += 10
    assert health.observe(False) is None
    assert health.observe(True) is None


def test_probes_come_three_times_per_threshold_at_most_every_5_s() -> None:
    assert probe_interval(15) == 5
    assert probe_interval(3) == 1
    assert probe_interval(600) == 5
    assert probe_interval(0.1) == 0.5


def test_ready_names_the_broker_once_it_is_unreachable() -> None:
    ready = readiness(
        recovering=False,
        assigned=[0],
        stores_down_for={},
        store_unreachable_after_s=30,
        kafka_down_for=16.2,
        kafka_unreachable_after_s=15,
    )
    assert ready == (False, ("kafka unreachable for 16 s",))
    fine = readiness(
        recovering=False, assigned=[0], stores_down_for={}, store_unreachable_after_s=30
    )
    assert fine.ready


def _record(name: str, msg: str) -> logging.LogRecord:
    return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, ("x",), None)


def test_aiokafka_lines_pass_three_per_template_per_minute_then_say_how_many_were_dropped() -> None:
    clock = Clock()
    limit = RateLimit(burst=3, window_s=60, clock=clock)
    template = "Unable connect to node with id %s"
    passed = [limit.filter(_record("aiokafka", template)) for _ in range(165)]
    assert passed.count(True) == 3
    assert limit.filter(_record("aiokafka.consumer.fetcher", "Failed fetch %s"))
    clock.now += 60
    first = _record("aiokafka", template)
    assert limit.filter(first)
    assert first.suppressed == 162  # type: ignore[attr-defined]


def test_other_loggers_are_never_rate_limited() -> None:
    limit = RateLimit(burst=1, window_s=60, clock=Clock())
    assert all(limit.filter(_record("worker.kafka", "kafka.unreachable")) for _ in range(10))
