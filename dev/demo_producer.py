#!/usr/bin/env python3
"""A demo agent producer: publishes realistic drafts for the demo corpus and answers regenerations.

    .venv/bin/python -m dev.demo_producer [--timeout 90]

It plays the agent side of the contract against a running worker: good answers, proposals and
reports; drafts citing an id that does not exist or belongs to another tenant; drafts citing a
document the reader may not see; a published report; a model's raw fenced text; malformed
envelopes; a proposal whose typed claim contradicts the agent's own tool facts (tenant globex
declares the claim in deploy/demo-policies.json). When the worker asks for a regeneration it
answers with a corrected attempt 1 - or, for some turns, with another bad attempt, or not at all -
so every route shows up. It then prints a tally of what went where, and checks that no output
carries an id its reader may not see and no could-not-ground reason more than a code and a path.
Exit code 0 when every turn ended as planned and nothing leaked, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from worker.core import (
    HIDDEN,
    CitationRef,
    EvidenceKind,
    EvidenceRecord,
    Principal,
    resolve_all,
)
from worker.settings import Settings
from worker.stores.demo import load_corpus

TOKEN = re.compile(rb"(OBS|DOC|EVT)-([0-9]+)")


@dataclass
class Turn:
    """One scripted conversation turn."""

    name: str
    user: str
    groups: tuple[str, ...]
    kind: str
    output: Any
    #: What the agent does when asked to regenerate: "fix", "repeat" or "ignore".
    on_regenerate: str = "fix"
    fixed: Any = None
    expect: str = "grounded"
    raw: bytes | None = None
    turn_id: str = ""
    events: list[str] = field(default_factory=list)
    done: str | None = None
    tenant: str = "acme"
    #: The typed values the agent's tools returned (the envelope's ``facts``, rule 7b).
    facts: list[dict[str, Any]] | None = None


def incident_report(status: str) -> dict[str, Any]:
    """A small report draft; an agent must send ``DRAFT`` (a human publishes)."""
    return {
        "title": "Checkout latency incident",
        "sections": [
            {
                "heading": "Impact",
                "body_markdown": "p95 rose to 840 ms [OBS-1001].",
                "citations": [{"kind": "OBS", "id": 1001}],
            }
        ],
        "timeline": [
            {
                "at": "2026-06-01T14:05:00Z",
                "text": "Deploy started [EVT-501].",
                "citations": [{"kind": "EVT", "id": 501}],
            }
        ],
        "status": status,
    }


def conveyor_flag(flag: str) -> dict[str, Any]:
    """A globex proposal flagging a conveyor; the tenant declares ``patch.flag`` a typed claim."""
    return {
        "proposal_type": "entity_flag",
        "summary": f"Mark Site B conveyor 4 {flag}: vibration trends above threshold [OBS-2002].",
        "grounding": {
            "reasoning": "Readings keep rising; maintenance is booked [EVT-601].",
            "observations": [2002],
        },
        "confidence": 0.7,
        "gate": "Q9",
        "patch": {"entity_id": "conveyor:site-b-4", "flag": flag, "reason": "vibration"},
    }


#: What the agent's asset tool said: ``cleared`` early on, ``review`` once it looked again.
CONVEYOR_FACTS = [
    {
        "entity": "conveyor:site-b-4",
        "field": "flag",
        "value": value,
        "tool_name": "asset_status",
        "tool_call_id": f"call-{iteration}",
        "iteration": iteration,
    }
    for iteration, value in enumerate(["cleared", "review"])
]


def scenarios() -> list[Turn]:
    """The demo's turns, all in tenant ``acme`` (u-ana: analysts, u-bob: sales, u-cy: none)."""
    ana, bob, cy = ("u-ana", ("analysts",)), ("u-bob", ("sales",)), ("u-cy", ())
    answer = "answer"
    return [
        Turn(
            "grounded answer",
            *ana,
            answer,
            {
                "answer_markdown": "Checkout p95 latency rose from 180 ms to 840 ms [OBS-1001]. "
                "The runbook says to page the payments on-call above 500 ms [DOC-9001].",
                # The verified quote is what DOC-9001 vouches for (rule 6b): it holds the 500 ms.
                "citations": [
                    {
                        "kind": "DOC",
                        "id": 9001,
                        "quote": "exceeds 500 ms at p95 for five minutes, "
                        "page the payments on-call",
                    }
                ],
            },
        ),
        Turn(
            "grounded with group-only evidence",
            *ana,
            answer,
            {
                "answer_markdown": "EU card refunds are 3.2x their baseline [OBS-1002][DOC-9002].",
            },
        ),
        Turn(
            "hidden document hedged",
            *cy,
            answer,
            {
                "answer_markdown": "Checkout latency rose sharply [OBS-1001]. "
                "EU refunds spiked in Q2 [DOC-9002].",
            },
        ),
        Turn(
            "hidden document, other reader",
            *bob,
            answer,
            {
                "answer_markdown": "The Initech renewal slipped to Q3 [OBS-1003][DOC-9003].",
            },
        ),
        Turn(
            "dangling id, fixed on regeneration",
            *ana,
            answer,
            {
                "answer_markdown": "The deploy went out to eu-west-1 [EVT-501]. "
                "Latency followed [OBS-424242].",
            },
            fixed={
                "answer_markdown": "The deploy went out to eu-west-1 [EVT-501]. "
                "Latency followed [OBS-1001]."
            },
        ),
        Turn(
            "unsupported number, fixed on regeneration",
            *ana,
            answer,
            {
                "answer_markdown": "Checkout p95 latency rose to 940 ms after the 14:05 UTC "
                "deploy [OBS-1001].",
            },
            fixed={
                "answer_markdown": "Checkout p95 latency rose to 840 ms after the 14:05 UTC "
                "deploy [OBS-1001]."
            },
        ),
        Turn(
            "cross-tenant id, fixed on regeneration",
            *ana,
            answer,
            {
                "answer_markdown": "Scanner uptime was 99.2% [OBS-2001].",
            },
            fixed={"answer_markdown": "Checkout latency rose [OBS-1001]."},
        ),
        Turn(
            "uncited claim, repeated: could not ground",
            *ana,
            answer,
            {
                "answer_markdown": "Latency rose [OBS-1001]. Everything else is fine.",
            },
            on_regenerate="repeat",
            expect="could_not_ground",
        ),
        Turn(
            "regeneration never answered: timeout",
            *ana,
            answer,
            {
                "answer_markdown": "Refunds tripled [DOC-777777].",
            },
            on_regenerate="ignore",
            expect="could_not_ground",
        ),
        Turn(
            "agent says no grounding",
            *cy,
            answer,
            {
                "answer_markdown": "I could not find evidence for this.",
                "no_grounding": True,
            },
            expect="could_not_ground",
        ),
        Turn(
            "report marked PUBLISHED, fixed",
            *ana,
            "report",
            incident_report("PUBLISHED"),
            fixed=incident_report("DRAFT"),
        ),
        Turn(
            "proposal grounded",
            *ana,
            "proposal",
            {
                "proposal_type": "entity_flag",
                "summary": "Flag payments-db-2 for connection-pool saturation [OBS-1006].",
                "patch": {"entity_id": "payments-db-2", "flag": "watch", "reason": "pool peaked"},
                "grounding": {
                    "reasoning": "Saturation peaked during the incident.",
                    "observations": [1006],
                },
                "confidence": 0.7,
                "gate": "Q9",
                "auto_appliable": False,
            },
        ),
        Turn(
            "raw fenced model text",
            *ana,
            answer,
            '```json\n{"answer_markdown": "The deploy reached eu-west-1 [EVT-501]."}\n```',
        ),
        Turn(
            "typed claim contradicted, fixed",
            "u-gil",
            ("ops",),
            "proposal",
            conveyor_flag("cleared"),
            fixed=conveyor_flag("review"),
            tenant="globex",
            facts=CONVEYOR_FACTS,
        ),
        Turn(
            "typed claim contradicted twice",
            "u-gil",
            ("ops",),
            "proposal",
            conveyor_flag("cleared"),
            on_regenerate="repeat",
            expect="could_not_ground",
            tenant="globex",
            facts=CONVEYOR_FACTS,
        ),
        Turn("not JSON at all", *ana, answer, None, expect="dead_letter", raw=b"\x00garbage"),
        Turn(
            "envelope without tenant",
            *ana,
            answer,
            None,
            expect="dead_letter",
            raw=b'{"schema_version": 1, "draft_id": "x"}',
        ),
    ]


def envelope(turn: Turn, attempt: int, output: Any) -> bytes:
    value: dict[str, Any] = {
        "schema_version": 1,
        "draft_id": f"{turn.turn_id}-a{attempt}",
        "turn_id": turn.turn_id,
        "attempt": attempt,
        "tenant_id": turn.tenant,
        "principal": {"user_id": turn.user, "groups": list(turn.groups)},
        "kind": turn.kind,
        "output": output,
        "produced_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
    }
    if turn.facts is not None:
        value["facts"] = turn.facts
    return orjson.dumps(value)


def hidden_ids(user: str, groups: tuple[str, ...], tenant_id: str = "acme") -> set[bytes]:
    """Every demo id (``DOC-9002``) this reader may not see: what must never reach them."""
    principal = Principal(user_id=user, groups=groups)
    evidence: dict[CitationRef, EvidenceRecord] = {}
    for tenant in load_corpus().tenants:
        if tenant.tenant_id != tenant_id:
            continue
        rows: list[tuple[str, Any]] = [("OBS", r) for r in tenant.observations]
        rows += [("EVT", r) for r in tenant.events] + [("DOC", d) for d in tenant.documents]
        for kind, row in rows:
            ref = CitationRef(EvidenceKind(kind), row.id)
            acl = row.acl if kind != "DOC" or row.has_acl_field else ()
            evidence[ref] = EvidenceRecord(ref=ref, acl=acl, revoked_at=row.revoked_at)
    resolutions = resolve_all(evidence, evidence, principal, None, datetime.now(UTC))
    return {ref.label.encode() for ref, resolution in resolutions.items() if resolution in HIDDEN}


async def run(settings: Settings, wait_s: float, say: Callable[[str], None]) -> int:
    names = settings.topics
    run_id = uuid.uuid4().hex[:6]
    turns = scenarios()
    for i, t in enumerate(turns):
        t.turn_id = f"demo-{run_id}-{i:02d}"
    by_id = {t.turn_id: t for t in turns}
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap_servers)
    watched = [names.regenerate, names.validated, names.could_not_ground, names.dlq, names.ledger]
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap_servers, group_id=None)
    await producer.start()
    await consumer.start()
    try:
        tps = [
            TopicPartition(topic, p)
            for topic in watched
            for p in (consumer.partitions_for_topic(topic) or await _partitions(consumer, topic))
        ]
        consumer.assign(tps)
        await consumer.seek_to_end(*tps)
        for tp in tps:
            await consumer.position(tp)
        say(f"demo run {run_id}: {len(turns)} turns to {names.drafts}")
        for t in turns:
            value = t.raw if t.raw is not None else envelope(t, 0, t.output)
            await producer.send_and_wait(names.drafts, value, key=t.turn_id.encode())
        tally: Counter[str] = Counter()
        leaks: list[str] = []
        hidden_by_reader: dict[str, set[bytes]] = {}
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and any(t.done is None for t in turns):
            batches = await consumer.getmany(timeout_ms=500)
            for tp, records in batches.items():
                for rec in records:
                    turn = by_id.get((rec.key or b"").decode("utf-8", "replace"))
                    if turn is None:
                        continue
                    tally[tp.topic] += 1
                    # The ledger records hidden ids by design; the DLQ keeps the original bytes.
                    if tp.topic not in {names.dlq, names.ledger}:
                        hidden = hidden_by_reader.setdefault(
                            turn.user, hidden_ids(turn.user, turn.groups, turn.tenant)
                        )
                        leaks.extend(
                            f"{turn.turn_id} {tp.topic} {m.group(0).decode()}"
                            for m in TOKEN.finditer(rec.value or b"")
                            if m.group(0) in hidden
                        )
                    await _route(
                        producer, names.drafts, tp.topic, names, turn, rec.value or b"", tally, say
                    )
        return _report(turns, tally, leaks, names, say)
    finally:
        await consumer.stop()
        await producer.stop()


async def _partitions(consumer: AIOKafkaConsumer, topic: str) -> set[int]:
    await consumer._client.force_metadata_update()
    return consumer.partitions_for_topic(topic) or {0}


async def _route(
    producer: AIOKafkaProducer,
    drafts: str,
    topic: str,
    names: Any,
    turn: Turn,
    value: bytes,
    tally: Counter[str],
    say: Callable[[str], None],
) -> None:
    doc = orjson.loads(value) if topic != names.dlq else {}
    if topic == names.regenerate:
        codes = ", ".join(r["code"] for r in doc.get("reasons", []))
        turn.events.append(f"regenerate ({codes})")
        if turn.on_regenerate == "ignore":
            return
        output = turn.fixed if turn.on_regenerate == "fix" else turn.output
        await producer.send_and_wait(drafts, envelope(turn, 1, output), key=turn.turn_id.encode())
    elif topic == names.validated:
        hedged = sum(c.get("grounding_status") == "hedged" for c in doc.get("claims", []))
        checks = Counter(c["disposition"] for c in doc.get("claim_checks", []))
        notes = [f"{hedged} claim(s) hedged"] if hedged else []
        if checks:
            notes.append(
                "claim checks: " + ", ".join(f"{n} {d}" for d, n in sorted(checks.items()))
            )
        turn.done = "grounded"
        turn.events.append("grounded" + (f" ({'; '.join(notes)})" if notes else ""))
        tally["hedged answers"] += 1 if hedged else 0
        tally["typed claims supported"] += checks["supported"]
    elif topic == names.could_not_ground:
        codes = ", ".join(sorted({r["code"] for r in doc.get("reasons", [])}))
        # Codes and paths only (contract §5): a detail could carry a settled fact or model text.
        tally["could_not_ground reasons with more than code and path"] += sum(
            bool(set(r) - {"code", "path"}) for r in doc.get("reasons", [])
        )
        turn.done = "could_not_ground"
        turn.events.append(f"could not ground ({codes})")
        for r in doc.get("reasons", []):
            tally[f"could_not_ground:{r['code']}"] += 1
    elif topic == names.dlq:
        turn.done = "dead_letter"
        turn.events.append("dead-lettered")
    else:
        return
    if turn.done is not None and topic != names.regenerate:
        say(f"  {turn.name:<44} {' -> '.join(turn.events)}")


def _report(
    turns: list[Turn], tally: Counter[str], leaks: list[str], names: Any, say: Callable[[str], None]
) -> int:
    say("")
    say("tally")
    for topic in (
        names.validated,
        names.could_not_ground,
        names.regenerate,
        names.dlq,
        names.ledger,
    ):
        say(f"  {topic:<32} {tally[topic]:>4}")
    say(f"  {'answers with hedged claims':<32} {tally['hedged answers']:>4}")
    say(f"  {'typed claims supported':<32} {tally['typed claims supported']:>4}")
    overshared = tally["could_not_ground reasons with more than code and path"]
    if overshared:
        leaks.append(f"{overshared} could-not-ground reason(s) with more than code and path")
    unfinished = [t for t in turns if t.done is None]
    unexpected = [t for t in turns if t.done is not None and t.done != t.expect]
    say(f"  {'hidden ids leaked to a reader':<32} {len(leaks):>4}")
    for leak in leaks:
        say(f"    LEAK {leak}")
    for t in unfinished:
        say(f"  NOT FINISHED: {t.name} ({t.turn_id})")
    for t in unexpected:
        say(f"  UNEXPECTED: {t.name} ended {t.done}, expected {t.expect}")
    ok = not leaks and not unfinished and not unexpected
    say("demo: " + ("every turn ended as planned, nothing leaked" if ok else "FAILED"))
    return 0 if ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds to wait (default 90)")
    args = parser.parse_args()
    sys.exit(asyncio.run(run(Settings(), args.timeout, lambda s: print(s, flush=True))))


if __name__ == "__main__":
    main()
