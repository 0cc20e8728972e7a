"""One ``citations.ledger`` message (contract §6) read into ledger rows, cheaply and exactly.

``ledger_records`` is the reference: every row a validated pydantic ``LedgerRecord`` (~4 µs a
row). ``ledger_rows`` is what the sink runs: msgspec's ``convert`` into closed-typed structs
(strict types, the same literals and bounds as the model) proves the message has the canonical
shape, and the rows are then built as plain ``LedgerRow`` values with no model per row; when
msgspec cannot prove it (a number where a string belongs, a missing field, a lax form pydantic
would coerce), the reference decides and raises exactly as it always did. Both start from the
same ``orjson.loads``, so the JSON itself is read one way only.

What the proof keeps equal to the reference: unknown fields are ignored by both (the batch's
``schema_version`` and ``claim_checks`` are not ledger columns); a missing ``rows`` is none and a
missing ``quote_check``/``paths``/``support`` is ``"none"``/``[]``/``"none"`` in both (a batch
written before the support check); ``source_id`` must be a string of
ASCII digits here and goes through the same ``int()`` as there. ``tests/unit/ledger/
test_ledger_message.py`` checks, on random valid and mutated messages, that the two agree.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
import orjson
from msgspec import Meta, Struct

from worker.stores.ledger_rows import LedgerRecord, LedgerRow

_NonEmpty = Annotated[str, Meta(min_length=1)]


class _Row(Struct):
    kind: Literal["OBS", "DOC", "EVT"]
    source_id: Annotated[str, Meta(pattern="^[0-9]+$")]
    resolution: Literal["dangling", "revoked", "acl_redacted", "not_in_retrieval", "resolved"]
    quote_check: Literal["none", "exact", "tolerant", "mismatch"] = "none"
    paths: list[str] = []  # msgspec copies an empty default per instance
    support: Literal["supported", "weak", "unsupported", "unchecked", "none"] = "none"


class _Batch(Struct):
    tenant_id: _NonEmpty
    turn_id: _NonEmpty
    draft_id: _NonEmpty
    attempt: Annotated[int, Meta(ge=0)]
    outcome: Literal["grounded", "regenerate", "could_not_ground"]
    policy_version: str
    event_id: _NonEmpty
    rows: list[_Row] = []


def ledger_rows(value: bytes) -> list[LedgerRow]:
    """The rows of one ledger batch message; raises as :func:`ledger_records` does."""
    doc = orjson.loads(value)
    rows = proven_rows(doc)
    if rows is None:
        return [LedgerRow.of(record) for record in _records(doc)]
    return rows


def proven_rows(doc: Any) -> list[LedgerRow] | None:
    """The rows of a decoded message whose shape msgspec proves; ``None``: ask the reference."""
    try:
        batch = msgspec.convert(doc, _Batch, strict=True)
    except msgspec.ValidationError:
        return None
    common = (
        batch.tenant_id,
        batch.turn_id,
        batch.draft_id,
        batch.attempt,
        batch.outcome,
        batch.policy_version,
        batch.event_id,
    )
    return [
        LedgerRow(
            *common, r.kind, int(r.source_id), r.resolution, r.quote_check, r.paths, r.support
        )
        for r in batch.rows
    ]


def ledger_records(value: bytes) -> list[LedgerRecord]:
    """The reference: the rows of one ledger batch message as validated records."""
    return _records(orjson.loads(value))


def _records(doc: dict[str, Any]) -> list[LedgerRecord]:
    common = {
        "tenant_id": doc["tenant_id"],
        "turn_id": doc["turn_id"],
        "draft_id": doc["draft_id"],
        "attempt": doc["attempt"],
        "outcome": doc["outcome"],
        "policy_version": doc["policy_version"],
        "event_id": doc["event_id"],
    }
    return [
        LedgerRecord(
            **common,
            kind=row["kind"],
            source_id=int(row["source_id"]),
            resolution=row["resolution"],
            quote_check=row.get("quote_check", "none"),
            paths=tuple(row.get("paths", ())),
            support=row.get("support", "none"),
        )
        for row in doc.get("rows", ())
    ]
