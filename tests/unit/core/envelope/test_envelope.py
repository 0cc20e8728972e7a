"""The draft envelope of contract §2 and its dead-letter classes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fixtures import envelope, good_answer

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.envelope.draft import Draft, EnvelopeRejection, parse_envelope
from worker.core.envelope.json_text import cap_depth
from worker.core.outputs.validation import validate_output


def parse(env: Any, key: bytes | None = b"t-1", max_bytes: int = 1 << 20) -> Any:
    raw = env if isinstance(env, bytes) else json.dumps(env).encode()
    return parse_envelope(key, raw, max_bytes=max_bytes)


def rejected(env: Any, key: bytes | None = b"t-1") -> str:
    result = parse(env, key)
    assert isinstance(result, EnvelopeRejection), result
    return result.error_class


def test_valid_envelope() -> None:
    draft = parse(envelope(good_answer(), retrieval=[CitationRef(EvidenceKind.DOC, 9931)]))
    assert isinstance(draft, Draft)
    assert draft.output == good_answer()
    assert draft.retrieval == (CitationRef(EvidenceKind.DOC, 9931),)
    assert draft.principal.groups == ("analysts",)
    assert draft.produced_at == "2026-12-02T11:59:59Z"


def test_oversized_is_checked_before_parsing() -> None:
    raw = b"x" * 101
    assert parse_envelope(b"t-1", raw, max_bytes=100).error_class == "oversized"  # type: ignore[union-attr]
    good = json.dumps(envelope(good_answer())).encode()
    assert isinstance(parse_envelope(b"t-1", good, max_bytes=len(good)), Draft)
    assert parse_envelope(b"t-1", good, max_bytes=len(good) - 1).error_class == "oversized"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "raw", [b"\xff\xfe{}", b"{not json", b"[1, 2]", b'"text"', b"", b'{"a": "\\ud800"}']
)
def test_not_a_json_object(raw: bytes) -> None:
    assert rejected(raw) == "malformed_envelope"


@pytest.mark.parametrize("version", [None, 2, "1", True, 1.0, "missing"])
def test_unsupported_schema_version(version: Any) -> None:
    env = envelope(good_answer())
    if version == "missing":
        del env["schema_version"]
    else:
        env["schema_version"] = version
    assert rejected(env) == "unsupported_schema_version"


def test_version_is_checked_before_fields() -> None:
    """A future version may reshape fields: it must stay replayable, not be called malformed."""
    assert rejected({"schema_version": 2, "whatever": 1}) == "unsupported_schema_version"


def mutate(**changes: Any) -> dict[str, Any]:
    env = envelope(good_answer())
    for name, value in changes.items():
        if value == "<missing>":
            env.pop(name, None)
        else:
            env[name] = value
    return env


@pytest.mark.parametrize(
    "changes",
    [
        {"draft_id": "<missing>"},
        {"draft_id": ""},
        {"turn_id": 7},
        {"tenant_id": None},
        {"principal": "<missing>"},
        {"principal": {"groups": []}},
        {"principal": {"user_id": ""}},
        {"principal": {"user_id": "u", "groups": "analysts"}},
        {"principal": {"user_id": "u", "groups": ["a", 1]}},
        {"kind": "essay"},
        {"kind": ["answer"]},
        {"output": "<missing>"},
        {"output": None},
        {"output": [1]},
        {"attempt": "<missing>"},
        {"attempt": -1},
        {"attempt": True},
        {"attempt": 1.0},
        {"retrieval": {"kind": "DOC", "id": 1}},
        {"retrieval": [1]},
        {"retrieval": [{"kind": "XYZ", "id": 1}]},
        {"retrieval": [{"kind": ["DOC"], "id": 1}]},
        {"retrieval": [{"kind": {"DOC": 1}, "id": 1}]},
        {"retrieval": [{"kind": None, "id": 1}]},
        {"retrieval": [{"kind": "doc", "id": 1}]},
        {"retrieval": [{"kind": "DOC", "id": "1"}]},
        {"retrieval": [{"kind": "DOC", "id": -1}]},
    ],
)
def test_malformed_fields(changes: dict[str, Any]) -> None:
    assert rejected(mutate(**changes)) == "malformed_envelope"


@pytest.mark.parametrize("name", ["draft_id", "turn_id", "tenant_id"])
def test_a_nul_in_an_id_is_malformed(name: str) -> None:
    """Found by scripts/chaos (hostile input): a NUL in tenant_id reached the Postgres query
    and came back as an ``internal_error`` dead letter; it is bad input, said as such."""
    env = envelope(good_answer())
    env[name] = "acme\x00x" if name == "tenant_id" else env[name] + "\x00"
    key = env["turn_id"].encode() if name == "turn_id" else b"t-1"
    result = parse(env, key)
    assert isinstance(result, EnvelopeRejection)
    assert (result.error_class, result.message) == (
        "malformed_envelope",
        f"{name} contains a NUL character",
    )


def test_key_must_equal_turn_id() -> None:
    assert rejected(envelope(good_answer()), key=b"t-2") == "malformed_envelope"
    assert rejected(envelope(good_answer()), key=None) == "malformed_envelope"
    assert rejected(envelope(good_answer()), key=b"\xff") == "malformed_envelope"


def test_groups_null_or_missing_means_none_and_extras_are_ignored() -> None:
    env = envelope(good_answer())
    env["principal"] = {"user_id": "u", "groups": None, "role": "x"}
    env["future_field"] = {"x": 1}
    draft = parse(env)
    assert isinstance(draft, Draft)
    assert draft.principal.groups == ()
    del env["principal"]["groups"]
    assert parse(env).principal.groups == ()


def test_retrieval_null_vs_empty() -> None:
    env = envelope(good_answer())
    env["retrieval"] = None
    assert parse(env).retrieval_set() is None
    env["retrieval"] = []
    assert parse(env).retrieval_set() == frozenset()


def test_string_output_is_kept_for_the_canonicalizer() -> None:
    assert parse(mutate(output="```json\n{}\n```")).output == "```json\n{}\n```"


def test_messages_carry_no_values() -> None:
    env = mutate(kind="[DOC-4242] secret")
    result = parse(env)
    assert isinstance(result, EnvelopeRejection)
    assert "4242" not in result.message


def test_big_integers_stay_exact() -> None:
    huge = 2**80 + 1
    env = envelope({"answer_markdown": "x", "citations": [{"kind": "OBS", "id": huge}]})
    draft = parse(env)
    assert draft.output["citations"][0]["id"] == huge


def test_unreadable_numbers_fail_the_output_not_the_envelope() -> None:
    raw = json.dumps(envelope({"answer_markdown": "x", "claims": []}))
    for literal in ("NaN", "Infinity", "1e999", "1" * 1200):
        text = raw.replace('"claims": []', f'"claims": [{{"text": "c", "confidence": {literal}}}]')
        draft = parse(text.encode())
        assert isinstance(draft, Draft), literal
        failures = validate_output("answer", draft.output)
        assert isinstance(failures, list)
        assert [f.path for f in failures] == ["claims[0].confidence"]


def test_deep_output_is_schema_invalid_not_a_crash() -> None:
    deep = "[" * 5000 + "]" * 5000
    raw = json.dumps(envelope({"answer_markdown": "x"})).replace('"x"', '"x", "deep": ' + deep)
    draft = parse(raw.encode())
    assert isinstance(draft, Draft)
    failures = validate_output("answer", draft.output)
    assert isinstance(failures, list)
    assert failures[0].detail == "nesting deeper than 64 levels"


def test_cap_depth_ignores_brackets_in_strings() -> None:
    text = '{"a": "[[[{{", "b": [[[1]]]}'
    assert cap_depth(text, cap=3) == '{"a": "[[[{{", "b": [[[]]]}'
