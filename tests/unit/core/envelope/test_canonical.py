"""Canonicalizing a model's raw string output (contract §3.1)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.tokens import MAX_ID_DIGITS
from worker.core.envelope.canonical import (
    EXCERPT_CODE_POINTS,
    Canonical,
    Malformed,
    canonicalize,
    decode_string_wrapper,
    looks_like_json,
    parse_object_or_span,
    prose_span,
    raw_excerpt,
    strip_fence,
    unwrap_wrapper_key,
)

ANSWER_FIELDS = frozenset(
    {"answer_markdown", "citations", "claims", "tool_calls_made", "withheld", "no_grounding"}
)
PROPOSAL_FIELDS = frozenset(
    {"proposal_type", "summary", "patch", "grounding", "confidence", "gate", "auto_appliable"}
)
ANSWER = {"answer_markdown": "Loitered [OBS-1].", "citations": [{"kind": "OBS", "id": 1}]}
ANSWER_JSON = json.dumps(ANSWER)
REFERENCE = re.compile(r"\[(OBS|DOC|EVT)-([0-9]+)\]", re.ASCII)


def ok(raw: str, fields: frozenset[str] = ANSWER_FIELDS) -> Canonical:
    result = canonicalize(raw, fields)
    assert isinstance(result, Canonical), result
    return result


def malformed(raw: str, fields: frozenset[str] = ANSWER_FIELDS) -> Malformed:
    result = canonicalize(raw, fields)
    assert isinstance(result, Malformed), result
    return result


# --- accepted shapes ---------------------------------------------------------------------------


def test_a_plain_object_needs_no_repair() -> None:
    assert ok(ANSWER_JSON) == Canonical(ANSWER, ())
    assert ok(f"  \n{ANSWER_JSON}\n\n") == Canonical(ANSWER, ())


@pytest.mark.parametrize(
    "raw",
    [
        f"```json\n{ANSWER_JSON}\n```",
        f"```JSON\n{ANSWER_JSON}\n```",
        f"```\n{ANSWER_JSON}\n```",
        f"````json\n{ANSWER_JSON}\n````",
        f"~~~json\n{ANSWER_JSON}\n~~~",
        f"  ```json  \n\n{ANSWER_JSON}\n\n   ```  \n",
    ],
)
def test_one_fence_is_stripped(raw: str) -> None:
    assert ok(raw) == Canonical(ANSWER, ("fence",))


def test_a_json_string_wrapper_is_decoded() -> None:
    assert ok(json.dumps(ANSWER_JSON)) == Canonical(ANSWER, ("json_string",))


def test_a_fence_outside_a_string_wrapper() -> None:
    raw = f"```json\n{json.dumps(ANSWER_JSON)}\n```"
    assert ok(raw) == Canonical(ANSWER, ("fence", "json_string"))


def test_a_fence_inside_a_string_wrapper() -> None:
    raw = json.dumps(f"```json\n{ANSWER_JSON}\n```")
    assert ok(raw) == Canonical(ANSWER, ("json_string", "fence"))


def test_a_wrapper_key_is_unwrapped() -> None:
    assert ok(json.dumps({"answer": ANSWER})) == Canonical(ANSWER, ("wrapper_key",))
    assert ok(json.dumps({"response": ANSWER})) == Canonical(ANSWER, ("wrapper_key",))


def test_every_repair_in_order() -> None:
    raw = f"```json\n{json.dumps(json.dumps({'answer': ANSWER}))}\n```"
    assert ok(raw) == Canonical(ANSWER, ("fence", "json_string", "wrapper_key"))


def test_a_schema_field_is_never_a_wrapper() -> None:
    """``{"patch": {...}}`` is a (schema-invalid) proposal, not a wrapper around its patch."""
    value = {"patch": {"fields": {"a": 1}}}
    assert ok(json.dumps(value), PROPOSAL_FIELDS) == Canonical(value, ())


def test_a_single_key_with_a_non_object_value_is_kept() -> None:
    for value in ({"answer": "text"}, {"answer": [ANSWER]}, {"answer": None}):
        assert ok(json.dumps(value)) == Canonical(value, ())


def test_only_one_wrapper_level_is_unwrapped() -> None:
    inner = {"response": ANSWER}
    assert ok(json.dumps({"answer": inner})) == Canonical(inner, ("wrapper_key",))


def test_an_object_in_prose_is_taken_from_the_first_to_the_last_brace() -> None:
    raw = f"Here is the answer:\n{ANSWER_JSON}\nHope this helps!"
    assert ok(raw) == Canonical(ANSWER, ("prose_span",))


def test_prose_starting_with_a_citation_token_is_prose() -> None:
    raw = f"[OBS-1] Here it is: {ANSWER_JSON}"
    assert ok(raw) == Canonical(ANSWER, ("prose_span",))


def test_prose_span_then_wrapper_key() -> None:
    raw = f"Sure! {json.dumps({'answer': ANSWER})} done."
    assert ok(raw) == Canonical(ANSWER, ("prose_span", "wrapper_key"))


def test_big_integers_parse_exactly() -> None:
    big = 2**64 + 12345
    at_limit = int("9" * MAX_ID_DIGITS)
    result = ok(f'{{"citations": [{{"kind": "DOC", "id": {big}}}], "x": {at_limit}}}')
    assert result.value["citations"][0]["id"] == big
    assert result.value["x"] == at_limit


# --- failures ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ("", "no JSON object"),
        ("   \n ", "no JSON object"),
        ("The vessel loitered in the corridor [OBS-1].", "no JSON object"),
        ("[Note] the vessel loitered [OBS-1].", "no JSON object"),
        ('[{"answer_markdown": "x"}]', "array"),
        ("[1, 2]", "array"),
        ('[{"answer_markdown": "x"}', "invalid JSON"),
        ("42", "no JSON object"),
        ("null", "no JSON object"),
        ('{"answer_markdown": "truncated', "invalid JSON"),
        ('{"answer_markdown": "x", "claims": [', "invalid JSON"),
        ('{"a": 1}{"b": 2}', "invalid JSON"),
        ('{"a": 1}\n{"b": 2}', "invalid JSON"),
        ('{"a": 1} trailing words', "invalid JSON"),
        ('Text {"a": 1} {"b": 2', "truncated"),
        ("Use {a} and {b} here", "braced span"),
        ('Example: {"a": [1, 2} end', "braced span"),
        ('"just a string"', "no JSON object"),
        ('"\\"nested\\""', "nested more than one level"),
        (json.dumps(json.dumps(ANSWER_JSON)), "nested more than one level"),
        ('{"a": NaN}', "NaN"),
        ('{"a": Infinity}', "Infinity"),
        ('{"a": -Infinity}', "-Infinity"),
        ('{"a": 1e400}', "too large"),
        ('{"a": 1, "a": 2}', "duplicate key"),
        ('{"a": {"b": 1, "b": 1}}', "duplicate key"),
        ('{"a": "\\ud800"}', "lone surrogate"),
        ('{"\\udfff": 1}', "lone surrogate"),
        ('{"a": "line\nbreak"}', "invalid JSON"),
        ("{'a': 1}", "invalid JSON"),
        ('{"a": 1,}', "invalid JSON"),
        ("```json\n[1]\n```", "array"),
        ("```json\n[1]", "no JSON object"),
    ],
)
def test_fails_closed(raw: str, detail: str) -> None:
    result = malformed(raw)
    assert detail in result.detail
    assert result.raw_excerpt == raw_excerpt(raw)


def test_an_unclosed_fence_is_prose() -> None:
    """A reply cut off after its object closed: the object is still found as a prose span."""
    assert ok(f"```json\n{ANSWER_JSON}") == Canonical(ANSWER, ("prose_span",))


def test_an_integer_with_too_many_digits_is_malformed() -> None:
    raw = '{"id": ' + "1" * (MAX_ID_DIGITS + 1) + "}"
    assert "more than 1000 digits" in malformed(raw).detail
    assert "more than 1000 digits" in malformed('{"id": -' + "2" * 5000 + "}").detail


def test_deep_nesting_is_malformed_not_a_crash() -> None:
    assert malformed("[" * 100_000 + "]" * 100_000).detail == "the JSON is nested too deeply"
    assert "nested too deeply" in malformed('{"a":' * 100_000 + "1" + "}" * 100_000).detail


def test_the_detail_never_quotes_model_text() -> None:
    secret = "SECRET-WORDS"
    for raw in (f'{{"a": "{secret}', f"{secret} prose", f'{{"{secret}": 1, "{secret}": 2}}'):
        assert secret not in malformed(raw).detail


# --- the named steps ---------------------------------------------------------------------------


def test_strip_fence() -> None:
    assert strip_fence("```json\n{}\n```") == "{}"
    assert strip_fence("```\n```") == ""
    assert strip_fence("```json {} ```") is None  # no newline: not a fence block
    assert strip_fence("```json\n{}\n``") is None  # closing run too short
    assert strip_fence("```json\n{}\n~~~") is None  # different fence character
    assert strip_fence("```js`on\n{}\n```") is None  # backtick in the info string
    assert strip_fence("``\n{}\n``") is None
    assert strip_fence("{}") is None
    assert strip_fence("```\n{}\n```\nmore") is None


def test_decode_string_wrapper() -> None:
    assert decode_string_wrapper('"{\\"a\\": 1}"') == '{"a": 1}'
    assert decode_string_wrapper('" padded "') == "padded"
    assert decode_string_wrapper('"a" "b"') is None
    assert decode_string_wrapper('"unterminated') is None
    assert decode_string_wrapper('{"a": 1}') is None


def test_looks_like_json() -> None:
    for text in ("{", '"x"', "[1]", "[ {", '["a"]', "[]", "[-1]", "[true]", "[null]", "[[1]]"):
        assert looks_like_json(text), text
    for text in ("[Note] x", "[OBS-1] x", "[x]", "[nullable] x", "prose {", ""):
        assert not looks_like_json(text), text


def test_parse_object_or_span() -> None:
    assert parse_object_or_span('{"a": 1}') == ({"a": 1}, False)
    assert parse_object_or_span('see {"a": 1} here') == ({"a": 1}, True)


def test_prose_span_requires_an_object() -> None:
    assert prose_span('x {"a": {"b": 1}} y') == {"a": {"b": 1}}


def test_unwrap_wrapper_key() -> None:
    assert unwrap_wrapper_key({"answer": {"a": 1}}, ANSWER_FIELDS) == {"a": 1}
    assert unwrap_wrapper_key({"claims": {"a": 1}}, ANSWER_FIELDS) is None
    assert unwrap_wrapper_key({"a": {}, "b": {}}, ANSWER_FIELDS) is None
    assert unwrap_wrapper_key({}, ANSWER_FIELDS) is None


# --- raw_excerpt -------------------------------------------------------------------------------


def test_raw_excerpt_removes_every_token() -> None:
    raw = "The ship [OBS-1][DOC-2] sat in the corridor [EVT-3]. Also [DOC-5[DOC-7]1]."
    assert raw_excerpt(raw) == "The ship sat in the corridor. Also [DOC-5 1]."


def test_raw_excerpt_keeps_exactly_2000_code_points_of_astral_text() -> None:
    raw = "😀" * 1999 + "👍🏽" + "x" * 10  # the thumbs-up with skin tone is two code points
    excerpt = raw_excerpt(raw)
    assert len(excerpt) == EXCERPT_CODE_POINTS
    assert excerpt == "😀" * 1999 + "👍"
    excerpt.encode("utf-8")  # every code point is whole: no lone surrogate
    assert len(raw_excerpt("é" * 5000).encode("utf-8")) == 4000


def test_raw_excerpt_replaces_lone_surrogates() -> None:
    raw = json.loads('"ok \\ud800 then \\udfff"')
    assert raw_excerpt(raw) == "ok \ufffd then \ufffd"
    raw_excerpt(raw).encode("utf-8")


def test_raw_excerpt_is_cut_after_the_tokens_are_removed() -> None:
    raw = "[OBS-1]" * 1000 + "a" * 2500
    assert raw_excerpt(raw) == "a" * 2000
    assert raw_excerpt("short") == "short"


@given(st.text(alphabet="[OBS-DOC]EVT0123456789 x😀", max_size=2600))
@settings(max_examples=200, deadline=None)
def test_raw_excerpt_is_short_and_token_free(raw: str) -> None:
    excerpt = raw_excerpt(raw)
    assert len(excerpt) <= EXCERPT_CODE_POINTS
    assert REFERENCE.search(excerpt) is None


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
        max_leaves=10,
    ).filter(lambda v: isinstance(v, dict) and len(v) != 1)
)
@settings(max_examples=200, deadline=None)
def test_any_json_object_round_trips(value: dict[str, object]) -> None:
    raw = json.dumps(value)
    assert canonicalize(raw, frozenset()) == Canonical(value, ())
    assert canonicalize(f"```json\n{raw}\n```", frozenset()) == Canonical(value, ("fence",))
