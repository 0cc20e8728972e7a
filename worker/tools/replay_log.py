"""The replay log: which dead letters were replayed, kept durably in Kafka.

Decision: a compacted topic (default ``<dlq>.replayed``), one record per replayed dead letter,
keyed ``<partition>:<offset>`` of the DLQ record and written only after the broker acknowledged
the replayed draft. ``replay`` reads the whole log at start and skips every key in it, whatever
filters the earlier run used. A consumer-group offset cannot do this: it can only say "read up to
here", not "replayed" versus "left out by that run's filters". Kafka rather than a Postgres table
keeps the tool independent of the evidence stores (it runs during a store outage's aftermath).

- The log is compacted *and* time-limited (35 days, a week longer than the DLQ's 28), so it
  forgets a key only after its DLQ record is gone.
- If the DLQ topic is deleted and re-created, its offsets restart: delete the log with it.
- A crash between the draft's acknowledgement and the log write replays that draft again on the
  next run; the worker treats a repeated draft idempotently (same turn state, same event ids).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from worker.core import TopicRole
from worker.kafka.bounded_read import partitions_of, read_to_end
from worker.kafka.topics_admin import create_topics
from worker.settings import Settings


def log_key(partition: int, offset: int) -> str:
    """The replay-log key of the DLQ record at (``partition``, ``offset``)."""
    return f"{partition}:{offset}"


def parse_log_key(key: bytes | None) -> tuple[int, int] | None:
    """(partition, offset) from a log key; ``None`` for a key this tool did not write."""
    if key is None:
        return None
    try:
        partition, _, offset = key.decode("ascii").partition(":")
        return int(partition), int(offset)
    except (UnicodeDecodeError, ValueError):
        return None


def log_value(*, replayed_at_ms: int, replay_count: int, error_class: str, version: str) -> bytes:
    """What a log record says (for people reading the topic; the key is what counts)."""
    return orjson.dumps(
        {
            "replayed_at_ms": replayed_at_ms,
            "replay_count": replay_count,
            "error_class": error_class,
            "by": f"grounding-worker replay {version}",
        }
    )


def replayed_set(records: Iterable[tuple[bytes | None, bytes | None]]) -> set[tuple[int, int]]:
    """Fold log records (key, value) in order into the set of replayed (partition, offset);
    a tombstone (null value) forgets its key."""
    done: set[tuple[int, int]] = set()
    for key, value in records:
        where = parse_log_key(key)
        if where is None:
            continue
        if value is None:
            done.discard(where)
        else:
            done.add(where)
    return done


async def read_log(consumer: Any, settings: Settings) -> set[tuple[int, int]]:
    """Everything the log holds now (empty when the topic does not exist yet)."""
    topic = settings.replay_log
    partitions = await partitions_of(consumer, topic)
    if partitions is None:
        return set()
    pairs = [
        (r.key, r.value)
        async for r in read_to_end(
            consumer, topic, partitions, stall_timeout_s=settings.replay_read_timeout_s
        )
    ]
    return replayed_set(pairs)


async def ensure_log_topic(settings: Settings) -> None:
    """Create the log topic if it is missing (idempotent); it is declared in ``topic_specs``."""
    await create_topics(settings, only={TopicRole.REPLAY_LOG})
