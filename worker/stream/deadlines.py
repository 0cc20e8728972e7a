"""Which turns need a control record now: regenerations past their deadline, turns past retention.

Pure bookkeeping over the turn store; the timer in ``worker.stream.app`` appends what this returns.
A record is re-sent at most every ``resend_after_s`` until the turn's state changes, so a record
lost in a rebalance is sent again by the partition's next owner.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from worker.core.turns import TurnPhase, expired
from worker.stream.control import ControlKind, ControlRecord, control_record
from worker.stream.turn_table import FaustTurnStore


class DeadlineScanner:
    """Finds due turns among those this process holds for the partitions it owns."""

    def __init__(
        self, store: FaustTurnStore, *, retention_s: float, resend_after_s: float = 5.0
    ) -> None:
        self._store = store
        self._retention_s = retention_s
        self._resend = timedelta(seconds=resend_after_s)
        self._sent: dict[tuple[str, ControlKind], datetime] = {}

    def due(self, now: datetime, owned: set[int], *, full_scan: bool) -> list[ControlRecord]:
        """Control records to append now for turns on ``owned`` partitions."""
        if full_scan:
            self._store.rebuild_index()
        records: list[ControlRecord] = []
        for turn_id, (deadline, partition) in list(self._store.pending.items()):
            if partition in owned and deadline <= now:
                records.extend(
                    self._once(ControlKind.REGENERATION_DEADLINE, turn_id, partition, deadline, now)
                )
        if full_scan:
            for turn_id, stored in self._store.items():
                state = stored.state
                if (
                    state.phase is TurnPhase.TERMINAL
                    and stored.partition in owned
                    and expired(state, now, self._retention_s)
                ):
                    records.extend(
                        self._once(ControlKind.EXPIRE_TURN, turn_id, stored.partition, now, now)
                    )
        return records

    def _once(
        self, kind: ControlKind, turn_id: str, partition: int, due: datetime, now: datetime
    ) -> list[ControlRecord]:
        last = self._sent.get((turn_id, kind))
        if last is not None and now - last < self._resend:
            return []
        self._sent[(turn_id, kind)] = now
        if len(self._sent) > 100_000:
            # Forget old sends rather than grow without bound; at worst a record is sent twice.
            self._sent = {k: v for k, v in self._sent.items() if now - v < self._resend}
        return [control_record(kind, turn_id, partition, due)]
