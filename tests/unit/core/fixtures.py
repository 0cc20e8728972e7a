"""A small corpus over two tenants and helpers to run drafts through the pure core.

Tenant ``acme``: public observations and events, a document for the analysts group, one private to
alice, one for the ops group (bob), a sealed document nobody may see, a revoked observation and
one revoked only in the future. Tenant ``globex`` holds ``DOC-5555``, which is dangling for acme.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel

from worker.core.citations.evidence import CitationRef, EvidenceKind, EvidenceRecord, Principal
from worker.core.claims.policy import TenantPolicy
from worker.core.envelope.draft import Draft, parse_envelope
from worker.core.evidence_store import InMemoryEvidenceStore
from worker.core.messages.wire import dumps
from worker.core.turns.machine import Decision, TurnState, decide
from worker.core.verdict import Evaluation, Prepared, evaluate, prepare

TENANT = "acme"
OTHER_TENANT = "globex"
NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)
POLICY = TenantPolicy(version="p-7")

ALICE = Principal(user_id="alice", groups=("analysts",))
BOB = Principal(user_id="bob", groups=("ops",))


def obs(i: int) -> CitationRef:
    return CitationRef(EvidenceKind.OBS, i)


def doc(i: int) -> CitationRef:
    return CitationRef(EvidenceKind.DOC, i)


def evt(i: int) -> CitationRef:
    return CitationRef(EvidenceKind.EVT, i)


OBS_ENTER, OBS_LOITER, OBS_REVOKED, OBS_LATER_REVOKED = (
    obs(50412),
    obs(50418),
    obs(60001),
    obs(60002),
)
EVT_LOITER = evt(2741)
DOC_HANDBOOK, DOC_ALICE, DOC_OPS, DOC_SEALED, DOC_GLOBEX = (
    doc(9931),
    doc(777),
    doc(888),
    doc(4242),
    doc(5555),
)

SEALED_TITLE = "Sealed Dossier Omega"
SEALED_TEXT = "SEALED-OMEGA the corridor was mined by the navy"

RECORDS: dict[str, list[EvidenceRecord]] = {
    TENANT: [
        EvidenceRecord(
            ref=OBS_ENTER, acl=None, text="Vessel Aurora entered the northern corridor at 04:10."
        ),
        EvidenceRecord(
            ref=OBS_LOITER, acl=None, text="Vessel Aurora loitered for 3 hours near buoy 7."
        ),
        EvidenceRecord(ref=EVT_LOITER, acl=None, text="Loitering event near buoy 7."),
        EvidenceRecord(
            ref=DOC_HANDBOOK,
            acl=("group:analysts", "group:ops"),
            title="Corridor Handbook",
            text="The northern corridor is closed to tankers after dusk.",
        ),
        EvidenceRecord(
            ref=DOC_ALICE,
            acl=("user:alice",),
            title="Alice Private Memo",
            text="ALICE-ONLY the harbour master resigned",
        ),
        EvidenceRecord(
            ref=DOC_OPS,
            acl=("group:ops",),
            title="Ops Ledger Sigma",
            text="OPS-ONLY fuel contracts were cancelled",
        ),
        EvidenceRecord(ref=DOC_SEALED, acl=(), title=SEALED_TITLE, text=SEALED_TEXT),
        EvidenceRecord(
            ref=OBS_REVOKED,
            acl=None,
            revoked_at=NOW - timedelta(days=1),
            text="REVOKED-SUMMARY a second vessel followed",
        ),
        EvidenceRecord(
            ref=OBS_LATER_REVOKED,
            acl=None,
            revoked_at=NOW + timedelta(days=1),
            text="Radar contact lost at 05:00.",
        ),
    ],
    OTHER_TENANT: [
        EvidenceRecord(ref=DOC_GLOBEX, acl=None, title="Globex Doc", text="GLOBEX-ONLY text"),
    ],
}


def store() -> InMemoryEvidenceStore:
    """The corpus behind the store port."""
    return InMemoryEvidenceStore(RECORDS)


def lookup(tenant: str, refs: Collection[CitationRef]) -> dict[CitationRef, EvidenceRecord]:
    """What a store returns for ``refs`` of ``tenant`` (synchronously)."""
    by_ref = {r.ref: r for r in RECORDS.get(tenant, [])}
    return {ref: by_ref[ref] for ref in refs if ref in by_ref}


def envelope(
    output: Mapping[str, Any] | str,
    *,
    kind: str = "answer",
    draft_id: str = "d-1",
    turn_id: str = "t-1",
    attempt: int = 0,
    tenant: str = TENANT,
    principal: Principal = ALICE,
    retrieval: list[CitationRef] | None = None,
) -> dict[str, Any]:
    env: dict[str, Any] = {
        "schema_version": 1,
        "draft_id": draft_id,
        "turn_id": turn_id,
        "attempt": attempt,
        "tenant_id": tenant,
        "principal": {"user_id": principal.user_id, "groups": list(principal.groups)},
        "kind": kind,
        "output": output,
        "produced_at": "2026-12-02T11:59:59Z",
    }
    if retrieval is not None:
        env["retrieval"] = [{"kind": r.kind.value, "id": r.id} for r in retrieval]
    return env


def encode(env: Mapping[str, Any]) -> bytes:
    """JSON bytes (stdlib: writes integers of any size)."""
    return json.dumps(env).encode("utf-8")


def make_draft(output: Mapping[str, Any] | str, **kw: Any) -> Draft:
    env = envelope(output, **kw)
    parsed = parse_envelope(env["turn_id"].encode(), encode(env), max_bytes=1 << 20)
    assert isinstance(parsed, Draft), parsed
    return parsed


def verdict(
    draft: Draft, policy: TenantPolicy = POLICY, now: datetime = NOW
) -> tuple[Prepared, Evaluation]:
    prepared = prepare(draft, policy)
    ev = evaluate(prepared, lookup(draft.tenant_id, prepared.refs_to_resolve), policy, now)
    return prepared, ev


def run(
    draft: Draft,
    state: TurnState | None = None,
    policy: TenantPolicy = POLICY,
    now: datetime = NOW,
) -> Decision:
    prepared, ev = verdict(draft, policy, now)
    return decide(state, prepared, ev, policy, now, "test")


def run_output(output: Mapping[str, Any] | str, **kw: Any) -> Decision:
    policy = kw.pop("policy", POLICY)
    return run(make_draft(output, **kw), policy=policy)


def topics(decision: Decision) -> list[str]:
    return [o.topic.value for o in decision.outbound]


def message(decision: Decision, topic: str) -> dict[str, Any]:
    """The decoded value of the one outbound message on ``topic``."""
    found = [o for o in decision.outbound if o.topic.value == topic]
    assert len(found) == 1, topics(decision)
    value: dict[str, Any] = json.loads(found[0].value)
    return value


def user_facing_bytes(decision: Decision) -> bytes:
    """Every outbound value except the ledger."""
    return b"\n".join(o.value for o in decision.outbound if o.topic.value != "ledger")


def good_answer() -> dict[str, Any]:
    return {
        "answer_markdown": (
            "Vessel Aurora entered the northern corridor at 04:10 [OBS-50412]. "
            "It then loitered near buoy 7 for 3 hours [OBS-50418][EVT-2741].\n\n"
            "- The corridor is closed to tankers after dusk [DOC-9931]."
        ),
        "citations": [
            {"kind": "OBS", "id": 50412, "quote": "Aurora entered the northern corridor at 04:10"},
            {"kind": "DOC", "id": 9931, "quote": "closed to TANKERS after dusk"},
        ],
        "claims": [
            {
                "text": "Aurora loitered near buoy 7.",
                "citations": [{"kind": "OBS", "id": 50418}],
                "confidence": 0.8,
            }
        ],
        "tool_calls_made": ["query_observations"],
    }


def good_report() -> dict[str, Any]:
    return {
        "title": "After-action: Aurora",
        "sections": [
            {
                "heading": "Entry",
                "body_markdown": "Aurora entered the corridor [OBS-50412].",
                "citations": [{"kind": "OBS", "id": 50412}],
            },
            {
                "heading": "Loiter",
                "body_markdown": "It loitered near buoy 7.",
                "citations": [{"kind": "EVT", "id": 2741}],
            },
        ],
        "timeline": [
            {"at": "2026-12-01T04:10:00Z", "text": "Entered [OBS-50412]", "citations": []},
            {
                "at": "2026-12-01T05:00:00Z",
                "text": "Loitering begins",
                "citations": [{"kind": "EVT", "id": 2741}],
            },
        ],
        "base_rates": [
            {"metric": "loiter_pctile", "value": 0.93, "sample_n": 41, "interval": None}
        ],
        "status": "DRAFT",
    }


def good_proposal() -> dict[str, Any]:
    return {
        "proposal_type": "entity_flag",
        "summary": "Flag Aurora for review [OBS-50418].",
        "patch": {"entity_id": "vessel-aurora", "flag": "review", "reason": "loitering"},
        "grounding": {"reasoning": "Loitered 3 hours [EVT-2741].", "observations": [50418]},
        "confidence": 0.95,
        "gate": "Q10",
        "auto_appliable": True,
    }


def scaled(examples: int) -> int:
    """``examples`` times ``GW_PROPERTY_SCALE`` (1 unless set): CI's long step raises it."""
    return examples * max(1, int(os.environ.get("GW_PROPERTY_SCALE", "1")))


def to_json_bytes(model: BaseModel) -> bytes:
    """The canonical bytes of a model instance by pydantic's own dump: the reference that
    ``message_bytes`` (which builds no model) is compared against."""
    # Python mode, not JSON mode: orjson writes the str enums and tuples itself, the same bytes,
    # without pydantic's per-enum ``.value`` round trip.
    return dumps(model.model_dump(exclude_none=True))
