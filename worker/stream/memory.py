"""In-memory implementations of the stream's seams: a publisher and a turn store.

Like :class:`worker.core.evidence_store.InMemoryEvidenceStore` for the evidence port, they live
next to the code rather than under ``tests/``, so that unit tests, the golden run
(``python -m tests.unit.stream.golden_pipeline``) and the benchmarks share one fake per port
without reaching into each other's files. A test that needs a broker or a store that misbehaves
subclasses one and overrides a single method.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Collection, Mapping, Sequence

from worker.core import OutRecord, TurnState
from worker.faults import BrokerUnavailable, PoisonFault
from worker.stream.seams import StoredTurn
from worker.stream.turns.table import decode_turn, encode_turn


def acknowledged() -> asyncio.Future[object]:
    """A future that is already done: the broker took the record."""
    done: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    done.set_result(None)
    return done


class MemoryPublisher:
    """A :class:`~worker.stream.seams.Publisher` that keeps every record in the order it was
    handed over and acknowledges it at once."""

    def __init__(self) -> None:
        #: Every record taken, in order (``send`` and, for the bulk kind, ``send_many``).
        self.records: list[OutRecord] = []
        #: The records taken one at a time by ``send``.
        self.singles: list[OutRecord] = []

    async def send(self, record: OutRecord) -> Awaitable[object]:
        self.records.append(record)
        self.singles.append(record)
        return acknowledged()

    def values(self, topic: str) -> list[bytes]:
        """The values taken for ``topic``, in order."""
        return [r.value for r in self.records if r.topic == topic]


class MemoryBulkPublisher(MemoryPublisher):
    """A :class:`~worker.stream.seams.BulkPublisher`: each ``send_many`` is kept in
    ``hand_overs``; a value in ``unavailable`` fails with a retriable ``BrokerUnavailable`` that
    many times, the ``poison`` value always fails with ``PoisonFault``."""

    def __init__(
        self, unavailable: Mapping[bytes, int] | None = None, poison: bytes | None = None
    ) -> None:
        super().__init__()
        self.unavailable = dict(unavailable or {})
        self.poison = poison
        self.hand_overs: list[list[OutRecord]] = []

    async def send_many(self, records: Sequence[OutRecord]) -> list[asyncio.Future[object]]:
        handed = list(records)
        self.hand_overs.append(handed)
        loop = asyncio.get_running_loop()
        out: list[asyncio.Future[object]] = []
        for record in handed:
            fut: asyncio.Future[object] = loop.create_future()
            if self.unavailable.get(record.value, 0) > 0:
                self.unavailable[record.value] -= 1
                fut.set_exception(BrokerUnavailable("broker unavailable: KafkaTimeoutError"))
            elif record.value == self.poison:
                fut.set_exception(PoisonFault("broker refused the record: MessageSizeTooLarge"))
            else:
                self.records.append(record)
                fut.set_result(None)
            out.append(fut)
        return out


class MemoryTurns:
    """A :class:`~worker.stream.seams.TurnStore` over a dict of encoded table values, as the
    Faust table keeps them (so a state that does not survive encoding fails here too). Turn ids
    in ``poison`` raise on read, as a bug would."""

    def __init__(self, poison: Collection[str] = ()) -> None:
        self.raw: dict[str, bytes] = {}
        self.poison = set(poison)

    def get(self, turn_id: str) -> StoredTurn | None:
        if turn_id in self.poison:
            raise KeyError(turn_id)
        raw = self.raw.get(turn_id)
        return decode_turn(raw) if raw is not None else None

    def put(self, turn_id: str, partition: int, state: TurnState) -> None:
        self.raw[turn_id] = encode_turn(partition, state)

    def delete(self, turn_id: str, partition: int) -> None:
        self.raw.pop(turn_id, None)

    @property
    def turns(self) -> dict[str, StoredTurn]:
        """Every turn held, decoded."""
        return {turn_id: decode_turn(raw) for turn_id, raw in self.raw.items()}
