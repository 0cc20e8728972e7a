"""OffsetGuard: a record is decided only after every earlier record of its partition."""

from __future__ import annotations

from worker.core import Incoming
from worker.stream.intake.offsets import OffsetGuard


def rec(partition: int, offset: int) -> Incoming:
    return Incoming("agent.drafts", partition, offset, 0, b"k", b"v", ())


def offsets(records: list[Incoming]) -> list[tuple[int, int]]:
    return [(r.partition, r.offset) for r in records]


def test_contiguous_records_from_the_committed_offset_are_admitted() -> None:
    g = OffsetGuard()
    g.start({0: 5, 1: 0})
    admitted, seeks = g.admit([rec(0, 5), rec(1, 0), rec(0, 6), rec(1, 1)])
    assert offsets(admitted) == [(0, 5), (1, 0), (0, 6), (1, 1)]
    assert seeks == {}


def test_a_gap_withholds_the_rest_of_that_partition_and_seeks_back() -> None:
    """Record 7 never arrived: 8 (a deadline record, say) must not be decided before it."""
    g = OffsetGuard()
    g.start({0: 7, 1: 3})
    admitted, seeks = g.admit([rec(0, 8), rec(1, 3), rec(0, 9), rec(1, 4)])
    assert offsets(admitted) == [(1, 3), (1, 4)]
    assert seeks == {0: 7}
    # Read again from 7: now in order.
    admitted, seeks = g.admit([rec(0, 7), rec(0, 8), rec(0, 9)])
    assert offsets(admitted) == [(0, 7), (0, 8), (0, 9)]
    assert seeks == {}


def test_stale_buffered_records_after_a_seek_are_withheld_again() -> None:
    g = OffsetGuard()
    g.start({0: 7})
    assert g.admit([rec(0, 8)]).seeks == {0: 7}
    # A record still buffered from before the seek is not the gap seen before: seek again.
    assert g.admit([rec(0, 10)]) == ([], {0: 7})
    assert offsets(g.admit([rec(0, 7), rec(0, 8)]).records) == [(0, 7), (0, 8)]


def test_the_same_gap_met_twice_is_real_and_accepted() -> None:
    """Offsets taken by a transactional producer's markers never hold a record."""
    g = OffsetGuard()
    g.start({0: 7})
    assert g.admit([rec(0, 8)]).seeks == {0: 7}
    admitted, seeks = g.admit([rec(0, 8), rec(0, 9)])
    assert offsets(admitted) == [(0, 8), (0, 9)]
    assert seeks == {}


def test_redelivered_records_before_the_expected_offset_are_admitted() -> None:
    """After a rebalance, records processed but not yet committed come again: decided again."""
    g = OffsetGuard()
    g.start({0: 10})
    admitted, _ = g.admit([rec(0, 10), rec(0, 11)])
    admitted, seeks = g.admit([rec(0, 9), rec(0, 10), rec(0, 12)])
    assert offsets(admitted) == [(0, 9), (0, 10), (0, 12)]
    assert seeks == {}


def test_unknown_partitions_and_reset() -> None:
    g = OffsetGuard()
    assert g.unknown([rec(0, 1), rec(2, 5)]) == {0, 2}
    g.start({0: 1, 2: 5})
    assert g.unknown([rec(0, 1), rec(2, 5)]) == set()
    g.reset()
    assert g.unknown([rec(0, 1)]) == {0}
    # Without a known start the first record is taken as the start.
    assert offsets(g.admit([rec(0, 4)]).records) == [(0, 4)]
