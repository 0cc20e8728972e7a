"""An adversarial review as a property: two principals over one generated corpus.

Random Markdown answers are built from pieces whose fate is known up front: paragraphs, list
items, table rows, backtick lines that are not fences (all claim units), headings, table header
rows and fenced code (exempt positions, contract v3 rule 7), the shapes a hand-written reader
once read differently from the renderer (fences in containers, setext after a quote, tables
without pipes, CJK stops, questions in parentheses, abbreviations, run-in labels), and now and
then a look-alike of a hidden token. Every piece carries a unique marker word. For each reader,
over every message a reader or the agent sees:

- no token of an id hidden from that reader, no citation look-alike at all, and no hidden id's
  digits in any Unicode form (NFKC), nor a hidden source's title or text;
- no marker of a unit whose only support is hidden from that reader (its words are hedged away),
  nor of an exempt position beside a group of citations all hidden from that reader (rule 5);
- and the same of what cmark-gfm renders of each published string (the renderer in the loop,
  contract v4): no look-alike, no hidden id in any confusable spelling, no hidden marker.

``GW_PROPERTY_SCALE`` multiplies the examples (CI's long step runs ten times as many).
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any
from unittest.mock import patch

import orjson
from fixtures import NOW, POLICY, TENANT, make_draft, scaled
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import CitationRef, EvidenceKind, EvidenceRecord, Principal
from worker.core.citations.lookalikes import lookalike_spans
from worker.core.citations.reading import reader_form
from worker.core.citations.rendered import json_may_show_more, may_show_more, shows_lookalike
from worker.core.citations.tokens import scan_tokens
from worker.core.citations.visible import visible_text
from worker.core.turns.machine import decide
from worker.core.verdict import evaluate, prepare

ALICE = Principal(user_id="alice", groups=("analysts",))
BOB = Principal(user_id="bob", groups=("ops",))
OBS_A, OBS_B = CitationRef(EvidenceKind.OBS, 81001), CitationRef(EvidenceKind.OBS, 81002)
DOC_SHARED = CitationRef(EvidenceKind.DOC, 81010)
DOC_ALICE = CitationRef(EvidenceKind.DOC, 81020)
DOC_BOB = CitationRef(EvidenceKind.DOC, 81030)
OBS_REVOKED = CitationRef(EvidenceKind.OBS, 81040)
EVT_BOB = CitationRef(EvidenceKind.EVT, 81060)
DOC_ELSEWHERE = CitationRef(EvidenceKind.DOC, 81050)  # another tenant's: dangling here
CORPUS = {
    OBS_A: EvidenceRecord(ref=OBS_A, acl=None, text="Aurora entered the corridor."),
    OBS_B: EvidenceRecord(ref=OBS_B, acl=None, text="Aurora met [DOC-81030] near [EVT-81060]."),
    DOC_SHARED: EvidenceRecord(
        ref=DOC_SHARED,
        acl=("group:analysts", "group:ops"),
        title="Index of [DOC-81020] and ［DOC-81030］",
        text="See [DOC-81020] and [DOC-81030].",
    ),
    DOC_ALICE: EvidenceRecord(
        ref=DOC_ALICE, acl=("user:alice",), title="SECRET-TITLE-A", text="SECRET-TEXT-A"
    ),
    DOC_BOB: EvidenceRecord(
        ref=DOC_BOB, acl=("group:ops",), title="SECRET-TITLE-B", text="SECRET-TEXT-B"
    ),
    OBS_REVOKED: EvidenceRecord(
        ref=OBS_REVOKED, acl=None, revoked_at=NOW.replace(year=2025), text="SECRET-REVOKED"
    ),
    EVT_BOB: EvidenceRecord(ref=EVT_BOB, acl=("user:bob",), text="SECRET-EVT"),
}
HIDDEN_FROM = {
    "alice": {DOC_BOB, OBS_REVOKED, EVT_BOB},
    "bob": {DOC_ALICE, OBS_REVOKED},
}
SECRETS = {
    "alice": ("SECRET-TITLE-B", "SECRET-TEXT-B", "SECRET-REVOKED", "SECRET-EVT"),
    "bob": ("SECRET-TITLE-A", "SECRET-TEXT-A", "SECRET-REVOKED"),
}
REFS = [OBS_A, OBS_B, DOC_SHARED, DOC_ALICE, DOC_BOB, OBS_REVOKED, EVT_BOB, DOC_ELSEWHERE]
UNIT_KINDS = ("paragraph", "item", "ticks", "two_groups")
#: The fourth round's shapes (contract v4 rule 5), exempt from needing a citation: a sentence
#: wrapped over lines, a comment, alt text or title, a heading whose group the next line's
#: visible token once joined.
V4_EXEMPT_KINDS = (
    "wrapped_question",
    "wrapped_setext",
    "wrapped_comment",
    "wrapped_alt",
    "wrapped_link_title",
    "heading_then_token_line",
)
EXEMPT_KINDS = ("heading", "table", "code", *V4_EXEMPT_KINDS)
#: Shapes a hand-written reader once read differently from the renderer; each piece's own
#: sentence is hidden-only-or-not on its own, beside a visible sentence or container.
RENDERER_KINDS = (
    "quote_fence",  # a fence opened in a block quote ends with the quote
    "item_fence",  # a fence opened in a list item ends with the item
    "setext_quote",  # `> claim` then `---`: a quote and a rule, not a heading
    "pipeless_table",  # a GFM table without leading pipes: one unit per row
    "cjk",  # CJK stops end sentences
    "paren_question",  # a question inside parentheses does not exempt the sentence
    "abbreviation",  # a token after `U.S.` ends the sentence it closes
    "run_in_label",  # a bold run-in label belongs to the sentence after it
)
KINDS = (*UNIT_KINDS, *RENDERER_KINDS, *EXEMPT_KINDS)
LOOKALIKE_FORMS = (
    "[{k}-{d}]",  # replaced below by the look-alike forms (this one is the real token)
    "[{k}-{w}]",
    "［{k}-{i}］",
    "&#91;{k}-{i}&#93;",
    "\\[{k}-{i}\\]",
    "[{lk}-{i}]",
    "[{k}-{i}\u200b]",
    "[{k}-*{i}*]",  # emphasis inside a token
    "[{k}-`{i}`]",  # a code span inside a token
    "[\u202e{k}-{i}]",  # a bidi control inside a token
    "[{k}-[](#){i}]",  # an empty link inside a token (what shows: the token)
    "[{k}-<?x?>{i}]",  # a processing instruction inside a token
    "[{k}-{o}]",  # Cyrillic letters for zeros
    "\u202e[{r}-{rk}]\u202c",  # a right-to-left override draws it forwards
)


def token(ref: CitationRef) -> str:
    return f"[{ref.kind.value}-{ref.id}]"


def lookalike(ref: CitationRef, form: int) -> str:
    wide = "".join(chr(0xFF10 + int(c)) for c in str(ref.id))
    return LOOKALIKE_FORMS[form].format(
        k=ref.kind.value,
        lk=ref.kind.value.lower(),
        i=ref.id,
        d=ref.id,
        w=wide,
        o=str(ref.id).replace("0", "\u041e"),
        r=str(ref.id)[::-1],
        rk=ref.kind.value[::-1],
    )


piece = st.tuples(st.sampled_from(KINDS), st.lists(st.sampled_from(REFS), max_size=2, unique=True))


def render(pieces: list[tuple[str, list[CitationRef]]]) -> tuple[str, dict[str, list[Any]]]:
    """The Markdown, and each marker's kind and refs."""
    blocks: list[str] = []
    markers: dict[str, list[Any]] = {}
    for n, (kind, refs) in enumerate(pieces):
        marker = f"Mk{n}x"
        cites = "".join(token(r) for r in refs)
        markers[marker] = [kind, refs]
        if kind == "paragraph":
            blocks.append(f"{marker} is a fact {cites}.")
        elif kind == "item":
            blocks.append(f"- {marker} is a fact {cites}.")
        elif kind == "table":
            blocks.append(f"| {marker} header {cites} |\n|---|\n| Row{n}x [OBS-81001] |")
        elif kind == "ticks":
            blocks.append(f"```{marker}``` is a fact {cites}.")
        elif kind == "two_groups":  # a visible group, then this piece's group (rule 5)
            blocks.append(f"{marker} is a fact {token(OBS_A)} and so is this {cites}.")
        elif kind == "heading":
            blocks.append(f"## {marker} heading {cites}")
        elif kind == "wrapped_question":
            blocks.append(f"Is {marker} priced\nat 4.2B? {cites}")
        elif kind == "wrapped_setext":
            blocks.append(f"{marker} is priced\nat 4.2B {cites}\n===")
        elif kind == "wrapped_comment":
            blocks.append(f"<!-- {marker} is priced\nat 4.2B {cites} -->")
        elif kind == "wrapped_alt":
            blocks.append(f"![{marker} is priced\nat 4.2B {cites}](c.png)")
        elif kind == "wrapped_link_title":
            blocks.append(f'See [chart].\n\n[chart]: /c "{marker} is priced\nat 4.2B {cites}"')
        elif kind == "heading_then_token_line":
            blocks.append(f"# {marker} is priced {cites}\n{token(OBS_A)} Aurora entered.")
        elif kind == "quote_fence":
            blocks.append(f"> ```\n> code\n\n{marker} is priced at 4.2B {cites}.")
        elif kind == "item_fence":
            blocks.append(f"1. ```\n   code\n\n{marker} is priced at 4.2B {cites}.")
        elif kind == "setext_quote":
            blocks.append(f"> {marker} is a fact {cites}.\n---")
        elif kind == "pipeless_table":
            blocks.append(
                f"Name | Value\n--- | ---\n{marker} fact {cites} | 4\nRow{n}x | 5 [OBS-81001]"
            )
        elif kind == "cjk":
            blocks.append(f"极光进入了走廊{token(OBS_A)}。{marker}是事实{cites}。")
        elif kind == "paren_question":
            blocks.append(f"{marker} is priced at 4.2B (closing in May?) {cites}.")
        elif kind == "abbreviation":
            blocks.append(
                f"Aurora entered the U.S. {token(OBS_A)} Then {marker} is a fact {cites}."
            )
        elif kind == "run_in_label":
            blocks.append(f"**Core idea.** {marker} is a fact {cites}.")
        else:
            blocks.append(f"```text\n{marker} code {cites}\n```")
    return "\n\n".join(blocks), markers


def user_facing_strings(principal: Principal, markdown: str) -> list[str]:
    draft = make_draft({"answer_markdown": markdown}, principal=principal)
    prepared = prepare(draft, POLICY)
    found = {r: CORPUS[r] for r in prepared.refs_to_resolve if r in CORPUS}
    ev = evaluate(prepared, found, POLICY, NOW)
    decision = decide(None, prepared, ev, POLICY, NOW, "test")
    out: list[str] = []
    for o in decision.outbound:
        if o.topic.value == "ledger":
            continue
        value = json.loads(o.value)
        value.pop("event_id", None)
        out.extend(_strings(value))
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)]


PIECES = st.lists(piece, min_size=1, max_size=6)
INJECTED = st.none() | st.tuples(st.integers(1, len(LOOKALIKE_FORMS) - 1), st.integers(0, 7))


@given(pieces=PIECES, injected=INJECTED)
@settings(max_examples=scaled(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_hidden_id_and_no_hedged_words_reach_either_reader(
    pieces: list[tuple[str, list[CitationRef]]], injected: tuple[int, int] | None
) -> None:
    assert_nothing_hidden_reaches_either_reader(pieces, injected)


@given(pieces=PIECES, injected=INJECTED)
@settings(max_examples=scaled(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_nothing_hidden_reaches_either_reader_by_the_one_pass_paths_for_many_hidden_ids(
    pieces: list[tuple[str, list[CitationRef]]], injected: tuple[int, int] | None
) -> None:
    """The same, with every hidden id and title looked for as a draft hiding many has them
    looked for (a string's tokens read once, the titles in one automaton) rather than one by
    one: the thresholds at 0, so the corpus's two or three hidden refs take those paths."""
    with (
        patch("worker.core.citations.tokens.FEW_HIDDEN", 0),
        patch("worker.core.claims.redacted.FEW_HIDDEN", 0),
        patch("worker.core.citations.rendered.FEW_TITLES", 0),
    ):
        assert_nothing_hidden_reaches_either_reader(pieces, injected)


def assert_nothing_hidden_reaches_either_reader(
    pieces: list[tuple[str, list[CitationRef]]], injected: tuple[int, int] | None
) -> None:
    markdown, markers = render(pieces)
    if injected is not None:
        form, ref_index = injected
        markdown += f"\n\nInjected claim {lookalike(REFS[ref_index], form)} [OBS-81001]."
    for principal in (ALICE, BOB):
        hidden = HIDDEN_FROM[principal.user_id]
        strings = user_facing_strings(principal, markdown)
        for s in strings:
            assert lookalike_spans(s) == [], s
            assert not shows_lookalike(s), s
            assert not {t.ref for t in scan_tokens(s)} & hidden, s
            shown = reader_form(visible_text(s))
            for ref in hidden:
                assert reader_form(str(ref.id)) not in shown, (principal.user_id, ref, s)
            flat = unicodedata.normalize("NFKC", s)
            for ref in hidden:
                assert str(ref.id) not in flat, (principal.user_id, ref, s)
            for secret in SECRETS[principal.user_id]:
                assert secret not in s
        blob = "\n".join([*strings, *(visible_text(s) for s in strings)])
        for marker, (kind, refs) in markers.items():
            supported = kind in {"two_groups", "cjk", "abbreviation"} or any(
                r not in hidden and r != DOC_ELSEWHERE for r in refs
            )
            hidden_only = bool(refs) and set(refs) <= hidden
            if (
                kind in UNIT_KINDS + RENDERER_KINDS
                and refs
                and not supported
                and set(refs) & hidden
            ):
                assert marker not in blob, (principal.user_id, marker, markdown)
            if (
                kind in (*RENDERER_KINDS, "two_groups") and hidden_only
            ):  # its own group is hidden-only
                assert marker not in blob, (principal.user_id, marker, markdown)
            if kind in EXEMPT_KINDS and hidden_only:  # a header, heading or code line (rule 5)
                assert marker not in blob, (principal.user_id, marker, markdown)
    assert TENANT == "acme"


# --- rule 6b: words only a hidden source supports ------------------------------------------------

VISIBLE = CitationRef(EvidenceKind.OBS, 82001)
SECRET_OF = {
    "alice": CitationRef(EvidenceKind.DOC, 82030),  # hidden from alice: bob's
    "bob": CitationRef(EvidenceKind.DOC, 82020),  # hidden from bob: alice's
}
SUPPORT_CORPUS = {
    VISIBLE: EvidenceRecord(
        ref=VISIBLE, acl=None, text="Aurora entered the northern corridor at dawn on 4 May."
    ),
    SECRET_OF["bob"]: EvidenceRecord(
        ref=SECRET_OF["bob"],
        acl=("user:alice",),
        title="Zephyr memo",
        text="Zephyr lattice ledgers drifted 37 percent overnight across kestrel depots.",
    ),
    SECRET_OF["alice"]: EvidenceRecord(
        ref=SECRET_OF["alice"],
        acl=("group:ops",),
        title="Cobalt memo",
        text="Cobalt manifests reconciled 61 harbour tariffs before the quarterly audit.",
    ),
}
_ALICE_HIDDEN = "cobalt manifests reconciled 61 harbour tariffs before the quarterly audit"
_BOB_HIDDEN = "zephyr lattice ledgers drifted 37 percent overnight across kestrel depots"
HIDDEN_WORDS = {"alice": _ALICE_HIDDEN.split(" "), "bob": _BOB_HIDDEN.split(" ")}
#: Stop words of the measure: a sentence of only these says nothing.
NOT_CONTENT = ("the", "before", "across", "percent")


@given(
    picks=st.lists(st.integers(0, 9), min_size=3, max_size=8),
    visible_first=st.booleans(),
    reader=st.sampled_from(["alice", "bob"]),
)
@settings(max_examples=scaled(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_words_only_a_hidden_source_supports_are_never_grounded_beside_a_visible_one(
    picks: list[int], visible_first: bool, reader: str
) -> None:
    """A sentence made of a hidden source's words, citing it beside a visible source (so the
    group is not hidden-only), lost a citation and is not supported by the visible one alone:
    its words go by the policy (rule 5, contract v4), so the reader who may not see that source
    gets the hedge sentence in its place, never the words."""
    assume(any(HIDDEN_WORDS[reader][i] not in NOT_CONTENT for i in picks))
    principal = ALICE if reader == "alice" else BOB
    secret = SECRET_OF[reader]
    words = " ".join(HIDDEN_WORDS[reader][i] for i in dict.fromkeys(picks))
    cites = token(VISIBLE) + token(secret) if visible_first else token(secret) + token(VISIBLE)
    markdown = f"Aurora entered the northern corridor at dawn {token(VISIBLE)}. {words} {cites}."
    draft = make_draft({"answer_markdown": markdown}, principal=principal)
    prepared = prepare(draft, POLICY)
    found = {r: SUPPORT_CORPUS[r] for r in prepared.refs_to_resolve if r in SUPPORT_CORPUS}
    ev = evaluate(prepared, found, POLICY, NOW)
    assert ev.failures == ()
    decision = decide(None, prepared, ev, POLICY, NOW, "test")
    assert [o.topic.value for o in decision.outbound] == ["validated", "ledger"]
    answer = json.loads(decision.outbound[0].value)
    assert answer["output"]["answer_markdown"] == (
        f"Aurora entered the northern corridor at dawn {token(VISIBLE)}. {POLICY.hedge_sentence}"
    )
    published = decision.outbound[0].value.decode().lower()
    assert str(secret.id) not in published
    assert SUPPORT_CORPUS[secret].title.lower() not in published
    for word in set(words.split()) - set(NOT_CONTENT):
        assert word not in published, word
    # The reader who may see it: the same sentence is supported by what it cites.
    other = BOB if reader == "alice" else ALICE
    seen = make_draft({"answer_markdown": markdown}, principal=other)
    prepared = prepare(seen, POLICY)
    found = {r: SUPPORT_CORPUS[r] for r in prepared.refs_to_resolve if r in SUPPORT_CORPUS}
    assert [f.code.value for f in evaluate(prepared, found, POLICY, NOW).failures] == []


#: What a string may hold where ``may_show_more`` skips the render: tokens, brackets and every
#: ASCII character Markdown gives a meaning to, but ``&``, ``<`` and ``\\`` (which force it).
SKIPPABLE = st.lists(
    st.sampled_from(
        [
            "[DOC-5]", "[OBS-10]", "[DOC-", "]", "[", "(#)", "(", ")", "!", "#", "*", "_", "`",
            "~", "|", ">", "-", "=", ":", "DOC", "OBS", "5", "0", "1", "O", "l", "I", " ", "\n",
            "a", "’", "—", "“", "é", "З", "\u200b", "\u202e", "\u202c", "\u05d0", "[1", "[0",
            '"', "{", "}", "t", "f", "n", "2", "9",
        ]
    ),
    max_size=24,
).map("".join)  # fmt: skip


@given(SKIPPABLE)
@settings(max_examples=scaled(500), deadline=None)
def test_the_render_skip_is_safe(text: str) -> None:
    """Where ``may_show_more`` says no, rendering shows no citation but the string's tokens."""
    if not may_show_more(text):
        assert not shows_lookalike(text, always=True), text


@given(st.lists(SKIPPABLE, max_size=4), st.lists(st.integers(0, 90), max_size=3))
@settings(max_examples=scaled(500), deadline=None)
def test_the_output_wide_render_skip_is_safe(texts: list[str], numbers: list[int]) -> None:
    """Where the output's JSON text clears it (``json_may_show_more``), no string of it shows a
    citation but its tokens, rendered (arrays of numbers and strings beside them, as outputs
    hold them)."""
    output = {"answer_markdown": " ".join(texts), "notes": texts, "observations": numbers}
    if not json_may_show_more(orjson.dumps(output)):
        for text in texts:
            assert not shows_lookalike(text, always=True), text
