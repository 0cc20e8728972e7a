"""Turn what a driver returned into ``EvidenceRecord`` values, failing loudly on a wrong shape.

Pure functions, so the shape rules are unit-tested without a server. A row of the wrong shape is
a ``MalformedEvidence`` (poison): retrying cannot fix it, and guessing (say, reading a string
``acl`` as one entry) could admit a reader the owner never meant to. Messages name the table or
collection, the id and the field, never the row's text or title.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from worker.core.evidence import CitationRef, EvidenceKind, EvidenceRecord
from worker.faults import MalformedEvidence


class MalformedRow(MalformedEvidence):
    """A ``MalformedEvidence`` that says which stored row was wrong.

    ``ref`` lets the stream loop find the drafts that cite it, so one bad row poisons those
    drafts only, not the whole batch that shared the query.
    """

    def __init__(self, source: str, ref: CitationRef | None, problem: str) -> None:
        where = f"{source} id={ref.id}" if ref is not None else source
        super().__init__(f"malformed evidence in {where}: {problem}")
        self.source = source
        self.ref = ref


def _type_name(value: object) -> str:
    return type(value).__name__


def _acl(source: str, ref: CitationRef, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, list | tuple) and all(isinstance(entry, str) for entry in value):
        return tuple(value)
    raise MalformedRow(
        source, ref, f"acl must be null or a list of strings, got {_type_name(value)}"
    )


def _revoked_at(source: str, ref: CitationRef, value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise MalformedRow(source, ref, f"revoked_at must be a timestamp, got {_type_name(value)}")
    # BSON dates carry no zone and are UTC by definition; make them comparable with aware clocks.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _optional_text(source: str, ref: CitationRef, field: str, value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise MalformedRow(source, ref, f"{field} must be null or a string, got {_type_name(value)}")


def _source_id(source: str, value: object) -> int:
    # bool is an int in Python but never an id; bson.Int64 is an int subclass and fine.
    if isinstance(value, bool) or not isinstance(value, int):
        raise MalformedRow(source, None, f"id must be an integer, got {_type_name(value)}")
    return value


def parse_sql_row(table: str, kind: EvidenceKind, row: Mapping[str, object]) -> EvidenceRecord:
    """An ``observations`` / ``events`` row (``id, acl, revoked_at, summary``) as a record."""
    ref = CitationRef(kind, _source_id(table, row["id"]))
    return EvidenceRecord(
        ref=ref,
        acl=_acl(table, ref, row["acl"]),
        revoked_at=_revoked_at(table, ref, row["revoked_at"]),
        text=_optional_text(table, ref, "summary", row["summary"]),
    )


def parse_document(collection: str, doc: Mapping[str, object]) -> EvidenceRecord:
    """A MongoDB document as a record.

    No ``acl`` field at all is ``()`` (admits nobody: a forgotten field fails closed), while
    ``acl: null`` is ``None`` (the whole tenant) — contract §8.
    """
    ref = CitationRef(EvidenceKind.DOC, _source_id(collection, doc.get("_id")))
    return EvidenceRecord(
        ref=ref,
        acl=_acl(collection, ref, doc["acl"]) if "acl" in doc else (),
        revoked_at=_revoked_at(collection, ref, doc.get("revoked_at")),
        text=_optional_text(collection, ref, "text", doc.get("text")),
        title=_optional_text(collection, ref, "title", doc.get("title")),
    )


def queryable_ids(refs: Iterable[CitationRef], kind: EvidenceKind) -> list[int]:
    """The distinct ids of ``kind`` a store could hold, sorted (ids above a bigint never leave)."""
    return sorted({ref.id for ref in refs if ref.kind is kind and ref.queryable})
