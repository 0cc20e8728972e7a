"""Turning driver rows into records: the shape rules, without a server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from bson.int64 import Int64
from pydantic import ValidationError

from worker.core.citations.evidence import MAX_SOURCE_ID, CitationRef, EvidenceKind, EvidenceRecord
from worker.faults import MalformedEvidence, PoisonFault
from worker.stores import rows
from worker.stores.rows import MalformedRow, parse_document, parse_sql_row, queryable_ids

OBS, EVT, DOC = EvidenceKind.OBS, EvidenceKind.EVT, EvidenceKind.DOC


def sql_row(**overrides: Any) -> dict[str, Any]:
    return {"id": 7, "acl": None, "revoked_at": None, "summary": "s"} | overrides


def document(**overrides: Any) -> dict[str, Any]:
    return {"_id": 7, "acl": None, "revoked_at": None, "title": "T", "text": "x"} | overrides


def test_sql_row_becomes_a_record() -> None:
    revoked = datetime(2025, 1, 1, tzinfo=UTC)
    record = parse_sql_row("events", EVT, sql_row(acl=["group:a", "user:b"], revoked_at=revoked))
    assert record.ref == CitationRef(EVT, 7)
    assert record.acl == ("group:a", "user:b")
    assert record.revoked_at == revoked
    assert record.text == "s"
    assert record.title is None


def test_null_acl_is_the_whole_tenant_and_empty_acl_is_nobody() -> None:
    assert parse_sql_row("observations", OBS, sql_row(acl=None)).acl is None
    assert parse_sql_row("observations", OBS, sql_row(acl=[])).acl == ()


def test_document_without_acl_field_admits_nobody() -> None:
    doc = document()
    del doc["acl"]
    assert parse_document("documents", doc).acl == ()
    assert parse_document("documents", document(acl=None)).acl is None


def test_naive_bson_date_is_utc_and_aware_dates_are_kept() -> None:
    naive = parse_document("documents", document(revoked_at=datetime(2025, 1, 1, 12)))
    assert naive.revoked_at == datetime(2025, 1, 1, 12, tzinfo=UTC)
    plus_two = timezone(timedelta(hours=2))
    aware = parse_document(
        "documents", document(revoked_at=datetime(2025, 1, 1, 14, tzinfo=plus_two))
    )
    assert aware.revoked_at == datetime(2025, 1, 1, 12, tzinfo=UTC)


def test_int64_ids_are_ids() -> None:
    assert parse_document("documents", document(_id=Int64(2**40))).ref == CitationRef(DOC, 2**40)


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"acl": "group:a"}, "acl must be null or a list of strings, got str"),
        ({"acl": ["group:a", None]}, "acl must be null or a list of strings, got list"),
        ({"acl": {"group:a": 1}}, "acl must be null or a list of strings, got dict"),
        ({"revoked_at": "2025-01-01"}, "revoked_at must be a timestamp, got str"),
        ({"revoked_at": 1735689600}, "revoked_at must be a timestamp, got int"),
        ({"text": 3}, "text must be null or a string, got int"),
        ({"title": b"bytes"}, "title must be null or a string, got bytes"),
    ],
)
def test_wrong_shapes_are_malformed_and_name_the_source_and_id(
    overrides: dict[str, Any], problem: str
) -> None:
    with pytest.raises(MalformedRow) as caught:
        parse_document("documents", document(**overrides))
    assert str(caught.value) == f"malformed evidence in documents id=7: {problem}"
    assert caught.value.ref == CitationRef(DOC, 7)
    assert caught.value.source == "documents"
    assert isinstance(caught.value, MalformedEvidence)
    assert isinstance(caught.value, PoisonFault)
    assert not caught.value.retriable


@pytest.mark.parametrize("bad_id", ["7", 7.0, True, None])
def test_non_integer_ids_are_malformed(bad_id: object) -> None:
    with pytest.raises(MalformedRow, match="id must be an integer"):
        parse_document("documents", document(_id=bad_id))


def test_malformed_summary_in_sql_row_names_the_table() -> None:
    with pytest.raises(MalformedRow, match=r"^malformed evidence in observations id=7: summary"):
        parse_sql_row("observations", OBS, sql_row(summary=["not", "text"]))


def test_messages_never_carry_the_rows_words() -> None:
    with pytest.raises(MalformedRow) as caught:
        parse_document("documents", document(acl="secret-group", text="secret text"))
    assert "secret" not in str(caught.value)


def test_queryable_ids_are_distinct_sorted_per_kind_and_bounded() -> None:
    refs = [
        CitationRef(OBS, 5), CitationRef(OBS, 2), CitationRef(OBS, 5), CitationRef(EVT, 1),
        CitationRef(OBS, MAX_SOURCE_ID), CitationRef(OBS, MAX_SOURCE_ID + 1),
    ]  # fmt: skip
    assert queryable_ids(refs, OBS) == [2, 5, MAX_SOURCE_ID]
    assert queryable_ids(refs, EVT) == [1]
    assert queryable_ids(refs, DOC) == []


# --- the plain-row fast path against the model -------------------------------------


class Label(str):
    """A ``str`` subclass: not plain, so such a row goes through the model."""


def reference_sql_row(table: str, kind: EvidenceKind, row: dict[str, Any]) -> EvidenceRecord:
    """What ``parse_sql_row`` returned before the fast path: the checks, then the model."""
    ref = CitationRef(kind, rows._source_id(table, row["id"]))
    return EvidenceRecord(
        ref=ref,
        acl=rows._acl(table, ref, row["acl"]),
        revoked_at=rows._revoked_at(table, ref, row["revoked_at"]),
        text=rows._optional_text(table, ref, "summary", row["summary"]),
    )


def reference_document(collection: str, doc: dict[str, Any]) -> EvidenceRecord:
    ref = CitationRef(DOC, rows._source_id(collection, doc.get("_id")))
    return EvidenceRecord(
        ref=ref,
        acl=rows._acl(collection, ref, doc["acl"]) if "acl" in doc else (),
        revoked_at=rows._revoked_at(collection, ref, doc.get("revoked_at")),
        text=rows._optional_text(collection, ref, "text", doc.get("text")),
        title=rows._optional_text(collection, ref, "title", doc.get("title")),
    )


def outcome(run: Any) -> tuple[str, Any]:
    try:
        record = run()
    except MalformedRow as exc:
        return ("malformed", str(exc))
    return ("record", record, record.model_fields_set, repr(record), hash(record))


ACLS: list[Any] = [None, [], ["group:a"], ["user:b", "group:a"], ("group:a",), [Label("group:a")],
                   "group:a", ["group:a", None], {"group:a": 1}]  # fmt: skip
PLUS_TWO = timezone(timedelta(hours=2))
DATES: list[Any] = [None, datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, 12),
                    datetime(2025, 1, 1, 14, tzinfo=PLUS_TWO), "2025-01-01", 0]  # fmt: skip
TEXTS: list[Any] = [None, "", "s", "secret words", Label("x"), 3, b"b", ["t"]]
IDS: list[Any] = [0, 7, MAX_SOURCE_ID, Int64(2**40), True, "7", 7.0, None]


@pytest.mark.parametrize("source_id", IDS)
@pytest.mark.parametrize("acl", ACLS)
@pytest.mark.parametrize("revoked_at", DATES)
def test_sql_rows_parse_as_the_model_parses_them(source_id: Any, acl: Any, revoked_at: Any) -> None:
    for summary in TEXTS:
        row = {"id": source_id, "acl": acl, "revoked_at": revoked_at, "summary": summary}
        assert outcome(lambda row=row: parse_sql_row("events", EVT, row)) == outcome(
            lambda row=row: reference_sql_row("events", EVT, row)
        )


@pytest.mark.parametrize("source_id", IDS)
@pytest.mark.parametrize("acl", [*ACLS, "absent"])
@pytest.mark.parametrize("revoked_at", DATES)
def test_documents_parse_as_the_model_parses_them(
    source_id: Any, acl: Any, revoked_at: Any
) -> None:
    for text in TEXTS:
        for title in (None, "T", Label("T"), 5):
            doc = {
                "_id": source_id,
                "acl": acl,
                "revoked_at": revoked_at,
                "text": text,
                "title": title,
            }
            if acl == "absent":
                del doc["acl"]
            assert outcome(lambda doc=doc: parse_document("documents", doc)) == outcome(
                lambda doc=doc: reference_document("documents", doc)
            )


def test_a_plain_row_is_a_full_record() -> None:
    """Built without the model, it still behaves as one: frozen, copied, dumped, equal."""
    record = parse_sql_row("observations", OBS, sql_row(acl=["group:a"]))
    expected = reference_sql_row("observations", OBS, sql_row(acl=["group:a"]))
    assert type(record.ref.id) is int
    assert record.model_dump() == expected.model_dump()
    assert record.model_copy(update={"text": "t"}) == expected.model_copy(update={"text": "t"})
    with pytest.raises(ValidationError):
        record.text = "changed"  # type: ignore[misc]
    assert {record: 1}[expected] == 1
