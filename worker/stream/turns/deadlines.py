"""Which turns need a control record now: regenerations past their deadline, turns past retention.

The turn store feeds every state it writes into a :class:`worker.core.turns.machine.DeadlineIndex`
(regenerating turns by deadline, finished turns by end time: the phase rules are the core's); this
asks that index, through the :class:`worker.stream.seams.IndexedTurnStore` port, and turns its
answers into control records, which the timer in ``worker.stream.app`` appends. Only ``rebuild``
decodes every turn held, and the app asks for it when a rebalance's recovery completed or the
partitions it owns changed, never on a timer: with a week of turns that decode would stall the
event loop for seconds. A record is re-sent at most every ``resend_after_s`` until the turn's
state changes, so a record lost in a rebalance is sent again by the partition's next owner.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from worker.core import DEFAULT_TOPICS, ControlKind, OutRecord, TopicRole, control_record
from worker.stream.seams import IndexedTurnStore


class DeadlineScanner:
    """Finds due turns among those this process holds for the partitions it owns."""

    def __init__(
        self,
        store: IndexedTurnStore,
        *,
        retention_s: float,
        resend_after_s: float = 5.0,
        topic: str = DEFAULT_TOPICS[TopicRole.DRAFTS],
    ) -> None:
        self._store = store
        #: The drafts topic's configured name: control records go to the turn's own partition.
        self._topic = topic
        self._retention_s = retention_s
        self._resend = timedelta(seconds=resend_after_s)
        self._sent: dict[tuple[str, ControlKind], datetime] = {}

    def due(
        self, now: datetime, owned: set[int], *, rebuild: bool = False, expire: bool = False
    ) -> list[OutRecord]:
        """Control records to append now for turns on ``owned`` partitions.

        ``rebuild`` first re-reads the whole table (recovered turns); ``expire`` also looks for
        finished turns past their retention.
        """
        if rebuild:
            self._store.rebuild_index()
        index = self._store.deadlines
        records: list[OutRecord] = []
        for turn_id, partition, deadline in index.overdue(now, owned):
            records.extend(
                self._once(ControlKind.REGENERATION_DEADLINE, turn_id, partition, deadline, now)
            )
        if expire:
            for turn_id, partition in index.past_retention(now, owned, self._retention_s):
                records.extend(self._once(ControlKind.EXPIRE_TURN, turn_id, partition, now, now))
        return records

    def _once(
        self, kind: ControlKind, turn_id: str, partition: int, due: datetime, now: datetime
    ) -> list[OutRecord]:
        last = self._sent.get((turn_id, kind))
        if last is not None and now - last < self._resend:
            return []
        self._sent[(turn_id, kind)] = now
        if len(self._sent) > 100_000:
            # Forget old sends rather than grow without bound; at worst a record is sent twice.
            self._sent = {k: v for k, v in self._sent.items() if now - v < self._resend}
        return [control_record(kind, turn_id, partition, due, topic=self._topic)]
