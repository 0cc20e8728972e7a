"""`wait_for`: probes with backoff, gives up at GW_STARTUP_TIMEOUT_S, never logs a password."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import SecretStr

from worker.runtime.startup import (
    NEEDS,
    DependencyUnreachableError,
    Service,
    Waiting,
    address,
    wait_for,
)
from worker.settings import Settings


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _probes(up_after: dict[Service, int], calls: list[Service]):  # type: ignore[no-untyped-def]
    """Probes that fail ``up_after[service]`` times, then answer."""

    def make(service: Service):  # type: ignore[no-untyped-def]
        async def probe(_: Settings, __: float) -> None:
            calls.append(service)
            if calls.count(service) <= up_after.get(service, 0):
                raise ConnectionRefusedError(111, "Connect call failed")

        return probe

    return {s: make(s) for s in ("kafka", "postgres", "mongo")}


def test_it_backs_off_until_every_service_answered_then_says_so() -> None:
    clock, calls, heard = Clock(), [], []
    asyncio.run(
        wait_for(
            Settings(startup_timeout_s=60),
            ("postgres", "mongo"),
            on_wait=heard.append,
            probes=_probes({"postgres": 3, "mongo": 1}, calls),
            clock=clock,
            sleep=clock.sleep,
        )
    )
    assert calls == ["postgres"] * 4 + ["mongo"] * 2
    assert clock.sleeps == [1.0, 2.0, 4.0, 1.0]
    assert [w.service if isinstance(w, Waiting) else None for w in heard] == [
        "postgres",
        "postgres",
        "postgres",
        "mongo",
        None,
    ]


def test_it_gives_up_once_the_timeout_has_passed_naming_the_service_and_setting() -> None:
    clock = Clock()
    with pytest.raises(DependencyUnreachableError) as caught:
        asyncio.run(
            wait_for(
                Settings(startup_timeout_s=10, kafka_bootstrap_servers="k1:9092"),
                ("kafka",),
                probes=_probes({"kafka": 99}, []),
                clock=clock,
                sleep=clock.sleep,
            )
        )
    assert caught.value.service == "kafka"
    assert caught.value.waited_s == pytest.approx(10.0)
    assert clock.sleeps == [1.0, 2.0, 4.0, 3.0]  # the last wait is cut to the timeout
    assert "GW_KAFKA_BOOTSTRAP_SERVERS" in str(caught.value)
    assert "k1:9092" in str(caught.value)


def test_zero_waits_for_ever() -> None:
    clock = Clock()
    asyncio.run(
        wait_for(
            Settings(startup_timeout_s=0),
            ("kafka",),
            probes=_probes({"kafka": 40}, []),
            clock=clock,
            sleep=clock.sleep,
        )
    )
    assert len(clock.sleeps) == 40
    assert max(clock.sleeps) == 10.0


def test_the_address_logged_never_carries_credentials() -> None:
    settings = Settings(
        postgres_dsn=SecretStr("postgresql://gw:hunter2@db.internal:5432/grounding"),
        mongo_url=SecretStr("mongodb://gw:hunter2@m1:27017,m2:27017/?replicaSet=rs"),
    )
    assert address(settings, "postgres") == "db.internal:5432"
    assert address(settings, "mongo") == "m1:27017,m2:27017"


def test_what_each_command_waits_for() -> None:
    assert NEEDS == {
        "run": ("kafka",),
        "ledger-sink": ("kafka",),
        "topics": ("kafka",),
        "replay": ("kafka",),
        "migrate": ("postgres", "mongo"),
        "seed-demo": ("postgres", "mongo"),
    }
