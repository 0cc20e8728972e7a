"""Look-alikes a renderer draws as a citation (contract rule 2), and removals that would leave one
(rule 5).

Rule 2: inline Markdown (emphasis, code, raw HTML), bidi controls and other format or
default-ignorable characters, accents, letter and bracket look-alikes and a block quote's
continuation line inside a token still show a reader an id: the draft fails ``schema_invalid``
with the string's path, and nothing of it is published. Rule 5: a published string is rescanned
after a removal, and a look-alike the removal left goes too (``[[DOC-9]DOC-9]`` without
``[DOC-9]`` would read ``[ DOC-9]``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from fixtures import ALICE, DOC_SEALED, message, run_output, topics
from hypothesis import example, given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.citations.lookalike_units import fold as _fold
from worker.core.citations.lookalikes import (
    _CLOSE_NAMES,
    _OPEN_NAMES,
    _OTHER_STARTS,
    BRACKET_LIKE,
    lookalike_spans,
)
from worker.core.citations.redaction import remove_tokens, without_lookalikes
from worker.core.citations.tokens import scan_tokens
from worker.core.turns.machine import Decision

HIDDEN_ID = str(DOC_SEALED.id)  # 4242: sealed, nobody may see it

#: Each shows a reader ``[DOC-4242]``; none is a token of the grammar.
RENDERED_AS_A_TOKEN = [
    "[DOC-*4242*]",
    "[DOC-`4242`]",
    "[**DOC**-4242]",
    "[DOC-_4242_]",
    "[~~DOC~~-4242]",
    "[DOC-\u202e4242]",  # right-to-left override
    "[\u2066DOC-4242\u2069]",  # left-to-right isolate ... pop directional isolate
    "[DOC\u2067-4242\u2068]",  # right-to-left isolate, first strong isolate
    "[DOC\u200e-4242\u200f]",  # left-to-right and right-to-left marks
    "[DOC-\u00ad4242]",  # soft hyphen
    "[DOC-\u20604242]",  # word joiner
    "[DOC-\ufeff4242]",  # zero-width no-break space
    "[DOC-\U000e00414242]",  # a tag character
    "[DOC-\ufe0f4242]",  # a variation selector
    "[DOC-\u31644242]",  # Hangul filler: default-ignorable, drawn as nothing
    "[DOC-\u28004242]",  # Braille blank: drawn as a space
    "[DÖC-4242]",  # an accent (precomposed)
    "[DO\u0301C-4242]",  # an accent (combining)
    "[ᴅᴏᴄ-4242]",  # small capitals
    "[ꓓꓳꓚ-4242]",  # Lisu letters
    "︗DOC-4242︘",  # vertical presentation forms of lenticular brackets
    "﹝DOC-4242﹞",  # small tortoise-shell brackets
    "[DOC-<b>4242</b>]",  # raw HTML renders as formatting
    "[DOC-<span class=x>4242</span>]",
    "[DOC-<!-- id -->4242]",
    "[DOC-\\\n4242]",  # a hard line break
    "[DOC-\n4242]",
]
#: The same inside a block quote: the token goes on on the quote's next line.
IN_A_QUOTE = ["> Falcon costs 4.2B [DOC-\n> 4242].", "> > Falcon costs 4.2B [DOC\n> > -4242]."]


def _decide(output: Any, **kw: Any) -> Decision:
    return run_output(output, principal=ALICE, **kw)


def _user_facing(decision: Decision) -> list[dict[str, Any]]:
    return [json.loads(o.value) for o in decision.outbound if o.topic.value != "ledger"]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _codes_paths(decision: Decision) -> list[tuple[str, str | None]]:
    topic = "regenerate" if "regenerate" in topics(decision) else "could_not_ground"
    return [(r["code"], r.get("path")) for r in message(decision, topic)["reasons"]]


@pytest.mark.parametrize("lookalike", RENDERED_AS_A_TOKEN)
def test_a_lookalike_the_renderer_draws_as_a_token_is_found_whole(lookalike: str) -> None:
    assert lookalike_spans(f"Falcon costs 4.2B {lookalike}.") == [(18, 18 + len(lookalike))]


@pytest.mark.parametrize(
    ("lookalike", "field"),
    [(x, "claims[0].text") for x in RENDERED_AS_A_TOKEN]
    + [(x, "answer_markdown") for x in IN_A_QUOTE]
    + [
        ("[DOC-*4242*]", "citations[0].quote"),
        ("[\u202eDOC-4242]", "tool_calls_made[1]"),
    ],
)
def test_a_lookalike_fails_the_draft_schema_invalid_at_its_path(lookalike: str, field: str) -> None:
    output: dict[str, Any] = {
        "answer_markdown": "Vessel Aurora entered the northern corridor at 04:10 [OBS-50412].",
        "citations": [{"kind": "OBS", "id": 50412, "quote": "Aurora entered"}],
        "claims": [{"text": "Aurora loitered.", "citations": [{"kind": "OBS", "id": 50418}]}],
        "tool_calls_made": ["query_observations"],
    }
    text = lookalike if lookalike.startswith(">") else f"Falcon costs 4.2B {lookalike}."
    if field == "answer_markdown":
        output["answer_markdown"] = text
    elif field == "claims[0].text":
        output["claims"][0]["text"] = text
    elif field == "citations[0].quote":
        output["citations"][0]["quote"] = text
    else:
        output["tool_calls_made"].append(text)
    decision = _decide(output)
    assert decision.outcome == "regenerate"
    assert _codes_paths(decision) == [("schema_invalid", field)]
    request = message(decision, "regenerate")
    assert "previous_output" not in request  # a schema failure publishes no output
    for value in _user_facing(decision):
        assert HIDDEN_ID not in json.dumps(value, ensure_ascii=False)
    final = _decide(output, attempt=1)
    assert final.outcome == "could_not_ground"
    assert _codes_paths(final) == [("schema_invalid", field)]


@pytest.mark.parametrize(
    "text",
    [
        "See <b>[DOC-4242]</b> for it",  # a real token, formatted around
        "a [DOC-5 1] range",  # digits, a space, digits: no id
        "[DOC <https://example.com/4242>]",  # an autolink shows its text
        "[DOC-&lt;b&gt;4242]",  # an escaped tag is text, drawn as ``<b>``
        "[DOC-<b 4242]",  # not a tag
        "the [obs_1] column",
        "[DO\nC-4242]",  # a line break inside the kind's name
    ],
)
def test_text_a_renderer_does_not_draw_as_a_token_is_no_lookalike(text: str) -> None:
    assert lookalike_spans(text) == []


# --- rule 5: a removal never leaves a look-alike --------------------------------------------------

NINE = CitationRef(EvidenceKind.DOC, 9)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[DOC-9]DOC-9]", ""),  # would be ``[ DOC-9]``
        ("a [[DOC-9]DOC-9] b", "a b"),
        ("[[[DOC-9]DOC-9]DOC-9]", ""),  # two levels: two rescans
        ("[[[[[[[[DOC-9]DOC-9]DOC-9]DOC-9]DOC-9]DOC-9]DOC-9]DOC-9]", " DOC-9DOC-9DOC-9"),
        ("[DOC-5[DOC-9]1]", "[DOC-5 1]"),  # no look-alike: kept as the guard left it
    ],
)
def test_a_removal_leaves_no_lookalike(text: str, expected: str) -> None:
    """Past four rescans (crafted nesting only) every bracket goes: bounded, linear."""
    out = remove_tokens(text, {NINE})
    assert out == expected
    assert lookalike_spans(out) == []
    assert [t for t in scan_tokens(out) if t.ref == NINE] == []


def test_a_published_quote_loses_the_lookalike_a_removal_left() -> None:
    """The quote goes out in ``previous_output`` (its quote did not match: the words
    ``DOC-4242]`` are not the source's); the hidden token's removal must not leave
    ``[ DOC-4242]`` there."""
    for quote in (
        "Aurora entered [[DOC-4242]DOC-4242]the northern corridor",
        "Aurora entered the northern corridor [[DOC-4242]DOC-4242]",
        "Aurora entered the northern corridor [[[DOC-4242]DOC-4242]DOC-4242]",
    ):
        output = {
            "answer_markdown": "Vessel Aurora entered the northern corridor at 04:10 [OBS-50412].",
            "citations": [{"kind": "OBS", "id": 50412, "quote": quote}],
        }
        decision = _decide(output)
        assert decision.outcome == "regenerate"
        assert _codes_paths(decision) == [("quote_mismatch", "citations[0].quote")]
        previous = message(decision, "regenerate")["previous_output"]
        assert previous["citations"][0]["quote"] == "Aurora entered the northern corridor"
        for value in _user_facing(decision):
            for s in _strings(value):
                assert lookalike_spans(s) == [], s
                assert HIDDEN_ID not in s, s


def test_a_cited_unit_beside_a_mixed_group_publishes_no_lookalike() -> None:
    output = {
        "answer_markdown": (
            "Vessel Aurora entered the northern corridor at 04:10 [OBS-50412][[DOC-4242]DOC-4242]."
        ),
        "tool_calls_made": ["lookup [[DOC-4242]OBS-50412] done"],
    }
    decision = _decide(output)
    for value in _user_facing(decision):
        for s in _strings(value):
            assert lookalike_spans(s) == [], s
            assert "[DOC-4242]" not in s, s


PIECES = [
    "a", " ", "\n", "> ", "[", "]", "[DOC-9]", "[DOC-5]", "DOC", "-", "9", "5", "*", "`", "\u202e",
    "<b>", "&#91;", "\\",
]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
@settings(max_examples=600, deadline=None)
@example("[[DOC-9]DOC-9]")
@example("[*[DOC-9]DOC-9*]")
def test_no_removal_from_a_clean_string_leaves_a_lookalike(text: str) -> None:
    if lookalike_spans(text):  # the draft would have failed rule 2
        return
    out = remove_tokens(text, {NINE})
    assert lookalike_spans(out) == []
    assert [t for t in scan_tokens(out) if t.ref == NINE] == []
    assert without_lookalikes(out) == out


def test_every_character_that_folds_to_a_bracket_is_known() -> None:
    """The candidates' C-level search (``_OTHER_STARTS``) and the last resort's bracket list
    (``BRACKET_LIKE``) must hold every character the fold turns into a square bracket."""
    import unicodedata  # noqa: PLC0415 - this test only

    opens, brackets = set(_OTHER_STARTS), set(BRACKET_LIKE)
    for cp in range(0x80, sys.maxunicode + 1):
        c = chr(cp)
        if not unicodedata.decomposition(c) and _fold(c) == c.casefold():
            continue  # no decomposition, no table entry: cannot become a bracket
        folded = _fold(c)
        if "[" in folded:
            assert c in opens, hex(cp)
        if "[" in folded or "]" in folded:
            assert c in brackets, hex(cp)


def test_every_entity_that_spells_a_bracket_is_known() -> None:
    """The C-level searches know the HTML5 entities that spell a bracket by name."""
    from html.entities import html5  # noqa: PLC0415 - this test only

    opens = {k[:-1] for k, v in html5.items() if k.endswith(";") and "[" in _fold(v)}
    closes = {k[:-1] for k, v in html5.items() if k.endswith(";") and "]" in _fold(v)}
    assert opens == set(_OPEN_NAMES.split("|"))
    assert closes == set(_CLOSE_NAMES.split("|"))
    # Without a semicolon no name spells one (only legacy names like ``&amp`` may omit it).
    assert not [k for k, v in html5.items() if not k.endswith(";") and "[" in _fold(v)]
