"""Every topic of contract §1, declared once.

``grounding-worker topics create`` creates them from here, and ``scripts/gen_topics.py`` writes the
language-neutral declarations (``topics/topics.json``) and the AsyncAPI document from the same
list, so the three never drift apart (a unit test fails when the files are stale).
"""

from __future__ import annotations

from typing import NamedTuple

from worker.core import TopicRole
from worker.settings import Settings

DAY_MS = 24 * 3600 * 1000
#: Room for record and batch framing on top of the payload limit.
FRAMING_BYTES = 64 * 1024


#: The Faust table of turn states (``worker.stream.app``).
#: Its changelog is ``<app_id>-turns-changelog``.
TURNS_TABLE = "turns"


def changelog_topic(settings: Settings) -> str:
    """The name Faust gives the turn table's changelog topic."""
    return f"{settings.app_id}-{TURNS_TABLE}-changelog"


class TopicSpec(NamedTuple):
    """One topic: name, partitioning and broker configuration."""

    role: TopicRole
    name: str
    partitions: int
    replication_factor: int
    config: dict[str, str]
    written_by: str
    description: str
    #: The JSON Schema of the value, relative to the repository's ``schemas/json``.
    value_schema: str | None


def topic_specs(settings: Settings) -> list[TopicSpec]:
    """The topics the worker reads and writes, with their broker configuration."""
    draft_max = settings.max_draft_bytes
    inbound = str(2 * draft_max + FRAMING_BYTES)
    outbound = str(4 * draft_max + FRAMING_BYTES)
    week = str(7 * DAY_MS)
    names = settings.topics
    n, rf = settings.topic_partitions, settings.topic_replication_factor
    durability = (
        {"min.insync.replicas": str(settings.topic_min_insync_replicas)}
        if settings.topic_min_insync_replicas is not None
        else {}
    )

    def spec(  # noqa: PLR0917 - a local constructor, read positionally in the table below
        role: TopicRole,
        name: str,
        config: dict[str, str],
        by: str,
        what: str,
        schema: str | None,
        partitions: int = n,
    ) -> TopicSpec:
        config = {"cleanup.policy": "delete", **durability, **config}
        return TopicSpec(role, name, partitions, rf, config, by, what, schema)

    return [
        spec(
            TopicRole.DRAFTS,
            names.drafts,
            # LogAppendTime: the broker stamps each record, so a regeneration deadline is checked
            # against the broker's clock, not a producer's.
            {
                "retention.ms": week,
                "max.message.bytes": inbound,
                "message.timestamp.type": "LogAppendTime",
            },
            "agent producers, replay, the worker's deadline control records",
            "Drafts to validate: attempt 0 and the one regeneration.",
            "draft_envelope.schema.json",
        ),
        spec(
            TopicRole.REGENERATE,
            names.regenerate,
            {"retention.ms": week, "max.message.bytes": outbound},
            "worker",
            "Asks the producer for exactly one new attempt.",
            "regenerate_request.schema.json",
        ),
        spec(
            TopicRole.VALIDATED,
            names.validated,
            {"retention.ms": week, "max.message.bytes": outbound},
            "worker",
            "Grounded answers: what the UI renders.",
            "grounded_answer.schema.json",
        ),
        spec(
            TopicRole.COULD_NOT_GROUND,
            names.could_not_ground,
            {"retention.ms": week, "max.message.bytes": outbound},
            "worker",
            "Terminal failures the UI shows.",
            "could_not_ground.schema.json",
        ),
        spec(
            TopicRole.LEDGER,
            names.ledger,
            {"retention.ms": week, "max.message.bytes": outbound},
            "worker",
            "Citation ledger batches; a sink writes them to Postgres.",
            "ledger_batch.schema.json",
        ),
        spec(
            TopicRole.DLQ,
            names.dlq,
            # Dead letters wait for on-call: keep them four weeks.
            {"retention.ms": str(28 * DAY_MS), "max.message.bytes": inbound},
            "worker",
            "What could not be processed: original bytes plus dlq.* headers; replayed by on-call.",
            None,
        ),
        spec(
            TopicRole.REPLAY_LOG,
            settings.replay_log,
            # Compacted, and kept a week longer than the DLQ, so a key is forgotten only after
            # its dead letter is gone (see worker/tools/replay_log.py).
            {"cleanup.policy": "compact,delete", "retention.ms": str(35 * DAY_MS)},
            "grounding-worker replay",
            "Dead letters already replayed, keyed <partition>:<offset>, written after the ack.",
            None,
            partitions=1,
        ),
        spec(
            TopicRole.TURNS_CHANGELOG,
            changelog_topic(settings),
            # Faust's changelog of the turn table (it would create it itself, with the broker's
            # defaults): compacted, co-partitioned with agent.drafts, and as large a record as
            # the worker's producer may send (a turn state holds the messages it re-publishes).
            {"cleanup.policy": "compact", "max.message.bytes": outbound},
            "worker (Faust, for the turn table)",
            "Turn states by turn_id: the worker's own state, read back on recovery. Not a "
            "contract topic; declared so its size, replication and compaction are set.",
            None,
        ),
    ]
