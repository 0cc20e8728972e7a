"""Claim units as the verdict builds them (from the token memo ``cite`` filled, the per-unit
helper calls inlined) against ``claims_reference``, the plain code they replaced.

Random outputs of the three kinds (``random_outputs``: tokens of every sort, Markdown the
splitter acts on), then mutated into shapes the schema would refuse (items that are not
objects, texts that are not strings, citation lists that are tuples or not lists, entries that
are not a valid ``{kind, id}`` or carry more keys, headings with tokens): the units must be
equal field by field, or both must raise the same ``ValueError``.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

import claims_reference
import random_outputs
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from worker.core.citations.extraction import cite
from worker.core.citations.tokens import Tokens
from worker.core.claims.units import ClaimUnit, claim_units

BAD_ENTRIES: list[Any] = [
    {"kind": "XYZ", "id": 1},
    {"kind": "OBS", "id": -1},
    {"kind": "OBS", "id": True},
    {"kind": "OBS"},
    7,
    "[OBS-1]",
    None,
]
ODD_VALUES: list[Any] = [None, 7, 1.5, True, ["[OBS-3]"], {"text": "[DOC-4]"}, "", "[EVT-5] x."]


def _mutate(r: random.Random, output: dict[str, Any]) -> None:
    """Some of the output's unit lists' items and fields replaced by shapes a schema refuses."""
    for key in ("claims", "sections", "timeline"):
        items = output.get(key)
        if not isinstance(items, list):
            continue
        for n, item in enumerate(items):
            roll = r.random()
            if roll < 0.1:
                items[n] = r.choice(ODD_VALUES)
                continue
            if not isinstance(item, dict):
                continue
            if roll < 0.25:
                field = r.choice(["text", "body_markdown", "heading", "citations"])
                item[field] = r.choice(ODD_VALUES)
            elif roll < 0.35:
                item["heading"] = r.choice(random_outputs.TOKENS) + " heading"
            elif roll < 0.45 and isinstance(item.get("citations"), list):
                item["citations"] = tuple(item["citations"])
            elif roll < 0.55 and isinstance(item.get("citations"), list):
                item["citations"].append(r.choice(BAD_ENTRIES))
            elif roll < 0.65 and isinstance(item.get("citations"), list):
                item["citations"].append({"kind": "DOC", "id": 777, "quote": "[OBS-50412]"})
            elif roll < 0.7:
                item.pop(r.choice(["text", "body_markdown", "citations"]), None)
            elif roll < 0.85 and isinstance(item.get("citations"), list):
                item["citations"] *= 2  # every structured ref twice
                if r.random() < 0.5:
                    item["text"] = item["body_markdown"] = "No token here."
        if r.random() < 0.1:
            output[key] = tuple(items)
    if r.random() < 0.05:
        output["claims"] = r.choice(ODD_VALUES)
    if r.random() < 0.05:
        output["answer_markdown"] = r.choice(ODD_VALUES)


def _units(make: Any) -> tuple[str, list[ClaimUnit] | str]:
    try:
        return "units", make()
    except ValueError as exc:
        return "error", str(exc)


def _with_memo(output: dict[str, Any], kind: str) -> list[ClaimUnit]:
    """The units from the memo ``cite`` filled; when ``cite`` stops at an invalid entry (the
    verdict never gets that far) the memo is partly filled, which must not change them either."""
    tokens = Tokens()
    with contextlib.suppress(ValueError):
        cite(output, tokens)
    return claim_units(output, kind, tokens)


def _fields(got: tuple[str, list[ClaimUnit] | str]) -> Any:
    """The units with each field's type (a ``tuple`` of refs, ``UnitKind`` members, …)."""
    status, value = got
    if status == "error":
        return got
    assert isinstance(value, list)
    return [tuple((type(f), f) for f in unit) for unit in value]


@given(st.randoms(use_true_random=False), st.booleans())
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(random.Random(1), True)
def test_claim_units_equal_the_plain_units(r: random.Random, mutate: bool) -> None:
    kind, output = random_outputs.output(r)
    if mutate:
        _mutate(r, output)
    expected = _units(lambda: claims_reference.claim_units(output, kind))
    assert _fields(_units(lambda: claim_units(output, kind))) == _fields(expected)
    assert _fields(_units(lambda: _with_memo(output, kind))) == _fields(expected)


def test_a_memo_read_twice_gives_the_same_units() -> None:
    """The spans' refs come from the memo when every token was read, else they are read."""
    output = {
        "answer_markdown": "A [OBS-1] b [DOC-2]. C [OBS-1][EVT-3]! D?",
        "claims": [{"text": "E [OBS-1].", "citations": [{"kind": "OBS", "id": 1}]}],
    }
    fresh = claim_units(output, "answer")
    tokens = Tokens()
    tokens.refs("A [OBS-1] only")  # the table knows [OBS-1], not the others
    assert claim_units(output, "answer", tokens) == fresh
    assert claim_units(output, "answer", tokens) == fresh
    assert fresh == claims_reference.claim_units(output, "answer")
    assert [len(u.refs) for u in fresh] == [2, 2, 1]  # [OBS-1] once in the second sentence
