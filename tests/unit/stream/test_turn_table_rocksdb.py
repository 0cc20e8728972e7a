"""The RocksDB turn table is read and written by the turn's partition, not the current event's.

Faust's RocksDB store keeps one database per partition and picks it from the event being
processed; in a ``take_events`` batch that may be another partition's record. These use Faust's
real RocksDB store (rocksdict) on a temporary directory; no broker is needed.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import faust
import pytest
from faust.streams import _current_event

from worker.stream.turn_table import _PartitionedData


@pytest.fixture
def store(tmp_path: Path) -> Any:
    app = faust.App("t-rocks", store="rocksdb://", datadir=str(tmp_path), autodiscover=False)
    table = app.Table("turns", default=None, key_type=bytes, value_type=bytes, partitions=4)
    return table.data


class _Event:
    """Just what the store reads of an event (weak-referenceable, unlike a SimpleNamespace)."""

    def __init__(self, partition: int) -> None:
        self.message = SimpleNamespace(partition=partition)


@pytest.fixture
def event_of_partition_0() -> Iterator[None]:
    """Inside, Faust's current event is a record of partition 0 (as in a mixed batch)."""
    event = _Event(0)
    token = _current_event.set(weakref.ref(event))  # type: ignore[arg-type]
    try:
        yield
    finally:
        _current_event.reset(token)


def test_a_turn_goes_to_its_own_partitions_database(store: Any, event_of_partition_0: None) -> None:
    local = _PartitionedData(store)
    local.put(b"turn-1", 2, b"state")
    assert store._dbs[2].get(b"turn-1") == b"state"
    assert 0 not in store._dbs or store._dbs[0].get(b"turn-1") is None
    # Faust's own read looks in the current event's partition only, and misses it:
    assert store.get(b"turn-1") is None
    assert local.get(b"turn-1") == b"state"


def test_delete_removes_it_wherever_it_is(store: Any, event_of_partition_0: None) -> None:
    local = _PartitionedData(store)
    local.put(b"turn-2", 3, b"state")
    local.delete(b"turn-2")
    assert local.get(b"turn-2") is None
    assert store._dbs[3].get(b"turn-2") is None


def test_a_missing_turn_is_none(store: Any) -> None:
    local = _PartitionedData(store)
    local.put(b"turn-3", 1, b"state")
    assert local.get(b"other") is None
