"""The seams of the stream loop: where turn state lives and how records leave the process."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import NamedTuple, Protocol, runtime_checkable

from worker.core import DeadlineIndex, OutRecord, TurnState


class StoredTurn(NamedTuple):
    """A turn's state and the partition of ``agent.drafts`` it lives on."""

    state: TurnState
    partition: int


class TurnStore(Protocol):
    """Per-turn state, changed only in the context of a record of that turn's partition."""

    def get(self, turn_id: str) -> StoredTurn | None:
        """The turn's stored state, or ``None`` when the turn is open."""
        ...

    def put(self, turn_id: str, partition: int, state: TurnState) -> None:
        """Store the turn's new state (changelog partition = ``partition``)."""
        ...

    def delete(self, turn_id: str, partition: int) -> None:
        """Forget the turn (after its retention)."""
        ...


class IndexedTurnStore(TurnStore, Protocol):
    """A turn store that notes every state it writes in a :class:`DeadlineIndex`."""

    @property
    def deadlines(self) -> DeadlineIndex:
        """The index of the turns held here that will need a tick."""
        ...

    def rebuild_index(self) -> None:
        """Note every turn held again (after the store's contents changed under it)."""
        ...


class Publisher(Protocol):
    """Appends records to Kafka topics."""

    async def send(self, record: OutRecord) -> Awaitable[object]:
        """Enqueue ``record``; the returned awaitable completes when the broker acknowledged it.

        Raises :class:`worker.faults.BrokerUnavailable` when the broker cannot take it.
        """
        ...


@runtime_checkable
class BulkPublisher(Publisher, Protocol):
    """A publisher that also takes a batch's records in one hand-over (``GW_PRODUCE_BATCHED``)."""

    async def send_many(self, records: Sequence[OutRecord]) -> Sequence[asyncio.Future[object]]:
        """Enqueue ``records`` in order; one future per record, in the same order.

        A partition's records reach it in the order given. A future fails with
        :class:`worker.faults.BrokerUnavailable` when the broker could not take that record
        (retriable) or :class:`worker.faults.PoisonFault` when it refused it.
        """
        ...
