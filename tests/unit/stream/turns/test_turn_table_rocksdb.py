"""The RocksDB turn table is read and written by the turn's partition, not the current event's.

Faust's RocksDB store keeps one database per partition and picks it from the event being
processed; in a ``take_events`` batch that may be another partition's record. These use Faust's
real RocksDB store (rocksdict) on a temporary directory; no broker is needed.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import faust
import pytest
from faust.streams import _current_event

from worker.core.turns.machine import TurnPhase, TurnState
from worker.settings import Settings
from worker.stream.faust_app import rocksdb_options
from worker.stream.turns.table import FaustTurnStore, _PartitionedData


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


def _state(turn: str) -> TurnState:
    return TurnState(
        phase=TurnPhase.TERMINAL,
        turn_id=turn,
        tenant_id="acme",
        user_id="u-1",
        groups=(),
        policy_version="p",
        first_draft_id=f"{turn}-0",
        first_attempt=0,
        kind="answer",
        terminal_event='{"event":"' + turn + '"}',
        ended_at=datetime(2026, 12, 3, 12, 0, tzinfo=UTC),
    )


def test_a_batchs_writes_read_back_at_once_and_reach_rocksdb_with_its_changelog(
    tmp_path: Path, event_of_partition_0: None
) -> None:
    """Route step: the worker's store gathers a batch's writes in RocksDB write
    batches; a turn's next draft in the same batch still reads what its first one wrote."""
    app = faust.App("t-rocks-b", store="rocksdb://", datadir=str(tmp_path), autodiscover=False)
    table = app.Table("turns", default=None, key_type=bytes, value_type=bytes, partitions=4)
    turns = FaustTurnStore(table, defer_changelog=True)
    turns.put("turn-a", 2, _state("turn-a"))
    turns.put("turn-b", 3, _state("turn-b"))
    turns.put("turn-a", 2, _state("turn-a").model_copy(update={"attempts_decided": 2}))
    found = turns.get("turn-a")
    assert found is not None
    assert found.state.attempts_decided == 2
    assert found.partition == 2
    dbs = table.data._dbs
    assert all(db.get(b"turn-a") is None for db in dbs.values())  # not written yet
    unsent = turns.drain_unsent()  # the batch's publish: its writes are flushed first
    assert [(p, k) for p, k, _ in unsent] == [(2, b"turn-a"), (3, b"turn-b"), (2, b"turn-a")]
    assert dbs[2].get(b"turn-a") == unsent[2][2]
    assert dbs[3].get(b"turn-b") == unsent[1][2]
    assert 0 not in dbs or dbs[0].get(b"turn-a") is None
    turns.put("turn-c", 1, _state("turn-c"))
    turns.put("turn-d", 1, _state("turn-d"))
    turns.delete("turn-d", 1)  # flushes first: a pending write is not resurrected later
    assert dbs[1].get(b"turn-c") is not None
    turns.drain_unsent()
    assert turns.get("turn-d") is None
    assert dbs[1].get(b"turn-d") is None
    assert turns.get("turn-c") is not None


def test_the_worker_sizes_each_partitions_rocksdb_from_its_settings(tmp_path: Path) -> None:
    """Faust's defaults (3 x 64 MiB memtables and a 2 GiB cache per partition) would let 12
    partitions and their standbys outgrow the pod's memory limit; the settings replace them."""
    settings = Settings(rocksdb_write_buffer_mib=8, rocksdb_block_cache_mib=16)
    app = faust.App("t-rocks-size", store="rocksdb://", datadir=str(tmp_path), autodiscover=False)
    table = app.Table(
        "turns",
        default=None,
        key_type=bytes,
        value_type=bytes,
        partitions=2,
        options=rocksdb_options(settings),
    )
    sized = table.data.rocksdb_options
    mib = 1024 * 1024
    assert (sized.write_buffer_size, sized.max_write_buffer_number) == (8 * mib, 2)
    assert sized.block_cache_size == 16 * mib
