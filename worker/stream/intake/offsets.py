"""Offset continuity on ``agent.drafts``: never decide a record before an earlier one.

Faust can hand the agent record *n+1* of a partition without ever handing it record *n* (around a
restart or rebalance it may drop a fetched record while moving its read offset on; see
``worker.stream.watchdogs.stall``). Deciding *n+1* first would break the contract: a deadline
control record could time a turn out before the draft appended ahead of it is decided.

:class:`OffsetGuard` knows, per partition, the next offset the agent must see: the group's
committed offset after every rebalance, then one past each record admitted. A record beyond it
is a gap: that record and the rest of its partition in the batch are withheld, and the partition
is sought back to the expected offset so the missing records are read again, in order. A record
before it is a redelivery and is admitted (the turn state makes a repeated draft change nothing).
The same gap met twice in a row is real (a transactional producer's commit markers occupy
offsets) and is accepted, so the guard cannot loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from worker.core import Incoming


class Admission(NamedTuple):
    """What to decide now, and which partitions to seek back (partition -> offset)."""

    records: list[Incoming]
    seeks: dict[int, int]


class OffsetGuard:
    """Pure bookkeeping of the next expected offset of each partition."""

    def __init__(self) -> None:
        self._next: dict[int, int] = {}
        #: partition -> (expected, seen) of the gap already sent back once.
        self._gap: dict[int, tuple[int, int]] = {}

    def reset(self) -> None:
        """Forget everything: partitions were (re)assigned and start from committed offsets."""
        self._next.clear()
        self._gap.clear()

    def unknown(self, batch: Iterable[Incoming]) -> set[int]:
        """Partitions of ``batch`` whose starting offset is not known yet."""
        return {rec.partition for rec in batch} - self._next.keys()

    def start(self, offsets: Mapping[int, int]) -> None:
        """The offsets the partitions start from (committed offsets after an assignment)."""
        for partition, offset in offsets.items():
            self._next.setdefault(partition, offset)

    def admit(self, batch: Sequence[Incoming]) -> Admission:
        """Split ``batch`` into records to decide now and partitions to read again."""
        admitted: list[Incoming] = []
        seeks: dict[int, int] = {}
        for rec in batch:
            p, offset = rec.partition, rec.offset
            if p in seeks:
                continue
            expected = self._next.get(p)
            if expected is None or offset <= expected or self._gap.get(p) == (expected, offset):
                admitted.append(rec)
                self._next[p] = max(offset + 1, expected or 0)
                self._gap.pop(p, None)
                continue
            self._gap[p] = (expected, offset)
            seeks[p] = expected
        return Admission(admitted, seeks)
