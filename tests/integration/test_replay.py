"""``grounding-worker replay`` against a real broker, on topics private to each test.

The DLQ is seeded by producing records with ``dlq.*`` headers directly: the tool is tested
against the real broker, not against the worker that normally writes those records.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import secrets
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import TopicPartition
from typer.testing import CliRunner

from worker.cli import app
from worker.core import contract as h
from worker.settings import Settings, TopicNames
from worker.tools.replay import ReplayOptions, run_replay
from worker.tools.replay_select import ReplayFilter

pytestmark = pytest.mark.integration

DLQ_PARTITIONS = 2


class Seeded(NamedTuple):
    partition: int
    offset: int
    key: bytes | None
    value: bytes
    headers: list[tuple[str, bytes]]


class Bed(NamedTuple):
    settings: Settings
    env: dict[str, str]


@pytest.fixture
def bed(kafka_bootstrap: str) -> Iterator[Bed]:
    suffix = secrets.token_hex(4)
    names = TopicNames(drafts=f"replay-{suffix}.drafts", dlq=f"replay-{suffix}.drafts.dlq")
    settings = Settings(
        GW_KAFKA_BOOTSTRAP_SERVERS=kafka_bootstrap,
        topics=names,
        replay_read_timeout_s=15.0,
    )
    asyncio.run(_create(kafka_bootstrap, [names.drafts, names.dlq]))
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "GW_KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "GW_TOPICS__DRAFTS": names.drafts,
        "GW_TOPICS__DLQ": names.dlq,
    }
    yield Bed(settings, env)
    asyncio.run(_delete(kafka_bootstrap, [names.drafts, names.dlq, settings.replay_log]))


async def _create(bootstrap: str, topics: list[str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(t, num_partitions=DLQ_PARTITIONS, replication_factor=1) for t in topics]
        )
    finally:
        await admin.close()


async def _delete(bootstrap: str, topics: list[str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        await admin.delete_topics([t for t in topics if t in existing])
    finally:
        await admin.close()


def draft_value(turn: str, tenant: str) -> bytes:
    return json.dumps(
        {"schema_version": 1, "turn_id": turn, "tenant_id": tenant, "draft_id": f"d-{turn}"}
    ).encode()


def dlq_headers(
    error_class: str, *, replays: int | None = None, failed_at: int = 0
) -> list[tuple[str, bytes]]:
    headers = [
        ("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        (h.ORIGINAL_TOPIC, b"agent.drafts"),
        (h.ORIGINAL_PARTITION, b"0"),
        (h.ORIGINAL_OFFSET, b"42"),
        (h.ORIGINAL_TIMESTAMP, b"1700000000000"),
        (h.ERROR_CLASS, error_class.encode()),
        (h.ERROR_MESSAGE, b"evidence store unavailable after 2 attempts"),
        (h.FAILED_AT, str(failed_at).encode()),
        (h.WORKER_VERSION, b"0.1.0"),
    ]
    if replays is not None:
        headers.append((h.REPLAY_COUNT, str(replays).encode()))
    return headers


def seed(
    bed: Bed, records: list[tuple[int, bytes | None, bytes, list[tuple[str, bytes]], int | None]]
) -> list[Seeded]:
    """Produce (partition, key, value, headers, timestamp_ms) to the DLQ; return where they went."""

    async def go() -> list[Seeded]:
        producer = AIOKafkaProducer(bootstrap_servers=bed.settings.kafka_bootstrap_servers)
        await producer.start()
        try:
            out = []
            for partition, key, value, headers, ts in records:
                meta = await producer.send_and_wait(
                    bed.settings.topics.dlq,
                    value,
                    key=key,
                    partition=partition,
                    headers=headers,
                    timestamp_ms=ts,
                )
                out.append(Seeded(partition, meta.offset, key, value, headers))
            return out
        finally:
            await producer.stop()

    return asyncio.run(go())


def drafts_topic(bed: Bed) -> list[Any]:
    """Every record of the drafts topic now."""

    async def go() -> list[Any]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bed.settings.kafka_bootstrap_servers,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        await consumer.start()
        try:
            tps = [TopicPartition(bed.settings.topics.drafts, p) for p in range(DLQ_PARTITIONS)]
            consumer.assign(tps)
            ends = await consumer.end_offsets(tps)
            for tp in tps:
                consumer.seek(tp, 0)
            got: list[Any] = []
            nxt = dict.fromkeys(tps, 0)
            deadline = time.monotonic() + 20
            while any(nxt[tp] < ends[tp] for tp in tps):
                assert time.monotonic() < deadline, "drafts topic not read in time"
                for tp, records in (await consumer.getmany(timeout_ms=500)).items():
                    got.extend(records)
                    nxt[tp] = records[-1].offset + 1
            return got
        finally:
            await consumer.stop()

    return asyncio.run(go())


def replay(bed: Bed, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    selection = kwargs.pop("selection", ReplayFilter())
    options = ReplayOptions(
        selection=selection, max_replays=kwargs.pop("max_replays", 3), json=True, **kwargs
    )
    out, err = io.StringIO(), io.StringIO()
    code = run_replay(bed.settings, options, out=out, err=err)
    return code, json.loads(out.getvalue())


def standard(bed: Bed) -> list[Seeded]:
    """Five dead letters over two partitions, two tenants, three classes, one unparseable."""
    now = int(time.time() * 1000)
    return seed(
        bed,
        [
            (
                0,
                b"t-1",
                draft_value("t-1", "acme"),
                dlq_headers("infra_unavailable"),
                now - 3_600_000,
            ),
            (
                0,
                b"t-2",
                draft_value("t-2", "globex"),
                dlq_headers("infra_unavailable", replays=1),
                now - 60_000,
            ),
            (1, b"t-3", draft_value("t-3", "acme"), dlq_headers("internal_error"), now - 30_000),
            (1, None, b"\xff not json", dlq_headers("malformed_envelope"), now - 20_000),
            (
                1,
                b"t-5",
                draft_value("t-5", "acme"),
                dlq_headers("unsupported_schema_version", replays=3),
                now - 10_000,
            ),
        ],
    )


def headers_of(record: Any) -> list[tuple[str, bytes]]:
    return [(k, v) for k, v in record.headers]


def test_replays_key_value_headers_with_count_raised_once(bed: Bed) -> None:
    seeded = standard(bed)
    code, summary = replay(bed)
    assert code == 1  # t-5 is at the max (3) and is skipped
    assert summary["replayed"] == 3  # not the malformed envelope: a replay cannot fix it
    assert summary["skipped"]["over_max"] == 1
    assert summary["skipped"]["not_fixable"] == 1
    assert [(r["partition"], r["offset"]) for r in summary["over_max"]] == [
        (seeded[4].partition, seeded[4].offset)
    ]
    got = drafts_topic(bed)
    assert len(got) == 3
    by_value = {r.value: r for r in got}
    for s in seeded[:3]:
        r = by_value[s.value]
        assert r.key == s.key
        previous = 1 if s.key == b"t-2" else 0
        expected = [kv for kv in s.headers if kv[0] != h.REPLAY_COUNT] + [
            (h.REPLAY_COUNT, str(previous + 1).encode())
        ]
        assert headers_of(r) == expected


def test_second_run_publishes_nothing(bed: Bed) -> None:
    standard(bed)
    replay(bed)
    code, summary = replay(bed)
    assert code == 1
    assert summary["replayed"] == 0
    assert summary["skipped"]["already_replayed"] == 3
    assert summary["skipped"]["not_fixable"] == 1
    assert len(drafts_topic(bed)) == 3


def test_by_default_classes_a_replay_cannot_fix_are_skipped_and_named_with_why(bed: Bed) -> None:
    """The malformed envelope would fail the same way again and double the DLQ each run."""
    seeded = standard(bed)
    _code, summary = replay(bed)
    assert summary["not_fixable"] == {
        "malformed_envelope": {
            "count": 1,
            "why": "the envelope itself is wrong; the producer must send a new draft",
        }
    }
    assert [(r["partition"], r["offset"]) for r in summary["not_fixable_first"]] == [
        (seeded[3].partition, seeded[3].offset)
    ]
    assert None not in {r.key for r in drafts_topic(bed)}


def test_the_cli_says_what_it_skipped_and_all_classes_replays_it(bed: Bed) -> None:
    standard(bed)
    result = CliRunner().invoke(app, ["replay", "--dry-run"], env=bed.env)
    assert "1 not fixable by a replay" in result.output, result.output
    assert "NOT replayed, a replay cannot fix their class (1; " in result.output
    assert "  malformed_envelope 1: the envelope itself is wrong" in result.output
    result = CliRunner().invoke(app, ["replay", "--all-classes"], env=bed.env)
    assert "replayed 4" in result.output, result.output
    assert None in {r.key for r in drafts_topic(bed)}


def test_naming_a_class_a_replay_cannot_fix_replays_it(bed: Bed) -> None:
    standard(bed)
    _code, summary = replay(
        bed, selection=ReplayFilter(error_classes=frozenset({"malformed_envelope"}))
    )
    assert summary["replayed"] == 1
    assert [r.key for r in drafts_topic(bed)] == [None]


def test_a_run_with_other_filters_skips_what_was_replayed(bed: Bed) -> None:
    standard(bed)
    replay(bed, selection=ReplayFilter(tenants=frozenset({"acme"})))
    assert len(drafts_topic(bed)) == 2  # t-1, t-3 (t-5 is over max)
    code, summary = replay(
        bed,
        selection=ReplayFilter(error_classes=frozenset({"internal_error", "infra_unavailable"})),
    )
    assert summary["replayed"] == 1  # only t-2: t-1 and t-3 were replayed by the first run
    assert summary["skipped"]["already_replayed"] == 2
    assert code == 0


def test_dry_run_publishes_nothing_and_counts(bed: Bed) -> None:
    seeded = standard(bed)
    code, summary = replay(bed, dry_run=True)
    assert code == 1
    assert summary["planned"] == 3
    assert summary["replayed"] == 0
    assert summary["by_class"] == {"infra_unavailable": 2, "internal_error": 1}
    assert summary["by_tenant"] == {"acme": 2, "globex": 1}
    assert [(r["partition"], r["offset"], r["turn"]) for r in summary["to_replay"]] == [
        (s.partition, s.offset, (s.key or b"-").decode()) for s in sorted(seeded[:3])
    ]
    assert drafts_topic(bed) == []
    # A dry run writes no log either: the real run then replays all three.
    assert replay(bed)[1]["replayed"] == 3


def test_dry_run_output_names_no_value_text(bed: Bed) -> None:
    seed(
        bed,
        [
            (
                0,
                b"t-9",
                b'{"tenant_id": "acme", "output": "SECRET-WORDS [DOC-9003]"}',
                dlq_headers("internal_error"),
                None,
            )
        ],
    )
    result = CliRunner().invoke(app, ["replay", "--dry-run"], env=bed.env)
    assert result.exit_code == 0, result.output
    assert "SECRET" not in result.output
    assert "DOC-9003" not in result.output
    assert "would replay 1" in result.output
    assert drafts_topic(bed) == []


@pytest.mark.parametrize(
    ("selection", "expected_turns"),
    [
        (ReplayFilter(error_classes=frozenset({"infra_unavailable"})), {"t-1", "t-2"}),
        (ReplayFilter(tenants=frozenset({"acme"})), {"t-1", "t-3"}),
        (ReplayFilter(tenants=frozenset({"globex", "acme"})), {"t-1", "t-2", "t-3"}),
        (ReplayFilter(partitions=frozenset({1})), {"t-3"}),
        (ReplayFilter(partitions=frozenset({1}), all_classes=True), {"t-3", None}),
        (ReplayFilter(partitions=frozenset({0}), from_offset=1), {"t-2"}),
        (ReplayFilter(partitions=frozenset({1}), to_offset=0), {"t-3"}),
    ],
)
def test_each_filter_selects_exactly(
    bed: Bed, selection: ReplayFilter, expected_turns: set[str | None]
) -> None:
    standard(bed)
    replay(bed, selection=selection)
    turns = {None if r.key is None else r.key.decode() for r in drafts_topic(bed)}
    assert turns == expected_turns


def test_time_range_is_on_the_dlq_record_timestamp(bed: Bed) -> None:
    standard(bed)
    now = int(time.time() * 1000)
    replay(bed, selection=ReplayFilter(since_ms=now - 120_000, until_ms=now - 25_000))
    assert {r.key for r in drafts_topic(bed)} == {b"t-2", b"t-3"}


def test_limit_leaves_the_rest_for_the_next_run(bed: Bed) -> None:
    standard(bed)
    _code, summary = replay(bed, limit=1)
    assert summary["replayed"] == 1
    assert summary["skipped"]["over_limit"] == 2
    _code, summary = replay(bed)
    assert summary["replayed"] == 2
    assert len(drafts_topic(bed)) == 3


def test_max_replays_override(bed: Bed) -> None:
    standard(bed)
    code, summary = replay(bed, max_replays=1)
    assert code == 1
    assert summary["skipped"]["over_max"] == 2  # t-2 (1) and t-5 (3)
    code, summary = replay(bed, max_replays=4)
    assert code == 0
    assert summary["replayed"] == 2


def test_from_beginning_replays_again(bed: Bed) -> None:
    standard(bed)
    replay(bed)
    _code, summary = replay(bed, from_beginning=True)
    assert summary["replayed"] == 3
    assert len(drafts_topic(bed)) == 6
    assert replay(bed)[1]["replayed"] == 0


def test_rate_limits_the_sends(bed: Bed) -> None:
    seed(
        bed,
        [
            (
                0,
                f"t-{i}".encode(),
                draft_value(f"t-{i}", "acme"),
                dlq_headers("internal_error"),
                None,
            )
            for i in range(6)
        ],
    )
    started = time.monotonic()
    _code, summary = replay(bed, rate=10.0)
    assert summary["replayed"] == 6
    assert time.monotonic() - started >= 0.5  # 6 sends at 10/s: the last is due at 0.5 s


def test_cli_usage_errors_exit_2(bed: Bed) -> None:
    runner = CliRunner()
    for args in (
        ["replay", "--error-class", "no_such_class"],
        ["replay", "--from-offset", "3"],
        ["replay", "--since", "yesterday"],
        ["replay", "--limit", "0"],
    ):
        assert runner.invoke(app, args, env=bed.env).exit_code == 2, args


def test_cli_progress_and_summary(bed: Bed) -> None:
    standard(bed)
    result = CliRunner().invoke(app, ["replay", "--tenant", "acme"], env=bed.env)
    assert result.exit_code == 1  # t-5 (acme) is at the max
    assert "replayed 2" in result.stdout
    assert "NOT replayed" in result.stdout
    # Not a terminal: plain lines; the last one is forced, with the total the end offsets gave.
    last = result.stderr.splitlines()[-1]
    assert re.fullmatch(
        r"replay: read 5/5 \(100\.0%\), replayed 2, skipped 3 \(1 at max\), \d+\.\d/s, eta 0s",
        last,
    ), result.stderr


def test_missing_dlq_topic_fails_with_3(kafka_bootstrap: str) -> None:
    settings = Settings(
        GW_KAFKA_BOOTSTRAP_SERVERS=kafka_bootstrap,
        topics=TopicNames(dlq=f"replay-missing-{secrets.token_hex(4)}"),
    )
    out, err = io.StringIO(), io.StringIO()
    assert run_replay(settings, ReplayOptions(ReplayFilter(), 3), out=out, err=err) == 3
    assert "does not exist" in err.getvalue()
