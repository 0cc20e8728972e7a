"""Citation tokens and the citations of a whole output (contract §3.3)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.entries import entry_ref, observation_ref
from worker.core.citations.evidence import MAX_SOURCE_ID, CitationRef, EvidenceKind
from worker.core.citations.extraction import IdTooLong, Occurrence, extract, find_overlong_ids
from worker.core.citations.paths import walk, walk_strings
from worker.core.citations.tokens import (
    MAX_ID_DIGITS,
    TokenMatch,
    Tokens,
    find_tokens,
    parse_id,
    scan_tokens,
)

OBS, DOC, EVT = EvidenceKind.OBS, EvidenceKind.DOC, EvidenceKind.EVT
REFERENCE = re.compile(r"\[(OBS|DOC|EVT)-([0-9]+)\]", re.ASCII)
ADVERSARIAL = st.text(alphabet="[OBS-DOC]EVT0123456789 x", max_size=300)


def ref(kind: EvidenceKind, ident: int) -> CitationRef:
    return CitationRef(kind, ident)


# --- find_tokens -------------------------------------------------------------------------------


def test_finds_each_token_with_its_exact_span() -> None:
    text = "Loitered [OBS-50412][OBS-50418], see [DOC-9931] and [EVT-2741]."
    assert find_tokens(text) == [
        TokenMatch(ref(OBS, 50412), 9, 20),
        TokenMatch(ref(OBS, 50418), 20, 31),
        TokenMatch(ref(DOC, 9931), 37, 47),
        TokenMatch(ref(EVT, 2741), 52, 62),
    ]
    assert text[9:20] == "[OBS-50412]"


def test_leading_zeros_are_insignificant() -> None:
    assert find_tokens("[OBS-007] [DOC-0] [EVT-000]") == [
        TokenMatch(ref(OBS, 7), 0, 9),
        TokenMatch(ref(DOC, 0), 10, 17),
        TokenMatch(ref(EVT, 0), 18, 27),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "[OBS-١٢]",  # Arabic-Indic digits
        "[OBS-１２]",  # fullwidth digits
        "[OBS-𝟏]",  # mathematical bold digit
        "[obs-12]",
        "[OBS 12]",
        "[OBS-]",
        "[OBS-12",
        "OBS-12]",
        "[ OBS-12]",
        "[OBS-12 ]",
        "[OBS--12]",
        "[OBS-+12]",
        "[OBS-1.5]",
        "[OBSX-1]",
        "[ＯＢＳ-1]",
    ],
)
def test_near_misses_are_not_tokens(text: str) -> None:
    assert find_tokens(text) == []


def test_nested_brackets_yield_the_inner_token_only() -> None:
    assert find_tokens("[DOC-5[DOC-7]1]") == [TokenMatch(ref(DOC, 7), 6, 13)]
    assert find_tokens("[[OBS-1]]") == [TokenMatch(ref(OBS, 1), 1, 8)]
    assert find_tokens("[OBS-1[OBS-2]") == [TokenMatch(ref(OBS, 2), 6, 13)]


def test_ids_above_the_bigint_range_stay_exact_ints() -> None:
    big = 2**64 + 1
    ((token,),) = [find_tokens(f"[EVT-{big}]")]
    assert token.ref == ref(EVT, big)
    assert not token.ref.queryable
    assert find_tokens(f"[EVT-{MAX_SOURCE_ID}]")[0].ref.queryable


def test_an_id_of_max_digits_is_read_and_one_more_is_overlong() -> None:
    at_limit = "9" * MAX_ID_DIGITS
    over = "1" + "0" * MAX_ID_DIGITS
    assert find_tokens(f"[OBS-{at_limit}]")[0].ref.id == int(at_limit)
    assert find_tokens(f"[OBS-{over}]") == []
    assert [t.ref for t in scan_tokens(f"a [OBS-{over}] b")] == [None]
    # Leading zeros do not count towards the limit.
    assert find_tokens(f"[OBS-{'0' * 5000}12]")[0].ref == ref(OBS, 12)


def test_parse_id() -> None:
    assert parse_id("000") == 0
    assert parse_id("0042") == 42
    assert parse_id("1" * (MAX_ID_DIGITS + 1)) is None


@given(ADVERSARIAL)
@settings(max_examples=500, deadline=None)
def test_find_tokens_agrees_with_the_reference_regex(text: str) -> None:
    expected = [
        TokenMatch(CitationRef(EvidenceKind(m[1]), int(m[2])), m.start(), m.end())
        for m in REFERENCE.finditer(text)
    ]
    assert find_tokens(text) == expected


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_find_tokens_agrees_with_the_reference_regex_on_any_text(text: str) -> None:
    found = [(t.start, t.end) for t in find_tokens(text)]
    assert found == [m.span() for m in REFERENCE.finditer(text)]


# --- extract -----------------------------------------------------------------------------------


def test_extract_an_answer_in_document_order_with_paths() -> None:
    output = {
        "answer_markdown": "Loitered [OBS-1]. Docked [DOC-2][OBS-1].",
        "citations": [{"kind": "DOC", "id": 2, "quote": "docked [EVT-9]"}],
        "claims": [
            {"text": "Loitered [OBS-1].", "citations": [{"kind": "OBS", "id": 1}], "confidence": 1},
        ],
        "tool_calls_made": ["search_corpus"],
        "withheld": [{"reason": "n too small [OBS-3]", "metric": "m"}],
        "no_grounding": False,
    }
    assert extract(output) == [
        Occurrence(ref(OBS, 1), "answer_markdown", True),
        Occurrence(ref(DOC, 2), "answer_markdown", True),
        Occurrence(ref(OBS, 1), "answer_markdown", True),
        Occurrence(ref(DOC, 2), "citations[0]", False),
        Occurrence(ref(EVT, 9), "citations[0].quote", True),
        Occurrence(ref(OBS, 1), "claims[0].text", True),
        Occurrence(ref(OBS, 1), "claims[0].citations[0]", False),
        Occurrence(ref(OBS, 3), "withheld[0].reason", True),
    ]


def test_extract_a_report() -> None:
    output = {
        "title": "After action [EVT-1]",
        "sections": [
            {"heading": "H [DOC-1]", "body_markdown": "B [OBS-2].", "citations": []},
            {"heading": "H2", "body_markdown": "B2.", "citations": [{"kind": "EVT", "id": 7}]},
        ],
        "timeline": [
            {
                "at": "2026-12-01T00:00:00Z",
                "text": "T [EVT-3]",
                "citations": [{"kind": "EVT", "id": 4}],
            }
        ],
        "base_rates": [{"metric": "m", "value": 0, "sample_n": 0, "interval": None}],
        "status": "DRAFT",
    }
    assert extract(output) == [
        Occurrence(ref(EVT, 1), "title", True),
        Occurrence(ref(DOC, 1), "sections[0].heading", True),
        Occurrence(ref(OBS, 2), "sections[0].body_markdown", True),
        Occurrence(ref(EVT, 7), "sections[1].citations[0]", False),
        Occurrence(ref(EVT, 3), "timeline[0].text", True),
        Occurrence(ref(EVT, 4), "timeline[0].citations[0]", False),
    ]


def test_extract_a_proposal_reads_observations_as_obs_ids() -> None:
    output = {
        "proposal_type": "case_update",
        "summary": "Flag it [DOC-4]",
        "patch": {"fields": {"note": "see [EVT-5]"}, "citations": [{"kind": "DOC", "id": 6}]},
        "grounding": {"reasoning": "because [OBS-8]", "observations": [50412, 2**70]},
        "confidence": 0.95,
        "gate": "Q10",
        "auto_appliable": False,
    }
    assert extract(output) == [
        Occurrence(ref(DOC, 4), "summary", True),
        Occurrence(ref(EVT, 5), "patch.fields.note", True),
        Occurrence(ref(OBS, 8), "grounding.reasoning", True),
        Occurrence(ref(OBS, 50412), "grounding.observations[0]", False),
        Occurrence(ref(OBS, 2**70), "grounding.observations[1]", False),
    ]


def test_citations_elsewhere_are_ordinary_data() -> None:
    """Only the contract's paths are structured: a nested ``citations`` holds plain data."""
    output = {
        "patch": {"citations": [{"kind": "DOC", "id": 6}, "[OBS-2]"]},
        "claims": [{"text": "x", "citations": [], "extra": {"citations": [{"kind": "OBS"}]}}],
        "grounding": {"observations": [1], "nested": {"observations": [2]}},
    }
    assert extract(output) == [
        Occurrence(ref(OBS, 2), "patch.citations[1]", True),
        Occurrence(ref(OBS, 1), "grounding.observations[0]", False),
    ]


def test_keys_are_used_verbatim_and_nested_lists_are_indexed() -> None:
    output = {"odd.key [x]": [["[OBS-1]"], {"b c": "[DOC-2]"}]}
    assert extract(output) == [
        Occurrence(ref(OBS, 1), "odd.key [x][0][0]", True),
        Occurrence(ref(DOC, 2), "odd.key [x][1].b c", True),
    ]


def test_keys_are_not_scanned() -> None:
    assert extract({"[OBS-1]": "no token here"}) == []


@pytest.mark.parametrize(
    "output",
    [
        {"citations": [50412]},
        {"citations": [{"kind": "XYZ", "id": 1}]},
        {"citations": [{"kind": "OBS", "id": -1}]},
        {"citations": [{"kind": "OBS", "id": True}]},
        {"citations": [{"kind": "OBS", "id": "1"}]},
        {"claims": [{"citations": [{"kind": "OBS"}]}]},
        {"grounding": {"observations": ["1"]}},
        {"grounding": {"observations": [False]}},
    ],
)
def test_an_unvalidated_structured_entry_raises(output: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="at "):
        extract(output)


def test_deep_nesting_does_not_hit_the_recursion_limit() -> None:
    value: object = "[OBS-1]"
    for _ in range(5000):
        value = [value]
    ((occurrence,),) = [extract({"a": value})]
    assert occurrence.path == "a" + "[0]" * 5000


def test_find_overlong_ids_names_each_string_path() -> None:
    over = "[OBS-" + "1" * (MAX_ID_DIGITS + 1) + "]"
    output = {"answer_markdown": f"x {over} [OBS-1]", "claims": [{"text": over, "citations": []}]}
    assert find_overlong_ids(output) == [IdTooLong("answer_markdown"), IdTooLong("claims[0].text")]
    assert extract(output) == [Occurrence(ref(OBS, 1), "answer_markdown", True)]
    assert find_overlong_ids({"answer_markdown": "[OBS-1]"}) == []


def test_walk_strings_yields_values_in_document_order() -> None:
    output = {"a": "1", "b": [{"c": "2"}, 3, "4"], "d": {"e": None, "f": "5"}}
    assert list(walk_strings(output)) == [("a", "1"), ("b[0].c", "2"), ("b[2]", "4"), ("d.f", "5")]


@given(st.lists(ADVERSARIAL, max_size=4))
@settings(max_examples=200, deadline=None)
def test_extract_finds_every_reference_token_of_every_string(texts: list[str]) -> None:
    first = texts[0] if texts else ""
    output = {"answer_markdown": first, "withheld": [{"reason": t} for t in texts]}
    expected = [
        (CitationRef(EvidenceKind(m[1]), int(m[2])), path)
        for path, text in [
            ("answer_markdown", output["answer_markdown"]),
            *((f"withheld[{i}].reason", t) for i, t in enumerate(texts)),
        ]
        for m in REFERENCE.finditer(text)
    ]
    assert [(o.ref, o.path) for o in extract(output)] == expected


# --- the fast walk against the plain one ------------------------------------------------------


def reference_extract(output: dict[str, object]) -> list[Occurrence]:
    """``extract`` as first written: every node of ``walk``, tokens found afresh."""
    found: list[Occurrence] = []
    for path, value, role in walk(output):
        if role == "entry":
            found.append(Occurrence(entry_ref(value, path), path, False))
        elif role == "observation":
            found.append(Occurrence(observation_ref(value, path), path, False))
        elif isinstance(value, str):
            found.extend(Occurrence(t.ref, path, True) for t in find_tokens(value))
    return found


ENTRY = st.builds(
    lambda kind, ident, quote: {"kind": kind, "id": ident, **({"quote": quote} if quote else {})},
    st.sampled_from(["OBS", "DOC", "EVT"]),
    st.integers(0, 99),
    st.none() | ADVERSARIAL,
)
LEAF = ADVERSARIAL | st.integers(0, 9) | st.none() | st.booleans()
DATA = st.recursive(
    LEAF,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["a", "citations", "text", "observations"]), inner, max_size=3
        )
    ),
    max_leaves=12,
)
UNIT = st.fixed_dictionaries(
    {"text": ADVERSARIAL}, optional={"citations": st.lists(ENTRY, max_size=3), "extra": DATA}
)
OUTPUT = st.fixed_dictionaries(
    {},
    optional={
        "answer_markdown": ADVERSARIAL,
        "citations": st.lists(ENTRY, max_size=3),
        "claims": st.lists(UNIT | ADVERSARIAL, max_size=3),
        "sections": st.lists(UNIT, max_size=3),
        "grounding": st.fixed_dictionaries(
            {"observations": st.lists(st.integers(0, 2**70), max_size=3)},
            optional={"reasoning": ADVERSARIAL, "nested": DATA},
        ),
        "patch": DATA,
        "tool_calls_made": st.lists(ADVERSARIAL, max_size=3),
    },
)


@given(OUTPUT)
@settings(max_examples=300, deadline=None)
def test_extract_equals_the_plain_walk(output: dict[str, object]) -> None:
    """The walk that skips token-free strings and scalars finds what the full walk finds."""
    assert extract(output) == reference_extract(output)
    assert extract(output, Tokens()) == reference_extract(output)
