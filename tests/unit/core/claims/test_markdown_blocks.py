"""The block structure of rule 7 (contract v3): CommonMark 0.31.2 + GFM tables, exact spans.

Each case is a place where the hand-written line scanner that came before and a renderer
differed, or an exempt position of rule 7; ``test_rule7_block_units.py`` runs the same shapes
through ``check`` for the units' statuses.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from worker.core.claims import markdown as markdown_blocks
from worker.core.claims.markdown import BLOCK_STARTS, blocks, mask
from worker.core.claims.markdown_reader import Block, Reader
from worker.core.claims.sentences import has_assertion, sentence_spans

FALCON = "Falcon is priced at 4.2B [DOC-9]."


def texts(markdown: str) -> list[str]:
    return [markdown[s:e] for s, e in sentence_spans(markdown)]


# --- containers end a fence; a rule under a quote is a rule -------------------------------------


def test_a_fence_opened_in_a_quote_ends_with_the_quote() -> None:
    md = f"> ```\n> code\n\n2. {FALCON}"
    assert sentence_spans(md) == [(17, 50)]
    assert texts(md) == [FALCON]


def test_a_fence_opened_in_a_list_item_ends_with_the_item() -> None:
    md = f"1. a [OBS-1].\n   ```\n   x\n2. {FALCON}"
    assert texts(md) == ["a [OBS-1].", FALCON]


def test_a_fence_opened_on_a_list_marker_line_is_code_up_to_the_next_item() -> None:
    md = f"- ```\n  Hidden in code [DOC-2].\n- {FALCON}"
    assert blocks(md) == [Block([(len(md) - len(FALCON), len(md))])]
    assert texts(md) == [FALCON]


def test_a_quote_then_a_dash_line_is_a_quote_and_a_thematic_break() -> None:
    md = f"> {FALCON}\n---"
    assert blocks(md) == [Block([(2, 2 + len(FALCON))])]
    assert sentence_spans(md) == [(2, 2 + len(FALCON))]


def test_a_paragraph_then_a_dash_line_is_a_setext_heading() -> None:
    md = f"{FALCON}\n---"
    assert blocks(md) == [Block([(0, len(FALCON))], heading=True)]
    assert sentence_spans(md) == []


def test_a_lazy_continuation_line_joins_the_quoted_paragraph() -> None:
    md = "> Falcon is priced\nat 4.2B [DOC-9]. It closed [OBS-1]."
    assert blocks(md) == [Block([(2, 18), (19, len(md))])]
    assert texts(md) == ["Falcon is priced\nat 4.2B [DOC-9].", "It closed [OBS-1]."]


# --- tables ------------------------------------------------------------------------------------


def test_a_table_without_leading_pipes_is_a_table_with_one_unit_per_row() -> None:
    md = "Metric | Value\n--|--\np95 | 840 ms [OBS-1001]\np50 | 180 ms"
    assert blocks(md) == [
        Block([(0, 14)], row=True, header=True),
        Block([(21, 44)], row=True),
        Block([(45, 57)], row=True),
    ]
    assert texts(md) == ["p95 | 840 ms [OBS-1001]", "p50 | 180 ms"]


def test_an_ordinary_table_header_is_no_unit() -> None:
    md = "| Metric | Value |\n|---|---|\n| p95 | 840 ms [OBS-1001] |"
    assert texts(md) == ["| p95 | 840 ms [OBS-1001] |"]


def test_a_pipe_line_without_a_delimiter_row_is_a_paragraph() -> None:
    md = f"| {FALCON}"
    assert blocks(md) == [Block([(0, len(md))])]
    assert texts(md) == [md]
    md = "| a | b |\n| Falcon is priced at 4.2B. |"
    assert blocks(md) == [Block([(0, 9), (10, len(md))])]


def test_a_table_in_a_quote_keeps_its_rows_without_markers() -> None:
    md = "> | a | b |\n> |---|---|\n> | c [OBS-1] | d |"
    assert texts(md) == ["| c [OBS-1] | d |"]


# --- exempt positions --------------------------------------------------------------------------


def test_a_link_reference_definition_is_no_unit() -> None:
    md = f'[falcon]: https://example.com/f "{FALCON}"\n\nIt closed [OBS-1].'
    assert texts(md) == ["It closed [OBS-1]."]


def test_an_image_on_its_own_line_is_no_unit() -> None:
    md = f"![{FALCON}](chart.png)\n\n![a](b.png) ![c](d.png)\n\nIt closed [OBS-1]."
    assert texts(md) == ["It closed [OBS-1]."]


def test_an_image_inside_prose_leaves_the_prose_a_unit() -> None:
    md = "See ![chart](c.png): Falcon is priced at 4.2B."
    assert texts(md) == [md]


def test_code_indented_fenced_or_a_lone_code_span_is_no_unit() -> None:
    md = f"    {FALCON}\n\n```\n{FALCON}\n```\n\n`{FALCON}`\n\n~~~\nunclosed {FALCON}"
    assert blocks(md) == []
    assert not has_assertion(md)
    assert texts(f"Run `x` now. `{FALCON}` and more.") == ["Run `x` now.", f"`{FALCON}` and more."]


def test_html_comments_and_thematic_breaks_are_no_unit() -> None:
    md = f"<!-- {FALCON} -->\n\n***\n\n<script>\n{FALCON}\n</script>\n\nIt closed [OBS-1]."
    assert texts(md) == ["It closed [OBS-1]."]


def test_a_shown_html_block_is_prose_outside_its_tags() -> None:
    md = f"<div>\n<b>{FALCON}</b>\n</div>"
    assert blocks(md) == [Block([(9, 9 + len(FALCON))])]
    assert texts(md) == [FALCON]


def test_headings_atx_and_setext_are_marked() -> None:
    md = "# Title [OBS-1]\n\nSub\n===\n\nBody [OBS-2]."
    assert blocks(md) == [
        Block([(2, 15)], heading=True),
        Block([(17, 20)], heading=True),
        Block([(26, 39)]),
    ]
    assert texts(md) == ["Body [OBS-2]."]


# --- offsets -----------------------------------------------------------------------------------


def test_offsets_are_str_indices_of_the_original_text() -> None:
    md = "> Zürich — 東京 [OBS-1].\n> Ünïcode 🚢 line.\n\n| é | ü |\n|---|---|\n| ß 🚢 | ø |"
    assert texts(md) == ["Zürich — 東京 [OBS-1].", "Ünïcode 🚢 line.", "| ß 🚢 | ø |"]
    (para, header, row) = blocks(md)
    assert [md[s:e] for s, e in para.segments] == ["Zürich — 東京 [OBS-1].", "Ünïcode 🚢 line."]
    assert mask(md, para.segments) == "Zürich — 東京 [OBS-1].\n  Ünïcode 🚢 line."
    assert header.header
    assert md[slice(*row.segments[0])] == "| ß 🚢 | ø |"


def test_carriage_returns_end_lines_as_in_commonmark() -> None:
    md = "A [OBS-1].\r\n\r\n    code [DOC-2].\r\n\r\nB [OBS-3]."
    assert texts(md) == ["A [OBS-1].", "B [OBS-3]."]


LINE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@given(LINE)
@settings(max_examples=500, deadline=None)
@example("x")
@example("Falcon is priced at 4.2B.  ")
@example("é [OBS-1]")
def test_the_one_line_fast_path_is_what_the_parser_gives(line: str) -> None:
    """A one-line text starting with none of ``BLOCK_STARTS`` skips the parser: it must be the
    one paragraph the parser finds there, up to trailing whitespace."""
    if not line or line[0] in BLOCK_STARTS or "\n" in line or "\r" in line:
        return
    fast = blocks(line)
    assert len(fast) == 1
    reader = Reader(line)  # the parser's reading, bypassing the fast path
    reader.read()
    parsed = markdown_blocks._to_str_offsets(line, reader.blocks)
    assert len(parsed) <= 1
    if parsed:  # a line of whitespace or of markup alone (``&nbsp;``) may give no content
        (start, end), (p_start, p_end) = fast[0].segments[0], parsed[0].segments[0]
        assert (start, line[start:end].rstrip()) == (p_start, line[p_start:p_end].rstrip())


# --- where pulldown-cmark and cmark-gfm differ: the reader follows cmark-gfm -------------------


def test_a_table_without_a_leading_pipe_interrupts_a_paragraph() -> None:
    md = "Intro [OBS-1]\nMetric | Value\n--|--\nFalcon | 4.2B"
    assert blocks(md) == [
        Block([(0, 13)]),
        Block([(14, 28)], row=True, header=True),
        Block([(35, 48)], row=True),
    ]
    assert texts(md) == ["Intro [OBS-1]", "Falcon | 4.2B"]


def test_table_lines_lazily_continuing_a_quote_are_its_paragraph() -> None:
    md = "> Intro [OBS-1].\n| Falcon is priced at 4.2B |\n|---|\n| row |"
    assert blocks(md) == [Block([(2, 16), (17, 45), (46, 51), (52, 59)])]
    assert texts(md) == ["Intro [OBS-1].", "| Falcon is priced at 4.2B |\n|---|\n| row |"]


def test_a_lazy_delimiter_row_makes_no_table_in_a_nested_quote() -> None:
    md = "> > Intro.\n> a | b\n> -|-"
    assert [b.row for b in blocks(md)] == [False]


def test_cells_past_the_headers_count_are_not_in_the_row() -> None:
    md = "| a | b |\n|---|---|\n| c [OBS-1] | d | hidden cell |"
    assert texts(md) == ["| c [OBS-1] | d |"]


def test_a_delimiter_row_pulldown_cmark_accepts_but_gfm_does_not_leaves_prose() -> None:
    md = "| Falcon is priced at 4.2B |\n- --|--"
    assert texts(md) == ["| Falcon is priced at 4.2B |"]


def test_text_after_a_comment_on_its_line_is_prose() -> None:
    md = "<!-- note --> Falcon is priced at 4.2B [DOC-9].\n\nNext [OBS-1]."
    assert texts(md) == [FALCON, "Next [OBS-1]."]


def test_a_backslash_escape_opening_a_line_stays_in_its_segment() -> None:
    md = "> \\* Falcon is priced.\n> \\# Next."
    assert [md[s:e] for s, e in blocks(md)[0].segments] == ["\\* Falcon is priced.", "\\# Next."]


PLAIN = st.lists(
    st.sampled_from(["", "Falcon is priced at 4.2B [DOC-9].", "a *b* `c` d", "x  ", "é ü.", "(p)"]),
    max_size=8,
).map("\n".join)


@given(PLAIN)
@settings(max_examples=300, deadline=None)
@example("a\n\nb\nc")
@example("x  \ny")
def test_plain_paragraphs_without_the_parser_are_what_the_parser_gives(text: str) -> None:
    """Paragraphs of lines that open no block are read without the parser: the same blocks,
    up to whitespace the parser leaves at a line's end (blanked by ``mask`` either way)."""
    fast = markdown_blocks._plain_paragraphs(text)
    if fast is None or not text:
        return
    reader = Reader(text)
    reader.read()
    parsed = markdown_blocks._to_str_offsets(text, reader.blocks)
    assert [[(s, text[s:e].rstrip()) for s, e in b.segments] for b in fast] == [
        [(s, text[s:e].rstrip()) for s, e in b.segments] for b in parsed
    ]
    assert [mask(text, b.segments).rstrip() for b in fast] == [
        mask(text, b.segments).rstrip() for b in parsed
    ]
