"""Drafts as the client builds and checks them before publishing (contract §2).

A draft the worker would dead-letter for its envelope alone (``malformed_envelope``,
``unsupported_schema_version``, ``oversized``) is refused here with :class:`DraftRejectedError`
naming the field, by the worker's own parser (``worker.core.envelope.draft.parse_envelope``),
so the client and the worker cannot disagree; ``identity_mismatch`` needs the turn's history and
comes back as :class:`worker.client.DeadLettered` instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from worker.client.errors import DraftRejectedError
from worker.core import (
    SUPPORTED_SCHEMA_VERSIONS,
    DraftEnvelopeWire,
    EnvelopeRejection,
    ErrorClass,
    parse_envelope,
)

Kind = Literal["answer", "proposal", "report"]

#: The worker's default ``GW_MAX_DRAFT_BYTES``; pass the deployment's to the client if it differs.
DEFAULT_MAX_DRAFT_BYTES = 1024 * 1024


def draft_envelope(
    *,
    tenant_id: str,
    user_id: str,
    kind: Kind,
    output: Mapping[str, Any] | str,
    groups: Sequence[str] = (),
    turn_id: str | None = None,
    draft_id: str | None = None,
    attempt: int = 0,
    retrieval: Sequence[Mapping[str, Any]] | None = None,
    facts: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A valid draft envelope (contract §2), checked before it is returned.

    ``turn_id`` and ``draft_id`` default to fresh UUIDs; ``produced_at`` is now. Raises
    :class:`DraftRejectedError` naming the field when a value cannot be sent.
    """
    turn = turn_id or f"t-{uuid.uuid4()}"
    envelope: dict[str, Any] = {
        "schema_version": 1,
        "draft_id": draft_id or f"{turn}-a{attempt}-{uuid.uuid4().hex[:8]}",
        "turn_id": turn,
        "attempt": attempt,
        "tenant_id": tenant_id,
        "principal": {"user_id": user_id, "groups": list(groups)},
        "kind": kind,
        "output": output if isinstance(output, str) else dict(output),
        "produced_at": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
    if retrieval is not None:
        envelope["retrieval"] = [dict(r) for r in retrieval]
    if facts is not None:
        envelope["facts"] = [dict(f) for f in facts]
    encode_draft(envelope, max_bytes=None)
    return envelope


def regeneration(first: Mapping[str, Any], output: Mapping[str, Any] | str) -> dict[str, Any]:
    """Attempt 1 of ``first``'s turn with the regenerated ``output`` (same turn, tenant, reader)."""
    return draft_envelope(
        tenant_id=first["tenant_id"],
        user_id=first["principal"]["user_id"],
        groups=first["principal"].get("groups") or (),
        kind=first["kind"],
        output=output,
        turn_id=first["turn_id"],
        attempt=1,
        retrieval=first.get("retrieval"),
        facts=first.get("facts"),
    )


def encode_draft(envelope: object, *, max_bytes: int | None) -> tuple[bytes, bytes]:
    """The record key and value of ``envelope``, or :class:`DraftRejectedError` naming the field
    for what the worker would dead-letter (``max_bytes``: ``None`` skips the size check)."""
    if not isinstance(envelope, Mapping):
        raise DraftRejectedError(
            "envelope",
            ErrorClass.MALFORMED_ENVELOPE.value,
            f"a draft envelope is a mapping (dict), not {type(envelope).__name__}",
        )
    try:
        value = orjson.dumps(dict(envelope))
    except TypeError as exc:
        raise DraftRejectedError(
            "envelope", ErrorClass.MALFORMED_ENVELOPE.value, f"not JSON-serialisable ({exc})"
        ) from None
    turn = envelope.get("turn_id")
    key = turn.encode("utf-8", "surrogatepass") if isinstance(turn, str) else b""
    limit = len(value) + 1 if max_bytes is None else max_bytes
    parsed = parse_envelope(key, value, max_bytes=limit)
    if isinstance(parsed, EnvelopeRejection):
        field = _field(envelope, parsed)
        raise DraftRejectedError(field, parsed.error_class.value, _message(envelope, field, parsed))
    return key, value


def _field(envelope: Mapping[Any, Any], rejection: EnvelopeRejection) -> str:
    """The field a rejection is about: the rule's own first word (the worker's messages start
    with the field), made more precise by the wire model's location when that is deeper."""
    if rejection.error_class is ErrorClass.OVERSIZED:
        return "envelope"
    first = rejection.message.split(" ", 1)[0]
    if first == "record":  # "record key differs from turn_id", "record value is not ..."
        return "turn_id" if "turn_id" in rejection.message else "envelope"
    try:
        DraftEnvelopeWire.model_validate(dict(envelope))
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            path = _dotted(error["loc"])
            if path.startswith(first) and len(path) > len(first):
                return path
    return first


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _message(envelope: Mapping[Any, Any], field: str, rejection: EnvelopeRejection) -> str:
    if field != "schema_version":
        return rejection.message
    if "schema_version" not in envelope:
        return "schema_version missing"
    got = orjson.dumps(envelope["schema_version"], default=repr).decode()[:40]
    known = ", ".join(str(v) for v in sorted(SUPPORTED_SCHEMA_VERSIONS))
    return f"got {got}; this client and worker know {known}"
