"""A failed commit of the ledger sink (group rebalanced, broker away) is not an error (found
by scripts/chaos, scenario 4: the commit raised CommitFailedError and stopped the worker)."""

from __future__ import annotations

import pytest
from aiokafka.errors import CommitFailedError, IllegalStateError, KafkaConnectionError

from worker.ledger.sink import LedgerSink


class FakeConsumer:
    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.commits = 0

    async def commit(self) -> None:
        self.commits += 1
        if self.error is not None:
            raise self.error


@pytest.mark.parametrize(
    "error",
    [
        CommitFailedError("group rebalanced"),
        IllegalStateError("No partitions assigned"),
        KafkaConnectionError(),
        None,
    ],
)
async def test_a_commit_lost_to_a_rebalance_is_skipped(error: Exception | None) -> None:
    consumer = FakeConsumer(error)
    await LedgerSink._commit(consumer)
    assert consumer.commits == 1


async def test_a_bug_still_raises() -> None:
    with pytest.raises(ValueError, match="bug"):
        await LedgerSink._commit(FakeConsumer(ValueError("bug")))
