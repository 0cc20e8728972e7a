"""Output messages, ids and the canonical serializer (contract §3-§6)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest
from fixtures import to_json_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from worker.core.citations.evidence import (
    CitationRef,
    EvidenceKind,
    Principal,
    QuoteCheck,
    Resolution,
)
from worker.core.claims.typed import ClaimCheck
from worker.core.contract import LedgerOutcome
from worker.core.failures import Failure, FailureCode
from worker.core.messages.models import (
    MAX_REASONS,
    CitationKey,
    CitationOut,
    ClaimCheckOut,
    ClaimOut,
    CouldNotGround,
    GroundingStatus,
    LedgerBatch,
    LedgerRow,
    ReasonOut,
    RegenerateRequest,
    cap_reasons,
    rfc3339,
)
from worker.core.messages.wire import dumps, message_bytes, wire
from worker.core.outputs.validation import DraftKind
from worker.core.turns.ids import NAMESPACE, ledger_event_id, regenerate_event_id, terminal_event_id


def test_ids_are_deterministic_uuid5() -> None:
    a = terminal_event_id("acme", "t-1")
    assert a == terminal_event_id("acme", "t-1")
    assert uuid.UUID(a).version == 5
    assert regenerate_event_id("acme", "t-1") == regenerate_event_id("acme", "t-1")
    assert ledger_event_id("acme", "t-1", "d-1") == ledger_event_id("acme", "t-1", "d-1")


@given(st.text(), st.text(), st.text())
@settings(max_examples=200, deadline=None)
def test_ids_are_the_standard_uuid5_of_their_name(tenant: str, turn: str, draft: str) -> None:
    """The ids are built without a UUID object: the very string uuid.uuid5 gives."""
    cases: list[tuple[Callable[[], str], tuple[str, ...]]] = [
        (lambda: terminal_event_id(tenant, turn), ("terminal", tenant, turn)),
        (lambda: regenerate_event_id(tenant, turn), ("request", tenant, turn, "regenerate")),
        (lambda: ledger_event_id(tenant, turn, draft), ("ledger", tenant, turn, draft)),
    ]
    for made, parts in cases:
        name = "".join(f"{len(p)}:{p}" for p in parts)
        try:
            expected = str(uuid.uuid5(NAMESPACE, name))
        except UnicodeEncodeError:  # a lone surrogate: both refuse it
            with pytest.raises(UnicodeEncodeError):
                made()
            continue
        assert made() == expected


def test_ids_are_unambiguous() -> None:
    ids = {
        terminal_event_id("a:b", "c"),
        terminal_event_id("a", "b:c"),
        terminal_event_id("a|b", "c"),
        terminal_event_id("a", "b|c"),
        regenerate_event_id("a", "b"),
        ledger_event_id("a", "b", "regenerate"),
        ledger_event_id("a", "b", ""),
        terminal_event_id("a", "b"),
    }
    assert len(ids) == 8


@given(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.integers(-23 * 60, 23 * 60),
)
@settings(max_examples=1000, deadline=None)
def test_rfc3339_is_the_strftime_form_at_any_offset_and_year(naive: datetime, minutes: int) -> None:
    """``isoformat`` where it writes the same characters, ``strftime`` for years before 1000
    (which ``strftime`` writes unpadded): the original form, for any moment and offset."""
    moment = naive.replace(tzinfo=timezone(timedelta(minutes=minutes)))
    utc = moment.astimezone(UTC)
    expected = utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    assert rfc3339(moment) == expected


def test_rfc3339() -> None:
    moment = datetime(2026, 12, 2, 13, 0, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert rfc3339(moment) == "2026-12-02T12:00:00.123Z"
    with pytest.raises(ValueError, match="naive"):
        rfc3339(datetime(2026, 1, 1))


def test_serializer_sorts_and_omits_none() -> None:
    msg = RegenerateRequest(
        event_id="e",
        turn_id="t",
        draft_id="d",
        tenant_id="acme",
        principal=Principal(user_id="u"),
        kind=DraftKind.ANSWER,
        reasons=(Failure(code=FailureCode.UNCITED_CLAIM, path="claims[0]"),),
        previous_output={"answer_markdown": "x", "nullable": None},
        policy_version="p",
        deadline=rfc3339(datetime(2026, 1, 1, tzinfo=UTC)),
    )
    raw = to_json_bytes(msg)
    assert raw == to_json_bytes(msg)
    doc = json.loads(raw)
    assert list(doc) == sorted(doc)
    assert doc["reasons"] == [{"code": "uncited_claim", "path": "claims[0]"}]
    assert "reasons_truncated" not in doc
    assert doc["previous_output"] == {"answer_markdown": "x", "nullable": None}
    assert b" " not in raw.replace(b"answer_markdown", b"")


def test_serializer_writes_ids_beyond_64_bits() -> None:
    huge = 2**70
    msg = RegenerateRequest(
        event_id="e",
        turn_id="t",
        draft_id="d",
        tenant_id="acme",
        principal=Principal(user_id="u"),
        kind=DraftKind.ANSWER,
        reasons=(),
        previous_output={"citations": [{"kind": "OBS", "id": huge}], "é": "ü"},
        policy_version="p",
        deadline="2026-01-01T00:00:00.000Z",
    )
    raw = to_json_bytes(msg)
    assert json.loads(raw)["previous_output"]["citations"][0]["id"] == huge
    assert "ü".encode() in raw
    assert raw == to_json_bytes(msg)


def test_ledger_source_id_is_a_decimal_string() -> None:
    row = LedgerRow(
        kind=EvidenceKind.OBS,
        source_id=str(2**70),
        resolution=Resolution.DANGLING,
        quote_check=QuoteCheck.NONE,
        paths=("answer_markdown",),
    )
    batch = LedgerBatch(
        event_id="e",
        turn_id="t",
        draft_id="d",
        attempt=0,
        tenant_id="acme",
        outcome=LedgerOutcome.REGENERATE,
        policy_version="p",
        rows=(row,),
    )
    doc = json.loads(to_json_bytes(batch))
    assert doc["rows"][0]["source_id"] == str(2**70)
    with pytest.raises(ValueError, match="pattern"):
        LedgerRow(
            kind=EvidenceKind.OBS,
            source_id="12a",
            resolution=Resolution.DANGLING,
            quote_check=QuoteCheck.NONE,
            paths=(),
        )


def test_cap_reasons() -> None:
    assert cap_reasons([1, 2]) == ((1, 2), None)
    capped, flag = cap_reasons(list(range(MAX_REASONS + 1)))
    assert len(capped) == 50
    assert flag is True


def test_could_not_ground_reasons_have_code_and_path_only() -> None:
    with pytest.raises(ValueError, match="Extra inputs"):
        ReasonOut.model_validate({"code": "dangling_citation", "citation": "OBS-1"})
    msg = CouldNotGround(
        event_id="e",
        turn_id="t",
        draft_id="d",
        tenant_id="acme",
        user_id="u",
        kind=DraftKind.REPORT,
        attempts=2,
        reasons=(ReasonOut(code=FailureCode.REGENERATION_TIMEOUT),),
        policy_version="p",
        at="2026-01-01T00:00:00.000Z",
    )
    doc = json.loads(to_json_bytes(msg))
    assert doc["status"] == "could_not_ground"
    assert doc["schema_version"] == 1
    assert doc["reasons"] == [{"code": "regeneration_timeout"}]
    assert "attempt" not in doc


@pytest.mark.parametrize(
    ("cls", "values"),
    [
        (CitationKey, {"kind": EvidenceKind.OBS, "id": 3}),
        (CitationOut, {"kind": EvidenceKind.DOC, "id": 9, "title": "T", "quote": None}),
        (ClaimOut, {"text": "x", "citations": (), "grounding_status": GroundingStatus.HEDGED}),
        (
            LedgerRow,
            {
                "kind": EvidenceKind.EVT,
                "source_id": "7",
                "resolution": Resolution.RESOLVED,
                "quote_check": QuoteCheck.NONE,
                "paths": ("a",),
            },
        ),
        (ReasonOut, {"code": FailureCode.REGENERATION_TIMEOUT, "path": None}),
        (
            CouldNotGround,
            {
                "event_id": "e",
                "turn_id": "t",
                "draft_id": "d",
                "tenant_id": "acme",
                "user_id": "u",
                "kind": DraftKind.ANSWER,
                "attempts": 1,
                "reasons": (),
                "policy_version": "p",
                "at": "now",
            },
        ),
    ],
)
def test_the_wire_form_derived_from_a_model_is_its_dump(
    cls: type[BaseModel], values: dict[str, object]
) -> None:
    """``worker.core.messages.wire`` writes what pydantic's own dump writes, model or plain
    values."""
    model = cls.model_construct(**values)
    assert message_bytes(cls, **values) == to_json_bytes(model)
    assert dumps(wire(cls, [model])) == dumps([model.model_dump(exclude_none=True)])


def test_to_json_bytes_writes_what_a_json_mode_dump_writes() -> None:
    """Enums and tuples are left to orjson: the bytes are those of pydantic's JSON mode."""
    row = LedgerRow(
        kind=EvidenceKind.DOC,
        source_id="9",
        resolution=Resolution.ACL_REDACTED,
        quote_check=QuoteCheck.TOLERANT,
        paths=("citations[0]", "answer_markdown"),
    )
    batch = LedgerBatch(
        event_id="e",
        turn_id="t",
        draft_id="d",
        attempt=0,
        tenant_id="acme",
        outcome=LedgerOutcome.GROUNDED,
        policy_version="p",
        rows=(row, row),
    )
    for message in (row, batch):
        data = message.model_dump(mode="json", exclude_none=True)
        assert to_json_bytes(message) == orjson.dumps(data, option=orjson.OPT_SORT_KEYS)


def test_every_plain_value_carries_the_fields_of_the_part_it_is_written_as() -> None:
    """The derived encoders read a part's fields by name from whatever value stands for it."""
    pairs: list[tuple[type[tuple[object, ...]], type[BaseModel]]] = [
        (CitationRef, CitationKey),
        (ClaimCheck, ClaimCheckOut),
    ]
    for value, model in pairs:
        assert set(model.model_fields) <= set(value._fields), value.__name__  # type: ignore[attr-defined]
    assert set(ReasonOut.model_fields) <= set(Failure.model_fields)
