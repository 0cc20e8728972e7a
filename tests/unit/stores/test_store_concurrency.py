"""Concurrent store queries: all awaited, and an outage outranks a malformed row."""

from __future__ import annotations

import asyncio

import pytest

from worker.faults import MalformedEvidence, StoreUnavailable
from worker.stores.concurrency import gather_all


async def _value(v: int, delay: float = 0.0) -> int:
    await asyncio.sleep(delay)
    return v


async def _raise(exc: BaseException, delay: float = 0.0) -> int:
    await asyncio.sleep(delay)
    raise exc


async def test_results_in_order() -> None:
    assert await gather_all(_value(1, 0.01), _value(2)) == [1, 2]
    assert await gather_all() == []


async def test_retriable_fault_wins_even_when_it_finishes_last() -> None:
    with pytest.raises(StoreUnavailable):
        await gather_all(
            _raise(MalformedEvidence("bad row")), _raise(StoreUnavailable("down"), 0.01)
        )


async def test_first_error_otherwise() -> None:
    with pytest.raises(MalformedEvidence, match="first"):
        await gather_all(_raise(MalformedEvidence("first")), _raise(ValueError("second")))


async def test_every_query_is_awaited_before_raising() -> None:
    finished: list[str] = []

    async def slow() -> int:
        await asyncio.sleep(0.02)
        finished.append("slow")
        return 1

    with pytest.raises(StoreUnavailable):
        await gather_all(_raise(StoreUnavailable("down")), slow())
    assert finished == ["slow"]
