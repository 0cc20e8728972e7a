"""What a replay run did, as counts and short listings: never a value's text.

A listed dead letter shows where it is (partition, offset), its class, tenant, turn id and replay
count: enough to find it with Kafka tooling, nothing of the draft's content.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from worker.core import Incoming, replay_count
from worker.tools.replay_select import (
    NOT_FIXED_BY_REPLAY,
    ReplayAction,
    error_class_of,
    turn_of,
)

#: How many dead letters each listing shows.
LISTED = 10
NO_TENANT = "(no tenant)"


class Listed(NamedTuple):
    """One dead letter in a listing."""

    partition: int
    offset: int
    error_class: str
    tenant: str
    turn: str
    replay_count: int

    @classmethod
    def of(cls, record: Incoming, tenant: str | None) -> Listed:
        return cls(
            record.partition,
            record.offset,
            error_class_of(record),
            tenant or NO_TENANT,
            turn_of(record),
            replay_count(record),
        )


@dataclass
class ReplaySummary:
    """Counts of one run (or of the plan, in a dry run)."""

    dry_run: bool
    max_replays: int
    scanned: int = 0
    dispositions: Counter[str] = field(default_factory=Counter)
    #: Selected for replay (planned in a dry run, acknowledged otherwise), by class and tenant.
    by_class: Counter[str] = field(default_factory=Counter)
    by_tenant: Counter[str] = field(default_factory=Counter)
    to_replay: list[Listed] = field(default_factory=list)
    over_max: list[Listed] = field(default_factory=list)
    #: Skipped because a replay cannot fix their class, by class, and the first of them.
    not_fixable_by_class: Counter[str] = field(default_factory=Counter)
    not_fixable: list[Listed] = field(default_factory=list)
    #: Acknowledged by the broker and written to the replay log.
    replayed: int = 0

    def note(self, record: Incoming, tenant: str | None, what: ReplayAction) -> None:
        """Count one dead letter (a replay is counted once it is planned)."""
        self.scanned += 1
        self.dispositions[what.value] += 1
        listed = Listed.of(record, tenant)
        if what is ReplayAction.REPLAY:
            self.by_class[listed.error_class] += 1
            self.by_tenant[listed.tenant] += 1
            _keep_first(self.to_replay, listed)
        elif what is ReplayAction.OVER_MAX:
            _keep_first(self.over_max, listed)
        elif what is ReplayAction.NOT_FIXABLE:
            self.not_fixable_by_class[listed.error_class] += 1
            _keep_first(self.not_fixable, listed)

    @property
    def planned(self) -> int:
        return self.dispositions[ReplayAction.REPLAY.value]

    @property
    def skipped_over_max(self) -> int:
        return self.dispositions[ReplayAction.OVER_MAX.value]

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` form."""
        return {
            "dry_run": self.dry_run,
            "max_replays": self.max_replays,
            "scanned": self.scanned,
            "planned": self.planned,
            "replayed": self.replayed,
            "skipped": {
                d.value: self.dispositions[d.value]
                for d in ReplayAction
                if d != ReplayAction.REPLAY
            },
            "by_class": dict(sorted(self.by_class.items())),
            "by_tenant": dict(sorted(self.by_tenant.items())),
            "to_replay": [r._asdict() for r in self.to_replay],
            "over_max": [r._asdict() for r in self.over_max],
            "not_fixable": {
                name: {"count": n, "why": NOT_FIXED_BY_REPLAY.get(name, "")}
                for name, n in sorted(self.not_fixable_by_class.items())
            },
            "not_fixable_first": [r._asdict() for r in self.not_fixable],
        }

    def lines(self) -> list[str]:
        """The readable form."""
        verb = "would replay" if self.dry_run else "replayed"
        count = self.planned if self.dry_run else self.replayed
        out = [f"read {self.scanned} dead letter(s); {verb} {count}"]
        if self.by_class:
            out.append("  by class:  " + _counts(self.by_class))
            out.append("  by tenant: " + _counts(self.by_tenant))
        d = self.dispositions
        out.append(
            f"skipped: {d[ReplayAction.ALREADY_REPLAYED.value]} already replayed, "
            f"{d[ReplayAction.OVER_MAX.value]} at the max replay count ({self.max_replays}), "
            f"{d[ReplayAction.OVER_LIMIT.value]} past --limit, "
            f"{d[ReplayAction.NOT_FIXABLE.value]} not fixable by a replay, "
            f"{d[ReplayAction.FILTERED.value]} not selected"
        )
        if self.to_replay:
            title = "first to replay" if self.dry_run else "first replayed"
            out.append(f"{title} ({len(self.to_replay)} of {self.planned}):")
            out.extend(_table(self.to_replay))
        if self.over_max:
            out.append(
                f"NOT replayed, replay count at the max of {self.max_replays} "
                f"({len(self.over_max)} of {self.skipped_over_max}; raise --max-replays to force):"
            )
            out.extend(_table(self.over_max))
        if self.not_fixable_by_class:
            total = sum(self.not_fixable_by_class.values())
            out.append(
                f"NOT replayed, a replay cannot fix their class ({total}; "
                "--error-class CLASS or --all-classes to replay them anyway):"
            )
            out.extend(
                f"  {name} {n}: {NOT_FIXED_BY_REPLAY.get(name, '')}"
                for name, n in sorted(self.not_fixable_by_class.items())
            )
            out.extend(_table(self.not_fixable))
        return out


def _keep_first(rows: list[Listed], row: Listed) -> None:
    """Keep the ``LISTED`` lowest (partition, offset): partitions are read interleaved."""
    rows.append(row)
    rows.sort()
    del rows[LISTED:]


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counter.items()))


def _table(rows: list[Listed]) -> list[str]:
    head = ("partition", "offset", "class", "tenant", "turn", "replays")
    cells = [head, *((str(r[0]), str(r[1]), r[2], r[3], r[4], str(r[5])) for r in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in cells
    ]
