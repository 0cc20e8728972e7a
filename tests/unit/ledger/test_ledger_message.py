"""The ledger sink's msgspec shape proof against the pydantic reference: ``ledger_rows`` must give
exactly the rows ``ledger_records`` gives, or fail exactly where it fails (same exception class).

Random ledger batch messages are taken as they are (valid: the proof must hold, so the fast path
is really taken) or after a few random mutations: a value swapped for one of another type or a
lax form pydantic coerces (``"5"`` for an int, ``5`` for a digit string, ``" 5"``, bools,
floats, huge ints, non-ASCII digits, a trailing newline), a key removed or an unknown one added.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.ledger.message import ledger_records, ledger_rows, proven_rows
from worker.stores.ledger_rows import LedgerRecord, LedgerRow

KINDS = ["OBS", "DOC", "EVT"]
RESOLUTIONS = ["dangling", "revoked", "acl_redacted", "not_in_retrieval", "resolved"]
QUOTE_CHECKS = ["none", "exact", "tolerant", "mismatch"]
OUTCOMES = ["grounded", "regenerate", "could_not_ground"]
TEXTS = ["", "a", "acme", "t-1", "é", "𝔘", "x" * 300, "claims[0].text", "a\nb", "Ω≈", "\u00a0"]

WEIRD: list[Any] = [
    None, True, False, 0, 1, -1, 7, 1.5, 5.0, -0.0, 2**31, 2**63, 2**64 - 1, "", "x", "5", " 5",
    "+5", "5\n", "05", "1_000", "٣", "5.0", "-5", "OBS", "obs", "DOC", "resolved", "RESOLVED",
    "none", "grounded", "𝔘", [], ["a"], [1], [None], ["a", 1], {}, {"kind": "OBS"}, [[]],
]  # fmt: skip
#: Values one step from valid, where msgspec and pydantic could disagree.
NEAR_MISSES: list[Any] = ["", -1, True, "5", 5, 5.0, " 5", "5\n", "٣", "obs", None, 2**63]
UNKNOWN_KEYS = ["schema_version", "claim_checks", "extra", "text", "quote", "recorded_at"]


def outcome(run: Any) -> tuple[str, Any]:
    try:
        return ("rows", run())
    except Exception as exc:  # the class is what is compared
        return ("error", type(exc).__name__)


def reference(value: bytes) -> list[LedgerRow]:
    return [LedgerRow.of(r) for r in ledger_records(value)]


def random_row(r: random.Random) -> dict[str, Any]:
    row: dict[str, Any] = {
        "kind": r.choice(KINDS),
        "source_id": str(r.choice([0, 7, 1001, 2**63 - 1, 2**63, 10**30 + 7, r.randrange(10**9)])),
        "resolution": r.choice(RESOLUTIONS),
    }
    if r.random() < 0.8:
        row["quote_check"] = r.choice(QUOTE_CHECKS)
    if r.random() < 0.8:
        row["paths"] = [r.choice(TEXTS) for _ in range(r.randrange(4))]
    return row


def random_batch(r: random.Random) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "tenant_id": r.choice(TEXTS[1:]),
        "turn_id": r.choice(TEXTS[1:]),
        "draft_id": r.choice(TEXTS[1:]),
        "attempt": r.choice([0, 1, 2, 2**31, 2**63, r.randrange(100)]),
        "outcome": r.choice(OUTCOMES),
        "policy_version": r.choice(TEXTS),
        "event_id": r.choice(TEXTS[1:]),
    }
    if r.random() < 0.9:
        doc["rows"] = [random_row(r) for _ in range(r.randrange(6))]
    if r.random() < 0.5:
        doc["schema_version"] = 1
    return doc


def _containers(obj: Any, out: list[Any]) -> list[Any]:
    if isinstance(obj, dict | list):
        out.append(obj)
        for v in obj.values() if isinstance(obj, dict) else obj:
            _containers(v, out)
    return out


def mutate(doc: dict[str, Any], r: random.Random) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for _ in range(r.randint(1, 3)):
        target = r.choice(_containers(doc, []))
        if isinstance(target, list):
            if target and r.random() < 0.7:
                target[r.randrange(len(target))] = copy.deepcopy(r.choice(WEIRD))
            else:
                target.append(copy.deepcopy(r.choice(WEIRD)))
            continue
        move = r.random()
        if target and move < 0.6:
            pool = NEAR_MISSES if r.random() < 0.5 else WEIRD
            target[r.choice(sorted(target))] = copy.deepcopy(r.choice(pool))
        elif target and move < 0.8:
            del target[r.choice(sorted(target))]
        else:
            target[r.choice(UNKNOWN_KEYS)] = copy.deepcopy(r.choice(WEIRD))
    return doc


@settings(max_examples=400, deadline=None)
@given(st.randoms(use_true_random=False))
def test_valid_batches_take_the_fast_path_and_give_the_references_rows(r: random.Random) -> None:
    doc = random_batch(r)
    value = orjson.dumps(doc)
    assert proven_rows(orjson.loads(value)) is not None
    assert outcome(lambda: ledger_rows(value)) == outcome(lambda: reference(value))


@settings(max_examples=1500, deadline=None)
@given(st.randoms(use_true_random=False))
def test_mutated_batches_give_what_the_reference_gives(r: random.Random) -> None:
    value = orjson.dumps(mutate(random_batch(r), r))
    assert outcome(lambda: ledger_rows(value)) == outcome(lambda: reference(value))
    # Where the proof holds, the reference must accept the message too, with the same rows.
    proven = proven_rows(orjson.loads(value))
    if proven is not None:
        assert proven == reference(value)


@pytest.mark.parametrize(
    ("patch", "row_patch"),
    [
        ({"attempt": "3"}, {}),  # pydantic coerces a digit string to an int: the reference decides
        ({"attempt": True}, {}),
        ({"attempt": 3.0}, {}),
        ({}, {"source_id": 1001}),  # a JSON number: int() of it, in the reference only
        ({}, {"source_id": " 1001"}),
        ({}, {"source_id": "1_001"}),
        ({}, {"paths": "answer_markdown"}),  # a string is a sequence of characters to tuple()
    ],
)
def test_lax_forms_go_to_the_reference_and_keep_its_answer(
    patch: dict[str, Any], row_patch: dict[str, Any]
) -> None:
    doc = random_batch(random.Random(3)) | {"rows": [random_row(random.Random(4)) | row_patch]}
    value = orjson.dumps(doc | patch)
    assert proven_rows(orjson.loads(value)) is None
    assert outcome(lambda: ledger_rows(value)) == outcome(lambda: reference(value))


@pytest.mark.parametrize(
    "patch",
    [{"tenant_id": ""}, {"attempt": -1}, {"outcome": "hedged"}, {"rows": [{"kind": "OBS"}]}],
)
def test_invalid_batches_fail_as_the_reference_fails(patch: dict[str, Any]) -> None:
    value = orjson.dumps(
        random_batch(random.Random(5)) | {"rows": [random_row(random.Random(6))]} | patch
    )
    assert outcome(lambda: ledger_rows(value))[0] == "error"
    assert outcome(lambda: ledger_rows(value)) == outcome(lambda: reference(value))


def test_rows_carry_the_columns_in_the_models_order() -> None:
    assert LedgerRow._fields == tuple(LedgerRecord.model_fields)
    assert set(LedgerRow._fields).isdisjoint({"text", "title", "quote", "snippet"})
