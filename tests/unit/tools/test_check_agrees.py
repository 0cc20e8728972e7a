"""``check`` and the worker never disagree, on any draft: generated ones included.

The same generated draft bytes go to the worker's batch processor
(``worker.stream.processing.pipeline``,
with the evidence in memory, turns in a dict and outputs in a list: the whole of what the worker
does with a draft but Kafka) and to ``check``, as a function and through the command line
(``check --json --show-messages``). Both must reach the same outcome with the same failure codes
and paths, the same dead-letter class, and the same messages; the command line never prints a
traceback. Drafts mix huge ids (hundreds of digits, past 2^63-1, as tokens and as JSON numbers),
overlong tokens, look-alikes, visible, hidden, revoked, dangling and other tenants' citations,
and malformed envelopes.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from worker.cli import app
from worker.core.claims.policy import PolicyBook
from worker.core.messages.records import Incoming, OutRecord
from worker.runtime.metrics import Metrics
from worker.settings import Settings
from worker.stream.processing.pipeline import BatchProcessor
from worker.tools.check import CheckRequest, check
from worker.tools.evidence_fixture import load_fixture

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "worker" / "demo" / "corpus.json"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
MAX_BYTES = 1 << 20
TOPICS = {
    "agent.regenerate": "regenerate",
    "answers.validated": "validated",
    "answers.could_not_ground": "could_not_ground",
    "citations.ledger": "ledger",
    "agent.drafts.dlq": "dlq",
}
HUGE = 10**400 + 7

# --- what a draft is made of ----------------------------------------------------------------

TOKENS = [
    "[OBS-1001]",  # public
    "[DOC-9001]",
    "[EVT-501]",
    "[OBS-1002]",  # analysts only
    "[DOC-9002]",
    "[OBS-1003]",  # bob only: hidden from ana
    "[DOC-9004]",  # nobody
    "[DOC-9005]",  # no acl field: nobody
    "[OBS-1005]",  # revoked
    "[OBS-1006]",  # revoked only in the future
    "[OBS-2001]",  # another tenant's: dangling
    "[DOC-123456]",  # dangling
    f"[DOC-{2**63 - 1}]",
    f"[DOC-{2**63}]",  # past a bigint: dangling without a query
    f"[OBS-{HUGE}]",
    "[DOC-00009001]",  # leading zeros
    "[DOC-" + "9" * 1001 + "]",  # overlong: schema_invalid
    "[DOC-*9001*]",  # look-alikes: schema_invalid
    "［DOC-9001］",
    "[DOC-\u202e9001]",
    "[[DOC-1003]DOC-1003]",
]
WORDS = [
    "Checkout latency rose",
    "Refunds tripled",
    "The renewal slipped",
    "Why",
    "Note:",
    "**Label**",
]
ENDS = [".", "?", ":", "", "!"]
IDS = [1001, 9001, 501, 1003, 9004, 123456, 2**63 - 1, 2**63, HUGE, -5, 0]


@st.composite
def sentences(draw: st.DrawFn) -> str:
    words = draw(st.sampled_from(WORDS))
    tokens = "".join(draw(st.lists(st.sampled_from(TOKENS), max_size=3)))
    return f"{words} {tokens}{draw(st.sampled_from(ENDS))}".strip()


@st.composite
def citation(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["OBS", "DOC", "EVT", "XYZ", 7]))
    ident = draw(st.sampled_from(IDS))
    entry: dict[str, Any] = {"kind": kind, "id": ident}
    if draw(st.booleans()):
        entry["quote"] = draw(st.sampled_from(["Checkout p95 latency rose", "made up"]))
    return draw(st.sampled_from([entry, ident]))


@st.composite
def outputs(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(["answer", "answer", "proposal", "report"]))
    text = "\n\n".join(draw(st.lists(sentences(), min_size=1, max_size=4)))
    cites = draw(st.lists(citation(), max_size=3))
    if kind == "answer":
        output: Any = {"answer_markdown": text, "citations": cites}
        if draw(st.booleans()):
            output["claims"] = [{"text": draw(sentences()), "citations": cites}]
    elif kind == "proposal":
        output = {
            "proposal_type": "entity_flag",
            "summary": text,
            "patch": {"entity_id": "e-1", "flag": "review", "reason": "r"},
            "grounding": {"reasoning": draw(sentences()), "observations": [1001, HUGE]},
            "confidence": 0.5,
            "gate": "Q10",
            "auto_appliable": False,
        }
    else:
        output = {
            "title": draw(sentences()),
            "sections": [{"heading": "H", "body_markdown": text, "citations": cites}],
            "timeline": [],
            "base_rates": [],
            "status": draw(st.sampled_from(["DRAFT", "FINAL"])),
        }
    if draw(st.integers(0, 9)) == 0:
        output = f"Here you go:\n```json\n{json.dumps(output)}\n```"  # the model's raw text
    return kind, output


BREAKS: list[tuple[str, Any]] = [
    ("schema_version", 2),
    ("schema_version", None),
    ("attempt", -1),
    ("attempt", HUGE),
    ("attempt", "0"),
    ("turn_id", ""),
    ("kind", "memo"),
    ("principal", {"groups": ["analysts"]}),
    ("retrieval", [{"kind": "DOC", "id": HUGE}]),
    ("retrieval", [{"kind": "DOC"}]),
    ("retrieval", []),
    ("retrieval", [{"kind": "OBS", "id": 1001}]),
    ("output", 7),
    ("draft_id", 5),
]


@st.composite
def drafts(draw: st.DrawFn) -> bytes:
    kind, output = draw(outputs())
    envelope: dict[str, Any] = {
        "schema_version": 1,
        "draft_id": "d-1",
        "turn_id": "t-1",
        "attempt": draw(st.sampled_from([0, 0, 1])),
        "tenant_id": draw(st.sampled_from(["acme", "acme", "globex"])),
        "principal": {"user_id": "u-ana", "groups": draw(st.sampled_from([[], ["analysts"]]))},
        "kind": kind,
        "output": output,
    }
    if draw(st.integers(0, 3)) == 0:
        field, value = draw(st.sampled_from(BREAKS))
        envelope[field] = value
    shape = draw(st.integers(0, 19))
    if shape == 0:
        return b'{"schema_version": 1, "turn_id": "t-1", '  # not JSON
    if shape == 1:
        return json.dumps([envelope]).encode()
    return json.dumps(envelope).encode()  # stdlib: writes integers of any size


# --- the two paths ------------------------------------------------------------------------------


class _Sent:
    def __init__(self) -> None:
        self.records: list[tuple[str, bytes, dict[str, bytes]]] = []

    async def send(self, record: OutRecord) -> Any:
        self.records.append((TOPICS[record.topic], record.value, dict(record.headers)))

        async def acked() -> object:
            return None

        return acked()


class _Turns:
    def __init__(self) -> None:
        self.turns: dict[str, Any] = {}

    def get(self, turn_id: str) -> Any:
        return self.turns.get(turn_id)

    def put(self, turn_id: str, partition: int, state: Any) -> None:
        self.turns[turn_id] = state

    def delete(self, turn_id: str, partition: int) -> None:
        self.turns.pop(turn_id, None)


def _key(value: bytes) -> bytes | None:
    """The key a correct producer sends: the envelope's ``turn_id``."""
    try:
        obj = json.loads(value)
    except ValueError:
        return None
    turn = obj.get("turn_id") if isinstance(obj, dict) else None
    return turn.encode() if isinstance(turn, str) else None


def worker_verdict(value: bytes) -> dict[str, Any]:
    """What the worker publishes for ``value`` as the first draft of its turn."""
    sent = _Sent()
    proc = BatchProcessor(
        settings=Settings(max_draft_bytes=MAX_BYTES),
        evidence=load_fixture(CORPUS),
        turns=_Turns(),
        publisher=sent,
        policies=PolicyBook(),
        metrics=Metrics(),
        worker_version="test",
        clock=lambda: NOW,
    )
    incoming = Incoming(
        topic="agent.drafts",
        partition=0,
        offset=0,
        timestamp_ms=int(NOW.timestamp() * 1000),
        key=_key(value),
        value=value,
        headers=(),
    )
    asyncio.run(proc.process([incoming]))
    dlq = [h for topic, _, h in sent.records if topic == "dlq"]
    if dlq:
        return {"outcome": "dead_letter", "class": dlq[0]["dlq.error.class"].decode()}
    messages = [
        {"topic": topic, "value": json.loads(value)}
        for topic, value, _ in sent.records
        if topic != "ledger"
    ]
    (decided,) = [m for m in messages if m["topic"] != "ledger"]
    outcome = {"validated": "grounded"}.get(decided["topic"], decided["topic"])
    reasons = decided["value"].get("reasons", [])
    return {
        "outcome": outcome,
        "codes": [(r["code"], r.get("path")) for r in reasons],
        "messages": messages,
    }


def check_verdict(value: bytes) -> dict[str, Any]:
    report = asyncio.run(
        check(
            CheckRequest(value),
            load_fixture(CORPUS),
            PolicyBook(),
            NOW,
            max_bytes=MAX_BYTES,
            show_messages=True,
        )
    )
    if report["outcome"] == "dead_letter":
        return {"outcome": "dead_letter", "class": report["dead_letter_class"]}
    return {
        "outcome": report["outcome"],
        "codes": published_reasons(report),
        "messages": report["messages"],
    }


def published_reasons(report: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The (code, path) of the failures of a check report as the worker's message lists them:
    at most 50, and deduplicated on a could-not-ground event (it carries no detail)."""
    reasons = [(f["code"], f["path"]) for f in report["failures"]]
    if report["outcome"] == "could_not_ground":
        reasons = list(dict.fromkeys(reasons))
    return reasons[:50]


@given(drafts())
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(json.dumps({
    "schema_version": 1, "draft_id": "d", "turn_id": "t", "attempt": 0, "tenant_id": "acme",
    "principal": {"user_id": "u-ana"}, "kind": "answer",
    "output": {"answer_markdown": f"Latency rose [OBS-{HUGE}].",
               "citations": [{"kind": "OBS", "id": HUGE}]},
}).encode())  # fmt: skip
@example(json.dumps({
    "schema_version": 1, "draft_id": "d", "turn_id": "t", "attempt": HUGE, "tenant_id": "acme",
    "principal": {"user_id": "u-ana"}, "kind": "answer", "output": "no JSON here",
}).encode())  # fmt: skip  # its log line once raised under JSON logging: internal_error
def test_check_and_the_worker_agree_on_every_draft(value: bytes) -> None:
    worker = worker_verdict(value)
    checked = check_verdict(value)
    assert checked == worker


def test_huge_ids_are_dangling_for_both_never_malformed() -> None:
    """An id past 2^63-1 is an id (dangling without a query), not a malformed envelope."""
    output = {
        "answer_markdown": f"Latency rose [OBS-{HUGE}].",
        "citations": [{"kind": "OBS", "id": HUGE}],
    }
    envelope = {
        "schema_version": 1,
        "draft_id": "d",
        "turn_id": "t",
        "attempt": 0,
        "tenant_id": "acme",
        "principal": {"user_id": "u-ana"},
        "kind": "answer",
        "output": output,
        "retrieval": [{"kind": "OBS", "id": HUGE}],
    }
    value = json.dumps(envelope).encode()
    worker, checked = worker_verdict(value), check_verdict(value)
    assert worker["outcome"] == checked["outcome"] == "regenerate"
    assert (
        worker["codes"]
        == checked["codes"]
        == [
            ("dangling_citation", "answer_markdown"),
            ("dangling_citation", "citations[0]"),
        ]
    )


@given(drafts())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_command_line_agrees_and_never_prints_a_traceback(value: bytes) -> None:
    import tempfile  # noqa: PLC0415 - hypothesis runs many examples per function-scoped fixture

    with tempfile.TemporaryDirectory() as tmp:
        draft = Path(tmp) / "draft.json"
        draft.write_bytes(value)
        result = CliRunner().invoke(
            app,
            ["check", "--json", "--show-messages", "--evidence", str(CORPUS), str(draft)],
        )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stdout + result.stderr
    body = json.loads(result.stdout)
    worker = worker_verdict(value)
    assert body["outcome"] == worker["outcome"]
    if worker["outcome"] == "dead_letter":
        assert body["dead_letter_class"] == worker["class"]
        assert result.exit_code == 2
        return
    assert published_reasons(body) == worker["codes"]
    assert [m["topic"] for m in body["messages"]] == [m["topic"] for m in worker["messages"]]
    assert result.exit_code == (0 if worker["outcome"] == "grounded" else 1)


def test_a_bug_is_internal_error_for_both_and_check_prints_no_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A core bug on a draft: the worker dead-letters it ``internal_error``; ``check`` says the
    same (exit 2), naming the exception's class only, with no traceback."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug that quotes draft text: SECRET")

    value = json.dumps({
        "schema_version": 1, "draft_id": "d", "turn_id": "t", "attempt": 0, "tenant_id": "acme",
        "principal": {"user_id": "u-ana"}, "kind": "answer",
        "output": {"answer_markdown": "Latency rose [OBS-1001]."},
    }).encode()  # fmt: skip
    # The worker and ``check`` decide through the same door (``worker.core.batch``).
    monkeypatch.setattr("worker.core.batch.judge", broken)
    assert worker_verdict(value) == {"outcome": "dead_letter", "class": "internal_error"}
    assert check_verdict(value) == {"outcome": "dead_letter", "class": "internal_error"}
    draft = tmp_path / "draft.json"
    draft.write_bytes(value)
    result = CliRunner().invoke(app, ["check", "--evidence", str(CORPUS), str(draft)])
    assert result.exit_code == 2
    assert result.stdout.splitlines()[:2] == [
        "outcome: dead_letter (internal_error)",
        "  internal error: ZeroDivisionError",
    ]
    assert "Traceback" not in result.stdout + result.stderr
    assert "SECRET" not in result.stdout + result.stderr
    monkeypatch.setattr("worker.core.batch_values.admit_draft", broken)
    assert check_verdict(value) == {"outcome": "dead_letter", "class": "internal_error"}
