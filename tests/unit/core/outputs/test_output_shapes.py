"""The msgspec shape proof against pydantic: ``validate_output`` must answer exactly as if pydantic
had looked at every output (same ``ValidatedOutput``, or the same failures with the same paths).

Random outputs of each kind (``random_outputs``, and the one proposal type it lacks) are taken as
they are (valid) or after a few random mutations (invalid mostly): a value swapped for one of
another type or out of range (NaN, infinities, huge and negative ints, bools, bytes, str
subclasses, enum members), a list made a tuple or a set, an object made a read-only mapping, a key
removed or an unknown one added.
"""

from __future__ import annotations

import copy
import math
import random
from enum import Enum, StrEnum
from types import MappingProxyType
from typing import Any

import pytest
from fixtures import good_answer, good_proposal, good_report
from hypothesis import given, settings
from hypothesis import strategies as st
from random_outputs import answer, proposal, report

from worker.core.outputs.shapes import proves_valid
from worker.core.outputs.validation import ValidatedOutput, _validate


class Label(str):
    """A str subclass (pydantic's strict mode accepts it)."""


class Kind(StrEnum):
    OBS = "OBS"


class Plain(Enum):
    OBS = "OBS"


WEIRD: list[Any] = [
    None, True, False, 0, 1, -1, 7, 1.5, 0.95, -0.5, 2.0, math.nan, math.inf, -math.inf, 10**30,
    2**63, 10**1001, "", "x", "OBS", "DOC", "Q10", "DRAFT", "review", "2026-12-01T04:10:00Z",
    "2026-13-01", "[OBS-1]", b"x", Label("OBS"), Kind.OBS, Plain.OBS, [], [1], ["a"], {},
    {"kind": "OBS", "id": 1}, {"kind": "OBS", "id": -1}, ("a",), (), frozenset({"a"}),
]  # fmt: skip
#: Values one step from valid, where msgspec and pydantic could disagree.
NEAR_MISSES: list[Any] = [
    math.nan, math.inf, -math.inf, "yesterday", "2026-13-01", -1, True, 10**30, 1, 0.5, None,
    Label("DRAFT"), Kind.OBS, Plain.OBS,
]  # fmt: skip
#: Fields with a rule beyond their type (bounds, literals, a date-time, a tag).
CHECKED_KEYS = frozenset(
    {"at", "value", "confidence", "id", "kind", "section_index", "sample_n", "gate", "flag"}
)
UNKNOWN_KEYS = ["extra", "quote", "citations", "confidence", "proposal_type", "at", "id"]


def report_section_proposal(r: random.Random) -> dict[str, Any]:
    patch: dict[str, Any] = {"report_id": "r", "heading": "H", "body_markdown": "It moved."}
    if r.random() < 0.5:
        patch["section_index"] = r.choice([0, 3])
    return {
        "proposal_type": "report_section",
        "summary": "Add a section [OBS-1].",
        "patch": patch,
        "grounding": {"reasoning": "r", "observations": [1]},
        "confidence": 0.5,
        "gate": "Q9",
    }


MAKERS = [
    ("answer", answer),
    ("report", report),
    ("proposal", proposal),
    ("proposal", report_section_proposal),
]


def positions(value: Any) -> list[tuple[Any, Any]]:
    """Every ``(container, key)`` below ``value`` (dicts and lists), in document order."""
    out: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            out.append((node, key))
            if isinstance(child, dict | list):
                stack.append(child)
    return out


def _hashable(x: Any) -> bool:
    """Whether ``x`` can go into a frozenset (a mapping proxy an earlier move made cannot)."""
    try:
        hash(x)
    except TypeError:
        return False
    return True


def mutate(r: random.Random, obj: dict[str, Any]) -> None:
    places = positions(obj)
    scalars = [(c, k) for c, k in places if not isinstance(c[k], dict | list)]
    checked = [(c, k) for c, k in scalars if k in CHECKED_KEYS]
    if scalars and r.random() < 0.4:  # a leaf one step from valid (mostly one with a rule)
        container, key = r.choice(checked if checked and r.random() < 0.7 else scalars)
        container[key] = r.choice(NEAR_MISSES)
        return
    container, key = r.choice(places) if places else (obj, None)
    move = r.randrange(6)
    if move == 0 and key is not None:
        container[key] = copy.deepcopy(r.choice(WEIRD))
    elif move == 1 and key is not None and isinstance(container[key], list):
        container[key] = r.choice([tuple, frozenset])(
            x for x in container[key] if not isinstance(x, dict | list) and _hashable(x)
        )
    elif move == 2 and key is not None and isinstance(container[key], dict):
        container[key] = MappingProxyType(container[key])
    elif move == 3 and isinstance(container, dict) and key is not None:
        del container[key]
    elif move == 4:
        dicts = [obj] + [c[k] for c, k in places if isinstance(c[k], dict)]
        r.choice(dicts)[r.choice(UNKNOWN_KEYS)] = copy.deepcopy(r.choice(WEIRD))
    elif key is not None and isinstance(container[key], list):
        container[key].append(copy.deepcopy(r.choice(WEIRD)))


def same(kind: str, obj: dict[str, Any]) -> ValidatedOutput | list[Any]:
    fast = _validate(kind, obj, 0.9, fast=True)
    plain = _validate(kind, obj, 0.9, fast=False)
    assert fast == plain
    return fast


@settings(max_examples=2000, deadline=None)
@given(st.randoms(use_true_random=False))
def test_the_fast_path_answers_as_pydantic_does(r: random.Random) -> None:
    kind, make = r.choice(MAKERS)
    obj = make(r)
    for _ in range(r.choice([0, 0, 1, 1, 2, 3])):
        mutate(r, obj)
    same(kind, obj)


@pytest.mark.parametrize(
    ("kind", "obj"),
    [("answer", good_answer()), ("report", good_report()), ("proposal", good_proposal())],
)
def test_a_valid_output_takes_the_fast_path(kind: str, obj: dict[str, Any]) -> None:
    """Otherwise the property above would compare pydantic with itself."""
    assert proves_valid(kind, obj)
    assert isinstance(same(kind, obj), ValidatedOutput)


@pytest.mark.parametrize(
    ("kind", "obj"),
    [
        ("answer", {"answer_markdown": "x", "tool_calls_made": ("a",)}),
        ("answer", {"answer_markdown": "x", "claims": [MappingProxyType({"text": "x"})]}),
        ("answer", {"answer_markdown": "x", "citations": [{"kind": "OBS", "id": 1, "x": 1}]}),
        ("report", {"title": "t", "status": "DRAFT", "base_rates": [
            {"metric": "m", "value": math.nan, "sample_n": 1}]}),
        ("report", {"title": "t", "status": "DRAFT", "timeline": [
            {"at": "yesterday", "text": "x"}]}),
        ("proposal", good_proposal() | {"proposal_type": "memo"}),
    ],
)  # fmt: skip
def test_what_msgspec_alone_would_let_through_goes_to_pydantic(
    kind: str, obj: dict[str, Any]
) -> None:
    assert not proves_valid(kind, obj)
    assert isinstance(same(kind, obj), list)
