"""The look-alike gate's shortcuts against the plain scans they stand for.

``json_may_hold`` answers for a whole output from its JSON text and skips JSON's own escapes
(``\\n``…); ``redact_text`` returns text with none of ``[``, ``&``, ``\\`` as it is. Both must
never miss a look-alike the plain per-string scan finds.
"""

from __future__ import annotations

import json
import re

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.citations.lookalikes import (
    _OTHER_STARTS,
    _match_at,
    json_may_hold,
    lookalike_spans,
)
from worker.core.citations.redaction import _redact_passes, redact_text

PIECES = [
    "a", "DOC", "doc", "OBS", "EVT", "-", "–", "7", "３", " ", "\n", "\t", "\r", "\\", "\\[",
    "\\]", "\\u005b", "\\n", "[", "]", "［", "］", "【", "】", "&#91;", "&#93;", "&lsqb;", "&",
    "\u200b", "О", '"', "/", "\b", "\f", "\u0001", "[DOC-5]", "[OBS-12]", "[DOC-", "x",
    "*", "_", "~", "`", "> ", "\n> ", "<b>", "</b>", "<!-- -->", "\u3164", "Ö", "\u202e",
    "\u2066", "ᴅ", "︗", "\\\n",
]  # fmt: skip
TEXT = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)
VISIBLE = frozenset({CitationRef(EvidenceKind.OBS, 12)})


@given(st.lists(TEXT, min_size=1, max_size=4))
@settings(max_examples=800, deadline=None)
@example(["Line one.\nLine two [DOC\n-5]."])
@example(["Plain\ntext\twith escapes &#91;DOC-5&#93;"])
def test_json_may_hold_never_misses_a_lookalike(strings: list[str]) -> None:
    output = {"answer_markdown": strings[0], "claims": [{"text": s} for s in strings[1:]]}
    if any(lookalike_spans(s) for s in strings):
        assert json_may_hold(orjson.dumps(output))


@given(TEXT | st.text(max_size=40))
@settings(max_examples=800, deadline=None)
@example("Document 5")
@example("Title with &#91;DOC-5&#93;")
def test_redact_text_shortcut_equals_the_full_passes(text: str) -> None:
    assert redact_text(text, VISIBLE) == _redact_passes(text, VISIBLE)


@pytest.mark.parametrize(
    "text",
    [
        "Refunds tripled [DOC-*9002*].",  # renders [DOC-9002], the digits emphasised
        "Refunds tripled [**DOC-9002**].",
        "Refunds tripled [DOC-_9002_].",
        "Refunds tripled [__DOC-9002__].",
        "Refunds tripled [DOC-~~9002~~].",
        "Refunds tripled [`DOC-9002`].",
        "> Refunds tripled [DOC-\n> 9002].",  # one block-quote paragraph: [DOC- 9002]
    ],
)
def test_inline_markdown_inside_a_token_is_still_a_lookalike(text: str) -> None:
    (span,) = lookalike_spans(text)
    assert "9002" in text[span[0] : span[1]]
    assert json_may_hold(orjson.dumps({"answer_markdown": text}))
    assert "9002" not in redact_text(text, VISIBLE)


@pytest.mark.parametrize(
    "text",
    [
        "the [obs_1] column",  # ``_`` between word characters is text, not emphasis
        "see *[DOC-5]* and [DOC-5]",  # a real token, emphasised around it
        "a [b_c] list",
        "> quote\n> [DOC-5] cited",
    ],
)
def test_markdown_around_or_beside_a_token_is_no_lookalike(text: str) -> None:
    assert lookalike_spans(text) == []


FAST_PIECES = [
    "[", "]", "DOC", "doc", "D", "O", "C", "OBS", "EVT", "E", "v", "t", "-", "5", "0", "*", "_",
    "~", "`", ">", " ", "\n", "\r", "\t", "\x0b", "\x1c", "a", "x", ".", "&#91;", "&lsqb;", "\\[",
    "\\u005b", "<b>", "é", "【", "】", "\u200b", "[DOC-5]", "&#93;", "&rsqb;", "\\]", "&#8203;",
    "&amp;", "<!-- -->", "</b>", "\\u005d", "ᴅ", "５", "\u3000", "&#x5B;", "\\\n", "🄪",
    "\u1680", "٣", "Ö", "\u0301", "\u2028", "\u3164", "【DOC", "[DOC-", "[ᴅᴏᴄ-", "4]",
]  # fmt: skip
_REAL_TOKEN = re.compile(r"\[(?:OBS|DOC|EVT)-[0-9]+\]")


def _reference_spans(text: str) -> list[tuple[int, int]]:
    """``lookalike_spans`` without its fast path: the automaton tried at every place a
    look-alike may start (every ``[``, bracket look-alike, ``&`` and ``\\``)."""
    spans: list[tuple[int, int]] = []
    after = 0
    for at, c in enumerate(text):
        if at < after or c not in "[&\\" + _OTHER_STARTS or _REAL_TOKEN.match(text, at):
            continue
        end = _match_at(text, at, json=False)
        if end is not None:
            if text.startswith("\\[", at) and _REAL_TOKEN.fullmatch(text, at + 1, end):
                continue
            spans.append((at, end))
            after = end
    return spans


@given(st.lists(st.sampled_from(FAST_PIECES), max_size=30).map("".join))
@settings(max_examples=2000, deadline=None)
@example("[DOC-\n> 5]")
@example("[D*_O_C-5]")
@example("[DOC_-5]")
@example("[DOC*_-5]")
@example("[DOC-5 5]")
def test_the_fast_path_finds_what_the_automaton_finds(text: str) -> None:
    """The C-level regexes (``_plain_patterns``) and the candidate filter change no answer."""
    assert lookalike_spans(text) == _reference_spans(text)
    if _reference_spans(text):
        assert json_may_hold(orjson.dumps({"answer_markdown": text}))
        assert json_may_hold(json.dumps({"answer_markdown": text}).encode())
