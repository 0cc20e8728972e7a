"""Turn state in a changelog-backed Faust table, written with an explicit partition.

Faust's ``table[key] = value`` takes the changelog partition from the *current event*, which in a
``take_events`` batch is not necessarily the event whose key is written (faust #497). This store
writes the local data and sends the changelog record to the partition of the record being decided,
which is the turn's own partition of ``agent.drafts`` (the table is co-partitioned with it). So a
restart or a rebalance recovers each turn with its partition, and only the partition's owner holds
and changes it. With the RocksDB store (one database per partition) reads and writes name the
partition too (:class:`_PartitionedData`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import cramjam
import orjson
from faust.stores.rocksdb import Store as RocksDBStore
from rocksdict import WriteBatch

from worker.core import DeadlineIndex, TurnState, loads_json
from worker.stream.faust_internals import RocksPartitions
from worker.stream.seams import StoredTurn

#: First byte of a table value: LZ4-compressed (written), zlib-compressed JSON (written before;
#: still read); a plain JSON value starts with ``{``.
LZ4 = b"\x02"
ZLIB = b"\x01"

#: The state's fields that hold exact JSON texts (the messages a turn may re-publish): stored
#: raw after the head, not as escaped JSON strings inside it.
_RAW_FIELDS: tuple[str, ...] = tuple(
    name
    for name in ("regenerate_request", "regenerate_ledger", "terminal_event", "terminal_ledger")
    if name in TurnState.model_fields
)
#: A set: pydantic takes it as it is (a frozenset cost ~1 µs more a state).
_RAW_EXCLUDED: set[str] = set(_RAW_FIELDS)
#: Bytes of the big-endian head length that starts a framed value (before LZ4): its first byte
#: is never ``{``, which is how a framed value and an LZ4-compressed JSON one (written before
#: the route step; still read) tell apart.
_HEAD_LENGTH_BYTES = 4


def encode_turn(partition: int, state: TurnState) -> bytes:
    """The table value: the state and the partition it lives on, LZ4-compressed.

    A state records the exact messages it may re-publish (a typical grounded turn: ~6 KB of
    JSON texts, ~2 KB compressed). Every decided draft writes one to the changelog and the table
    keeps a week of them, so compressing pays for itself in bytes produced and stored; LZ4 (a
    block, ~4 µs) rather than zlib level 1 (~17 µs, ~1.7 KB): the write is on every draft's path,
    the read only on a turn seen again.

    Framed (route step): a 4-byte head length, the head ``{"p": partition, "s": the
    state without its JSON texts, "n": [byte length of each text or -1]}``, then the texts as
    they are. Written as JSON strings they were escaped quote by quote, which cost more than
    everything else in the state (~8 µs a draft; framed ~1).
    """
    texts: list[bytes] = []
    lengths: list[int] = []
    for name in _RAW_FIELDS:
        text = getattr(state, name)
        if text is None:
            lengths.append(-1)
        else:
            raw = text.encode("utf-8")
            texts.append(raw)
            lengths.append(len(raw))
    head = orjson.dumps(
        {
            "p": partition,
            "s": orjson.Fragment(state.model_dump_json(exclude=_RAW_EXCLUDED)),
            "n": lengths,
        }
    )
    framed = b"".join((len(head).to_bytes(_HEAD_LENGTH_BYTES, "big"), head, *texts))
    return LZ4 + bytes(cramjam.lz4.compress_block(framed))


def _unframed(data: bytes) -> dict[str, Any]:
    """The head of a framed value with the state's JSON texts put back in its ``s``."""
    size = int.from_bytes(data[:_HEAD_LENGTH_BYTES], "big")
    at = _HEAD_LENGTH_BYTES + size
    doc = loads_json(data[_HEAD_LENGTH_BYTES:at])  # an attempt may exceed 64 bits
    fields = doc["s"]
    for name, length in zip(_RAW_FIELDS, doc["n"], strict=True):
        if length >= 0:
            fields[name] = data[at : at + length].decode("utf-8")
            at += length
    if at != len(data):
        raise ValueError("a framed turn value has bytes past its texts")
    return dict(doc)


def decode_turn(raw: bytes) -> StoredTurn:
    """Inverse of :func:`encode_turn`; also reads the LZ4 JSON, zlib and uncompressed values
    written before."""
    head = raw[:1]
    if head == LZ4:
        data = bytes(cramjam.lz4.decompress_block(raw[1:]))
        doc = loads_json(data) if data[:1] == b"{" else _unframed(data)
    else:
        doc = loads_json(zlib.decompress(raw[1:]) if head == ZLIB else raw)
    return StoredTurn(state=TurnState.model_validate(doc["s"]), partition=int(doc["p"]))


class _PlainData:
    """The table's local data as one mapping (``memory://``: one dict for every partition)."""

    def __init__(self, data: Any) -> None:
        self._data = data

    def get(self, key: bytes) -> bytes | None:
        return self._data.get(key)  # type: ignore[no-any-return]

    def put(self, key: bytes, partition: int, raw: bytes) -> None:
        self._data[key] = raw

    def delete(self, key: bytes) -> None:
        if key in self._data:
            del self._data[key]

    def items(self) -> list[tuple[bytes, bytes]]:
        return list(self._data.items())

    def flush(self) -> None:
        """Nothing waits: every put went to the mapping."""


class _PartitionedData:
    """A RocksDB store's data, read and written by partition, never by the current event.

    Faust's RocksDB store keeps one database per partition and picks it from the *current event*
    (``_set`` and, inside a stream, ``_get``): in a ``take_events`` batch that is not the record
    being decided, so a turn would be written to, or looked for in, another partition's
    database. This goes to the turn's own partition (writes) or asks every local database
    through their bloom filters (reads), with the store's own helpers.
    """

    def __init__(self, store: Any, *, batched: bool = False) -> None:
        self._store = RocksPartitions(store)
        #: With ``batched``, a batch's writes gather in one RocksDB write batch per partition
        #: until :meth:`flush` (a put alone ~5 µs, in a write batch ~2.6); read back from here
        #: meanwhile, so a turn's second draft in the same batch sees its first's state.
        self._batched = batched and bool(getattr(store, "use_rocksdict", False))
        self._pending: dict[bytes, bytes] = {}
        self._batches: dict[int, WriteBatch] = {}

    def get(self, key: bytes) -> bytes | None:
        raw = self._pending.get(key)
        if raw is not None:
            return raw
        return self._store.get(key)

    def put(self, key: bytes, partition: int, raw: bytes) -> None:
        store = self._store
        store.note(key, partition)
        if not self._batched:
            store.db(partition).put(key, raw)
            return
        batch = self._batches.get(partition)
        if batch is None:
            batch = self._batches[partition] = WriteBatch(raw_mode=True)
        batch.put(key, raw)
        self._pending[key] = raw

    def flush(self) -> None:
        """Write what :meth:`put` gathered (one write per partition's database)."""
        if not self._batches:
            return
        batches, self._batches, self._pending = self._batches, {}, {}
        for partition, batch in batches.items():
            self._store.db(partition).write(batch)

    def delete(self, key: bytes) -> None:
        self.flush()
        for db in self._store.dbs_for(key):
            db.delete(key)
        self._store.forget(key)

    def items(self) -> list[tuple[bytes, bytes]]:
        self.flush()
        return self._store.items()


class FaustTurnStore:
    """:class:`worker.stream.seams.TurnStore` over a Faust ``Table`` of raw bytes.

    With ``defer_changelog`` (the worker), a new state's changelog record is not handed to
    Faust's ``send_soon`` buffer: it waits in :meth:`drain_unsent` for the batch's publish, which
    sends it with the batch's outputs and awaits its acknowledgement like theirs. Faust
    stops delivering records to every stream while that buffer holds more than 100 records, so a
    batch of 200 changelog writes used to stall the intake exactly while the batch was processed.
    Tombstones (rare: turns past their retention) still go through ``send_changelog``.
    """

    def __init__(self, table: Any, *, defer_changelog: bool = False) -> None:
        self._table = table
        self._local: _PlainData | _PartitionedData | None = None
        self._defer = defer_changelog
        self._unsent: list[tuple[int, bytes, bytes]] = []
        #: Every state written here is noted in it; :meth:`rebuild_index` after a recovery.
        self.deadlines = DeadlineIndex()

    @property
    def pending(self) -> dict[str, tuple[datetime, int]]:
        """Turns waiting for a regeneration: turn -> (deadline, partition)."""
        return self.deadlines.waiting

    @property
    def ended(self) -> dict[str, tuple[datetime, int]]:
        """Finished turns: turn -> (ended_at, partition)."""
        return self.deadlines.ended

    @property
    def local(self) -> _PlainData | _PartitionedData:
        """The table's local data, by the kind of store (decided once the store exists)."""
        if self._local is None:
            data = self._table.data
            self._local = (
                _PartitionedData(data, batched=self._defer)
                if isinstance(data, RocksDBStore)
                else _PlainData(data)
            )
        return self._local

    def get(self, turn_id: str) -> StoredTurn | None:
        """The turn's stored state, or ``None``."""
        raw = self.local.get(turn_id.encode("utf-8"))
        return decode_turn(raw) if raw is not None else None

    def put(self, turn_id: str, partition: int, state: TurnState) -> None:
        """Store locally and append to the changelog partition of the turn."""
        key = turn_id.encode("utf-8")
        raw = encode_turn(partition, state)
        self.local.put(key, partition, raw)
        if self._defer:
            self._unsent.append((partition, key, raw))
        else:
            self._table.send_changelog(
                partition, key, raw, key_serializer="raw", value_serializer="raw"
            )
        self.deadlines.note(turn_id, partition, state)

    def drain_unsent(self) -> list[tuple[int, bytes, bytes]]:
        """The deferred changelog records (partition, key, value), oldest first; forgets them.

        The batch's local writes are flushed first (RocksDB write batches, see
        :class:`_PartitionedData`): the batch's publish, which calls this, follows its last write.
        """
        if self._local is not None:
            self._local.flush()
        unsent, self._unsent = self._unsent, []
        return unsent

    def delete(self, turn_id: str, partition: int) -> None:
        """Forget the turn: drop it locally and write a tombstone to its changelog partition."""
        key = turn_id.encode("utf-8")
        self.local.delete(key)
        self._table.send_changelog(
            partition, key, None, key_serializer="raw", value_serializer="raw"
        )
        self.deadlines.forget(turn_id)

    def items(self) -> Iterator[tuple[str, StoredTurn]]:
        """Every turn held locally (only read by the deadline scanner)."""
        for key, raw in self.local.items():
            yield key.decode("utf-8"), decode_turn(raw)

    def rebuild_index(self) -> None:
        """Rebuild :attr:`deadlines` from the table (after a rebalance's recovery).

        Decodes every turn held: run it when the table's contents changed under us, not on a
        timer.
        """
        self.deadlines.rebuild((t, stored.partition, stored.state) for t, stored in self.items())
