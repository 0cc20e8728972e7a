"""Evidence for ``check --evidence FILE``: the demo corpus format, held in memory.

Decision: the fixture format *is* the demo corpus format (``worker/demo/corpus.json``, the
``DemoCorpus`` model), so one file both seeds the live stores (``seed-demo``) and checks drafts
with no server at all, and the two cannot disagree. Rows and documents go through the adapters'
own row parsers (``parse_sql_row``, ``parse_document``), so a document written without an ``acl``
field fails closed exactly as it does in MongoDB.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from worker.core import EvidenceKind, EvidenceRecord, InMemoryEvidenceStore
from worker.stores.demo import DemoCorpus
from worker.stores.rows import parse_document, parse_sql_row


def corpus_records(corpus: DemoCorpus) -> dict[str, list[EvidenceRecord]]:
    """Every tenant's records, as the live adapters would return them."""
    records: dict[str, list[EvidenceRecord]] = {}
    for tenant in corpus.tenants:
        rows = records.setdefault(tenant.tenant_id, [])
        for kind, table, entries in (
            (EvidenceKind.OBS, "observations", tenant.observations),
            (EvidenceKind.EVT, "events", tenant.events),
        ):
            rows.extend(
                parse_sql_row(
                    table,
                    kind,
                    {
                        "id": e.id,
                        "acl": None if e.acl is None else list(e.acl),
                        "revoked_at": e.revoked_at,
                        "summary": e.summary,
                    },
                )
                for e in entries
            )
        rows.extend(
            parse_document("documents", d.to_mongo(tenant.tenant_id)) for d in tenant.documents
        )
    return records


def load_fixture(path: Path) -> InMemoryEvidenceStore:
    """The evidence of a corpus file (``ValueError`` when it is not one)."""
    corpus = DemoCorpus.model_validate_json(path.read_bytes())
    return InMemoryEvidenceStore(corpus_records(corpus))


_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _offset_of(text: str, loc: Sequence[int | str]) -> int | None:
    """Where in ``text`` (JSON) the value at ``loc`` starts, or ``None`` if it is not there.

    Walks only the path: each sibling before the one wanted is skipped with the standard
    decoder's ``raw_decode``."""
    at = _skip(text, 0)
    for part in loc:
        opener = text[at : at + 1]
        if opener not in {"{", "["}:
            return None
        at = _skip(text, at + 1)
        index = 0
        while at < len(text) and text[at] not in "}]":
            if opener == "{":
                key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
                at = _skip(text, _skip(text, at) + 1)  # past the ':'
                found = key == part
            else:
                found = index == part
            if found:
                break
            _, at = _DECODER.raw_decode(text, at)
            at = _skip(text, at)
            if text[at : at + 1] == ",":
                at = _skip(text, at + 1)
            index += 1
        else:
            return None
    return at


def describe_fixture_error(path: Path, exc: BaseException) -> str:
    """One line for an evidence file ``check`` cannot use: the file, the line and the field,
    and what is wrong there (never the value itself)."""
    if isinstance(exc, FileNotFoundError):
        return f"evidence file {path} does not exist"
    if isinstance(exc, OSError):
        return f"cannot read evidence file {path}: {exc.strerror or type(exc).__name__}"
    if not isinstance(exc, ValidationError):
        return f"cannot use evidence file {path}: {str(exc)[:200] or type(exc).__name__}"
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    first = errors[0]
    if first["type"] == "json_invalid":  # pydantic's message has the line and column
        return f"evidence file {path} is not JSON: {first['msg']}"
    try:
        text = path.read_text(encoding="utf-8")
        # a missing field has no line of its own: the line of the object it is missing from
        offset = next(
            (
                found
                for cut in range(len(first["loc"]), -1, -1)
                if (found := _offset_of(text, first["loc"][:cut])) is not None
            ),
            None,
        )
    except (OSError, UnicodeDecodeError, ValueError):
        offset = None
    field = "".join(
        f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p))
        for i, p in enumerate(first["loc"])
    )
    where = "" if offset is None else f"line {text.count(chr(10), 0, offset) + 1}: "
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"evidence file {path}: {where}{field or 'the file'}: {first['msg']}{more}"
