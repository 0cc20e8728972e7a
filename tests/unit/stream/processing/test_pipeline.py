"""BatchProcessor with in-memory seams: evidence in a dict, turns in a dict, outputs in a list.

No Kafka here: these pin the batch rules of contract §7 (order, one fetch per tenant, faults
never become verdicts, one poison record dead-letters only itself).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from worker.core.citations.evidence import CitationRef, EvidenceKind, EvidenceRecord
from worker.core.claims.policy import PolicyBook
from worker.core.evidence_store import Found, InMemoryEvidenceStore, Wanted
from worker.core.messages.records import Headers, Incoming, OutRecord
from worker.core.turns.control import ControlKind, control_record
from worker.faults import MalformedEvidence, StoreUnavailable
from worker.runtime.metrics import Metrics
from worker.settings import Settings
from worker.stream.memory import MemoryPublisher, MemoryTurns
from worker.stream.processing.collector import BatchCollector
from worker.stream.processing.pipeline import BatchProcessor

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
TOPICS = {
    "regenerate": "agent.regenerate",
    "validated": "answers.validated",
    "could_not_ground": "answers.could_not_ground",
    "ledger": "citations.ledger",
    "dlq": "agent.drafts.dlq",
}

TRACEPARENT = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def obs(i: int) -> CitationRef:
    return CitationRef(EvidenceKind.OBS, i)


RECORDS = {
    "acme": [EvidenceRecord(ref=obs(1), acl=None, text="Latency rose after the deploy.")],
    "globex": [EvidenceRecord(ref=obs(2), acl=None, text="Scanner uptime was high.")],
}


class Sent(MemoryPublisher):
    """The shared in-memory publisher, with views by topic for these tests."""

    def on(self, topic: str) -> list[dict[str, Any]]:
        return [orjson.loads(v) for v in self.values(TOPICS[topic])]

    def topics(self) -> list[str]:
        return [r.topic for r in self.records]

    def dead_letters(self) -> list[tuple[bytes | None, str]]:
        return [
            (r.key, dict(r.headers)["dlq.error.class"].decode())
            for r in self.records
            if r.topic == TOPICS["dlq"]
        ]


class DownStore:
    """An evidence store that raises ``fault`` for its first ``failures`` tenants asked (each
    tenant of a batch in turn), and whatever :meth:`refuse` raises for a tenant."""

    def __init__(self, failures: float, fault: Exception | None = None) -> None:
        self.inner = InMemoryEvidenceStore(RECORDS)
        self.failures = failures
        self.fault = fault or StoreUnavailable("down")
        self.calls = 0

    async def fetch_batch(self, wanted: Wanted) -> Found:
        for tenant_id in wanted:
            self.calls += 1
            if self.calls <= self.failures:
                raise self.fault
            self.refuse(tenant_id)
        return await self.inner.fetch_batch(wanted)

    def refuse(self, tenant_id: str) -> None:
        """Raise for a tenant this store cannot serve (none here)."""


def settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "retry_initial_backoff_s": 0.001,
        "retry_max_backoff_s": 0.002,
        "max_draft_bytes": 4096,
    }
    return Settings(**(values | overrides))


def processor(
    evidence: Any,
    turns: MemoryTurns | None = None,
    *,
    collector: BatchCollector | None = None,
    **overrides: Any,
) -> tuple[BatchProcessor, MemoryTurns, Sent]:
    turns = turns or MemoryTurns()
    sent = Sent()
    proc = BatchProcessor(
        settings=settings(**overrides),
        evidence=evidence,
        turns=turns,
        publisher=sent,
        policies=PolicyBook(),
        metrics=Metrics(),
        worker_version="test",
        clock=lambda: NOW,
        collector=collector,
    )
    return proc, turns, sent


_offset = iter(range(10**9))


def rec(
    turn: str,
    text: str,
    *,
    tenant: str = "acme",
    attempt: int = 0,
    draft_id: str | None = None,
    partition: int = 0,
    **output: Any,
) -> Incoming:
    env = {
        "schema_version": 1,
        "draft_id": draft_id or f"{turn}-{attempt}",
        "turn_id": turn,
        "attempt": attempt,
        "tenant_id": tenant,
        "principal": {"user_id": "u-1", "groups": []},
        "kind": "answer",
        "output": {"answer_markdown": text, **output},
    }
    return Incoming(
        topic="agent.drafts",
        partition=partition,
        offset=next(_offset),
        timestamp_ms=int(NOW.timestamp() * 1000),
        key=turn.encode(),
        value=json.dumps(env).encode(),
        headers=(),
    )


GOOD = "Latency rose after the deploy [OBS-1]."
DANGLING = "Latency rose after the deploy [OBS-99]."


async def test_a_turns_drafts_are_decided_in_order_within_one_batch() -> None:
    proc, turns, sent = processor(InMemoryEvidenceStore(RECORDS))
    report = await proc.process(
        [
            rec("t-a", DANGLING),
            rec("t-b", GOOD),
            rec("t-a", GOOD, attempt=1),
            rec("t-c", DANGLING),
            rec("t-c", DANGLING, attempt=1),
        ]
    )
    assert [(t.split(".")[-1], k) for t, k, _, _, _ in sent.records] == [
        ("regenerate", b"t-a"),
        ("ledger", b"t-a"),
        ("validated", b"t-b"),
        ("ledger", b"t-b"),
        ("validated", b"t-a"),
        ("ledger", b"t-a"),
        ("regenerate", b"t-c"),
        ("ledger", b"t-c"),
        ("could_not_ground", b"t-c"),
        ("ledger", b"t-c"),
    ]
    assert dict(report.outcomes) == {"regenerate": 2, "grounded": 2, "could_not_ground": 1}
    assert sent.on("validated")[1]["attempt"] == 1
    assert sent.on("could_not_ground")[0]["attempts"] == 2
    assert set(turns.turns) == {"t-a", "t-b", "t-c"}


class SlowFirstEnqueue(Sent):
    """A producer whose first hand-over waits (metadata, buffer space) before it enqueues."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def send(self, record: OutRecord) -> Awaitable[object]:
        self.calls += 1
        if self.calls == 1:
            await asyncio.sleep(0.01)
        return await super().send(record)


async def test_outputs_are_handed_to_the_producer_in_decision_order() -> None:
    """A turn's regenerate request must not overtake its terminal event on the partition."""
    proc, _, _ = processor(InMemoryEvidenceStore(RECORDS))
    slow = SlowFirstEnqueue()
    proc._publisher = slow
    await proc.process([rec("t-a", DANGLING), rec("t-a", GOOD, attempt=1)])
    assert [(t.split(".")[-1], k) for t, k, _, _, _ in slow.records] == [
        ("regenerate", b"t-a"),
        ("ledger", b"t-a"),
        ("validated", b"t-a"),
        ("ledger", b"t-a"),
    ]


async def test_one_fetch_per_tenant_per_batch() -> None:
    """Batching: one store call for the whole batch, in which each tenant is asked once."""
    store = InMemoryEvidenceStore(RECORDS)
    proc, _, sent = processor(store)
    batch = [rec(f"t-{i}", GOOD) for i in range(5)]
    batch += [rec(f"g-{i}", "Uptime was high [OBS-2].", tenant="globex") for i in range(3)]
    batch.append(rec("t-x", "Two sources [OBS-1][OBS-77]."))
    report = await proc.process(batch)
    assert report.store_fetches == 1  # was 2 (one per tenant) before the cross-tenant batch
    assert store.batches == [("acme", "globex")]
    assert sorted(store.calls) == [
        ("acme", frozenset({obs(1), obs(77)})),
        ("globex", frozenset({obs(2)})),
    ]
    assert len(sent.on("validated")) == 8


async def test_no_fetch_when_nothing_is_cited() -> None:
    store = InMemoryEvidenceStore(RECORDS)
    proc, _, sent = processor(store)
    await proc.process([rec("t-n", "Nothing found.", no_grounding=True)])
    assert store.calls == []
    assert len(sent.on("could_not_ground")) == 1


async def test_with_a_budget_an_outage_dead_letters_and_never_decides() -> None:
    store = DownStore(failures=float("inf"))
    turns = MemoryTurns()
    proc, turns, sent = processor(store, turns, retry_budget=2)
    # A turn already waiting for its regeneration: a verdict now would end it.
    first, _, first_sent = processor(InMemoryEvidenceStore(RECORDS), turns)
    await first.process([rec("t-r", DANGLING)])
    assert first_sent.topics()[0] == TOPICS["regenerate"]

    report = await proc.process(
        [rec("t-g", GOOD), rec("t-d", DANGLING), rec("t-r", DANGLING, attempt=1)]
    )
    assert store.calls == 3  # the first attempt and two retries
    assert sent.dead_letters() == [
        (b"t-g", "infra_unavailable"),
        (b"t-d", "infra_unavailable"),
        (b"t-r", "infra_unavailable"),
    ]
    assert set(sent.topics()) == {TOPICS["dlq"]}
    assert dict(report.dead_letters) == {"infra_unavailable": 3}
    messages = {dict(h)["dlq.error.message"] for t, _, _, h, _ in sent.records}
    assert messages == {b"evidence store unavailable after 3 attempts"}
    # State untouched: the regeneration is still awaited, the others are still open.
    assert turns.turns["t-r"].state.phase.value == "regenerating"
    assert "t-g" not in turns.turns
    assert "t-d" not in turns.turns


async def test_with_a_budget_drafts_of_a_healthy_tenant_are_still_decided() -> None:
    class GlobexDown(DownStore):
        def refuse(self, tenant_id: str) -> None:
            if tenant_id == "globex":
                raise StoreUnavailable("down")

    proc, _, sent = processor(GlobexDown(0), retry_budget=1)
    await proc.process([rec("t-1", GOOD), rec("g-1", "Uptime [OBS-2].", tenant="globex")])
    assert sent.dead_letters() == [(b"g-1", "infra_unavailable")]
    assert [m["turn_id"] for m in sent.on("validated")] == ["t-1"]


async def test_unlimited_budget_waits_for_the_store_then_decides() -> None:
    store = DownStore(failures=6)
    proc, _, sent = processor(store)  # retry_budget defaults to None: retry forever
    report = await proc.process([rec("t-w", GOOD), rec("t-x", DANGLING)])
    assert store.calls == 7
    assert sent.dead_letters() == []
    assert [m["turn_id"] for m in sent.on("validated")] == ["t-w"]
    assert [m["turn_id"] for m in sent.on("regenerate")] == ["t-x"]
    assert report.store_fetches == 7


async def test_a_poison_record_dead_letters_only_itself() -> None:
    proc, _, sent = processor(InMemoryEvidenceStore(RECORDS), MemoryTurns(poison={"t-bad"}))
    report = await proc.process([rec("t-1", GOOD), rec("t-bad", GOOD), rec("t-2", DANGLING)])
    assert sent.dead_letters() == [(b"t-bad", "internal_error")]
    (header,) = [dict(h) for t, _, _, h, _ in sent.records if t == TOPICS["dlq"]]
    assert header["dlq.error.message"] == b"internal error: KeyError"
    assert [m["turn_id"] for m in sent.on("validated")] == ["t-1"]
    assert [m["turn_id"] for m in sent.on("regenerate")] == ["t-2"]
    assert dict(report.dead_letters) == {"internal_error": 1}


async def test_a_poison_store_answer_dead_letters_only_that_tenants_drafts() -> None:
    class GlobexBroken(DownStore):
        def refuse(self, tenant_id: str) -> None:
            if tenant_id == "globex":
                raise MalformedEvidence("a row of the wrong shape")

    proc, _, sent = processor(GlobexBroken(0))
    await proc.process([rec("g-1", "Uptime [OBS-2].", tenant="globex"), rec("t-1", GOOD)])
    assert sent.dead_letters() == [(b"g-1", "internal_error")]
    assert [m["turn_id"] for m in sent.on("validated")] == ["t-1"]


@pytest.mark.parametrize(
    ("value", "error_class"),
    [
        (b"not json", "malformed_envelope"),
        (b'{"schema_version": 2}', "unsupported_schema_version"),
        (b"{" + b" " * 5000 + b"}", "oversized"),
    ],
)
async def test_unreadable_records_are_dead_lettered_beside_good_ones(
    value: bytes, error_class: str
) -> None:
    proc, _, sent = processor(InMemoryEvidenceStore(RECORDS))
    bad = rec("t-bad", GOOD)._replace(value=value)
    await proc.process([rec("t-1", GOOD), bad, rec("t-2", GOOD)])
    assert sent.dead_letters() == [(b"t-bad", error_class)]
    assert [m["turn_id"] for m in sent.on("validated")] == ["t-1", "t-2"]


async def test_identity_mismatch_is_dead_lettered_and_keeps_the_turn() -> None:
    proc, turns, sent = processor(InMemoryEvidenceStore(RECORDS))
    intruder = rec("t-1", GOOD, attempt=1)
    env = json.loads(intruder.value)
    env["principal"] = {"user_id": "u-2"}
    await proc.process([rec("t-1", DANGLING), intruder._replace(value=json.dumps(env).encode())])
    assert sent.dead_letters() == [(b"t-1", "identity_mismatch")]
    assert turns.turns["t-1"].state.phase.value == "regenerating"


async def test_traceparent_is_copied_to_every_output_of_its_draft() -> None:
    proc, _, sent = processor(InMemoryEvidenceStore(RECORDS))
    traced = rec("t-1", DANGLING)._replace(headers=(("traceparent", TRACEPARENT), ("other", b"x")))
    await proc.process([traced, rec("t-2", GOOD)])
    by_key = {(t, k): h for t, k, _, h, _ in sent.records}
    assert by_key[TOPICS["regenerate"], b"t-1"] == (("traceparent", TRACEPARENT),)
    assert by_key[TOPICS["ledger"], b"t-1"] == (("traceparent", TRACEPARENT),)
    assert by_key[TOPICS["validated"], b"t-2"] == ()


async def test_a_turn_is_stored_on_the_partition_of_its_record() -> None:
    proc, turns, _ = processor(InMemoryEvidenceStore(RECORDS))
    await proc.process([rec("t-p", DANGLING, partition=3)])
    assert turns.turns["t-p"].partition == 3


VALID_TRACE = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def deadline_tick(turn: str, *, partition: int = 0, after_s: float = 3600) -> Incoming:
    """The control record the deadline scanner appends, stamped ``after_s`` past NOW."""
    ctl = control_record(ControlKind.REGENERATION_DEADLINE, turn, partition, NOW)
    return Incoming(
        topic="agent.drafts",
        partition=partition,
        offset=next(_offset),
        timestamp_ms=int(NOW.timestamp() * 1000 + after_s * 1000),
        key=ctl.key,
        value=ctl.value,
        headers=ctl.headers,
    )


async def test_a_regeneration_timeout_carries_the_turns_traceparent() -> None:
    """The control record has no trace; the could-not-ground event takes the draft's."""
    proc, turns, sent = processor(InMemoryEvidenceStore(RECORDS))
    traced = rec("t-to", DANGLING)._replace(headers=(("traceparent", VALID_TRACE),))
    await proc.process([traced])
    assert turns.turns["t-to"].state.traceparent == VALID_TRACE.decode()
    await proc.process([deadline_tick("t-to")])
    timeout = [(k, v, h) for t, k, v, h, _ in sent.records if t == TOPICS["could_not_ground"]]
    assert len(timeout) == 1
    key, value, headers = timeout[0]
    assert key == b"t-to"
    assert orjson.loads(value)["reasons"][0]["code"] == "regeneration_timeout"
    assert headers == (("traceparent", VALID_TRACE),)
    # A redelivered tick re-publishes the same event with the same trace.
    await proc.process([deadline_tick("t-to")])
    again = [h for t, _, _, h, _ in sent.records if t == TOPICS["could_not_ground"]]
    assert again == [(("traceparent", VALID_TRACE),)] * 2


@pytest.mark.parametrize(
    "header", [(), (("traceparent", b"00-a-b-01"),), (("traceparent", b"not a trace"),)]
)
async def test_a_turn_keeps_no_trace_context_unless_it_is_valid(header: Headers) -> None:
    proc, turns, sent = processor(InMemoryEvidenceStore(RECORDS))
    await proc.process([rec("t-nt", DANGLING)._replace(headers=header)])
    assert turns.turns["t-nt"].state.traceparent is None
    await proc.process([deadline_tick("t-nt")])
    timeout = [h for t, _, _, h, _ in sent.records if t == TOPICS["could_not_ground"]]
    assert timeout == [()]


async def test_a_grounded_turn_stores_no_trace_context() -> None:
    """Only a turn that can still time out needs it: terminal states stay as small as before."""
    proc, turns, _ = processor(InMemoryEvidenceStore(RECORDS))
    await proc.process([rec("t-g", GOOD)._replace(headers=(("traceparent", VALID_TRACE),))])
    assert turns.turns["t-g"].state.traceparent is None


async def test_two_tenants_citing_the_same_ids_in_one_batch_each_see_only_their_own() -> None:
    """OBS-1 is acme's, OBS-2 globex's; both tenants cite both in one batch (one store call)."""
    store = InMemoryEvidenceStore(RECORDS)
    proc, _, sent = processor(store)
    both = "Latency rose [OBS-1]. Uptime was high [OBS-2]."
    await proc.process(
        [
            rec("t-a", both),
            rec("g-a", both, tenant="globex"),
            rec("t-b", GOOD),
            rec("g-b", "Latency rose after the deploy [OBS-1].", tenant="globex"),
        ]
    )
    assert store.batches == [("acme", "globex")]
    assert sorted(store.calls) == [
        ("acme", frozenset({obs(1), obs(2)})),
        ("globex", frozenset({obs(1), obs(2)})),
    ]
    regenerate = {m["turn_id"]: m for m in sent.on("regenerate")}
    assert set(regenerate) == {"t-a", "g-a", "g-b"}
    assert [m["turn_id"] for m in sent.on("validated")] == ["t-b"]
    # Each tenant's dangling id is the other tenant's id, never its own.
    dangling = {
        turn: {r["citation"] for r in m["reasons"] if r["code"] == "dangling_citation"}
        for turn, m in regenerate.items()
    }
    assert dangling == {"t-a": {"OBS-2"}, "g-a": {"OBS-1"}, "g-b": {"OBS-1"}}


async def test_a_poison_batch_answer_is_retried_per_tenant_and_spares_the_others() -> None:
    """The batch call fails on globex's malformed row; acme and initech are still decided."""

    class GlobexBroken(DownStore):
        def refuse(self, tenant_id: str) -> None:
            if tenant_id == "globex":
                raise MalformedEvidence("a row of the wrong shape")

    store = GlobexBroken(0)
    proc, _, sent = processor(store)
    report = await proc.process(
        [
            rec("t-1", GOOD),
            rec("g-1", "Uptime [OBS-2].", tenant="globex"),
            rec("i-1", "Nothing here [OBS-5].", tenant="initech"),
        ]
    )
    assert sent.dead_letters() == [(b"g-1", "internal_error")]
    assert [m["turn_id"] for m in sent.on("validated")] == ["t-1"]
    assert [m["turn_id"] for m in sent.on("regenerate")] == ["i-1"]
    assert report.store_fetches == 4  # the batch call, then one call per tenant


async def test_deferred_records_are_published_after_the_outputs_of_their_batch() -> None:
    """The worker's changelog records go out with the batch and are acknowledged with it."""
    proc, _, sent = processor(InMemoryEvidenceStore(RECORDS))
    asked: list[int] = []

    def changelog() -> list[OutRecord]:
        asked.append(len(sent.records))  # called once, before anything is sent
        return [OutRecord("turns-changelog", b"t-1", b"state", (), 3)]

    proc._also_publish = changelog
    await proc.process([rec("t-1", GOOD)])
    assert asked == [0]
    assert [t for t, _, _, _, _ in sent.records] == [
        TOPICS["validated"],
        TOPICS["ledger"],
        "turns-changelog",
    ]


class SlowStore(InMemoryEvidenceStore):
    """Evidence that takes ``delay`` seconds to answer."""

    def __init__(self, delay: float) -> None:
        super().__init__(RECORDS)
        self.delay = delay

    async def fetch_batch(self, wanted: Wanted) -> Found:
        for _ in wanted:  # each tenant's look-up takes ``delay``
            await asyncio.sleep(self.delay)
        return await super().fetch_batch(wanted)


class SlowAcks(Sent):
    """A broker that acknowledges ``delay`` seconds after the hand-over."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    async def send(self, record: OutRecord) -> Awaitable[object]:
        await super().send(record)
        return asyncio.ensure_future(asyncio.sleep(self.delay))


def stage_seconds(metrics: Metrics) -> dict[str, tuple[float, float]]:
    """(count, sum) of grounding_batch_stage_seconds by stage."""
    got: dict[str, list[float]] = {}
    for family in metrics.registry.collect():
        for sample in family.samples:
            if sample.name.startswith("grounding_batch_stage_seconds_"):
                kind = sample.name.rsplit("_", 1)[1]
                if kind in ("count", "sum"):
                    pair = got.setdefault(sample.labels["stage"], [0.0, 0.0])
                    pair[0 if kind == "count" else 1] = sample.value
    return {stage: (c, s) for stage, (c, s) in got.items()}


async def test_a_batch_reports_where_its_time_went_by_stage() -> None:
    """Operators (and scripts/bench) read the store and broker waits apart from the CPU."""
    proc, _, _ = processor(SlowStore(0.05))
    slow = SlowAcks(0.03)
    proc._publisher = slow
    metrics = proc._metrics
    await proc.process([rec("t-a", GOOD), rec("t-b", GOOD)])
    stages = stage_seconds(metrics)
    assert set(stages) == {"evidence", "decide", "publish"}  # "window" is the take's (app.py)
    assert all(count == 1 for count, _ in stages.values())
    assert stages["evidence"][1] >= 0.05
    assert 0.03 <= stages["publish"][1] < 0.05 + 0.03
    assert stages["decide"][1] < 0.03  # no waiting in the decisions themselves


async def test_each_drafts_latency_is_observed_from_produced_at_else_its_record_time() -> None:
    metrics = Metrics()
    sent = Sent()
    proc = BatchProcessor(
        settings=settings(),
        evidence=InMemoryEvidenceStore(RECORDS),
        turns=MemoryTurns(),
        publisher=sent,
        policies=PolicyBook(),
        metrics=metrics,
        worker_version="test",
        clock=lambda: NOW,
    )
    produced = datetime.now(UTC).timestamp() - 2.0
    stamped = rec("t-lat-1", GOOD)
    env = json.loads(stamped.value)
    env["produced_at"] = datetime.fromtimestamp(produced, UTC).isoformat()
    with_produced_at = stamped._replace(value=json.dumps(env).encode())
    recorded = rec("t-lat-2", GOOD)
    recorded = recorded._replace(timestamp_ms=int((produced - 5.0) * 1000))
    naive = rec("t-lat-3", GOOD)
    env = json.loads(naive.value)
    env["produced_at"] = "2026-12-02T12:00:00"  # no offset: its instant is unknown
    naive = naive._replace(value=json.dumps(env).encode(), timestamp_ms=recorded.timestamp_ms)

    await proc.process([with_produced_at, recorded, naive])

    def sample(name: str, since: str) -> float:
        value = metrics.registry.get_sample_value(name, {"since": since})
        assert value is not None
        return value

    assert sample("grounding_draft_latency_seconds_count", "produced_at") == 1
    assert 2.0 <= sample("grounding_draft_latency_seconds_sum", "produced_at") < 10
    assert sample("grounding_draft_latency_seconds_count", "record") == 2
    assert 14.0 <= sample("grounding_draft_latency_seconds_sum", "record") < 30
