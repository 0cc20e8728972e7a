"""Which turns will need a deadline tick, without decoding a single turn state.

The turn store holds a week of kilobyte states; the deadline scanner must find the regenerations
past their deadline and the finished turns past their retention on every tick. The index keeps
small tuples (deadline or end time, and partition), fed with every state the turn store writes,
and answers both questions from the phase rules of :mod:`worker.core.turns.machine`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from worker.core.turns.machine import TurnState, ended_at, regeneration_deadline


class DeadlineIndex:
    """The turns that will need a tick: regenerations by deadline, finished turns by end time.

    Fed through the turn store (:meth:`note` for every state it writes, :meth:`forget` for every
    turn it drops, :meth:`rebuild` from everything it holds after a recovery); read by the
    deadline scanner. Values are (time, partition of the turn).
    """

    def __init__(self) -> None:
        #: Turns waiting for a regeneration: turn -> (deadline, partition).
        self.waiting: dict[str, tuple[datetime, int]] = {}
        #: Finished turns: turn -> (ended_at, partition).
        self.ended: dict[str, tuple[datetime, int]] = {}

    def note(self, turn_id: str, partition: int, state: TurnState) -> None:
        """The turn now holds ``state``."""
        deadline = regeneration_deadline(state)
        if deadline is not None:
            self.waiting[turn_id] = (deadline, partition)
        else:
            self.waiting.pop(turn_id, None)
        end = ended_at(state)
        if end is not None:
            self.ended[turn_id] = (end, partition)
        else:
            self.ended.pop(turn_id, None)

    def forget(self, turn_id: str) -> None:
        """The turn holds no state any more."""
        self.waiting.pop(turn_id, None)
        self.ended.pop(turn_id, None)

    def rebuild(self, turns: Iterable[tuple[str, int, TurnState]]) -> None:
        """Start over from every (turn, partition, state) held."""
        self.waiting = {}
        self.ended = {}
        for turn_id, partition, state in turns:
            self.note(turn_id, partition, state)

    def overdue(self, now: datetime, owned: Collection[int]) -> list[tuple[str, int, datetime]]:
        """(turn, partition, deadline) of regenerations on ``owned`` partitions due by ``now``."""
        return [
            (turn_id, partition, deadline)
            for turn_id, (deadline, partition) in self.waiting.items()
            if partition in owned and deadline <= now
        ]

    def past_retention(
        self, now: datetime, owned: Collection[int], retention_s: float
    ) -> list[tuple[str, int]]:
        """(turn, partition) of finished turns on ``owned`` partitions that :func:`expired`."""
        retention = timedelta(seconds=retention_s)
        return [
            (turn_id, partition)
            for turn_id, (end, partition) in self.ended.items()
            if partition in owned and now - end > retention
        ]
