"""Deterministic event ids (contract §3.8): a redelivered draft yields the very same ids.

Every id is a UUIDv5 under one fixed project namespace. The name is an unambiguous encoding of a
purpose label and the parts: each part is written as ``<length in code points>:<text>``, so no
choice of tenant, turn or draft ids can make two different tuples encode alike (``("a:b", "c")``
and ``("a", "b:c")`` differ by their length prefixes). The purpose label keeps the three
families apart: a draft named ``regenerate`` cannot share its ledger id with the regenerate request.

- terminal event: (tenant_id, turn_id) alone — the grounded answer and the could-not-ground event of
  one turn share it, so no consumer can ever see two different terminal ids for a turn;
- regenerate request: (tenant_id, turn_id, "regenerate");
- ledger batch: (tenant_id, turn_id, draft_id).
"""

from __future__ import annotations

import hashlib
import uuid

#: Fixed forever: changing it changes every event id ever published.
NAMESPACE = uuid.UUID("6f1c2a8e-4d0b-5b7e-9c3a-2e8d1bfaac94")
_NAMESPACE_BYTES = NAMESPACE.bytes


def _encode(purpose: str, *parts: str) -> str:
    return "".join([f"{len(p)}:{p}" for p in (purpose, *parts)])  # a list: no generator frame


def _uuid(purpose: str, *parts: str) -> str:
    """``str(uuid.uuid5(NAMESPACE, name))`` without the ``UUID`` object (tested equal)."""
    name = _encode(purpose, *parts).encode("utf-8")
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name, usedforsecurity=False).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def terminal_event_id(tenant_id: str, turn_id: str) -> str:
    """The one terminal id of a turn, whatever its outcome."""
    return _uuid("terminal", tenant_id, turn_id)


def regenerate_event_id(tenant_id: str, turn_id: str) -> str:
    """The id of the (single) regenerate request of a turn."""
    return _uuid("request", tenant_id, turn_id, "regenerate")


def ledger_event_id(tenant_id: str, turn_id: str, draft_id: str) -> str:
    """The id of the ledger batch of one decided draft."""
    return _uuid("ledger", tenant_id, turn_id, draft_id)
