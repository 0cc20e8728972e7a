"""Markdown blocks as a CommonMark renderer shows them (contract §3.7): which hold prose, which
are table rows, which are exempt from needing a citation.

The first half of finding assertion sentences (``worker.core.claims.sentences`` splits each block).

The block structure is CommonMark 0.31.2 with the GFM table extension, read by pulldown-cmark
(``pyromark``; ``docs/decisions.md`` has the choice and the figures), checked against cmark-gfm,
the contract's reference renderer, by ``tests/unit/core/claims/test_blocks_cmark_gfm.py``.
Decisions:

- Prose blocks: every paragraph, wherever it is (a list item, a block quote, a lazy continuation
  line), and the inline content of a tight list item. A block's segments are its lines' content
  (container markers excluded; a soft or hard line break ends a segment); a sentence never
  crosses a block.
- Table rows: one block each (one unit, not split), from the row's first non-space character to
  its last cell a renderer shows (GFM drops cells past the header's count); the header row is
  marked ``header`` (exempt), the delimiter row is none. A row needs no leading pipe; a ``|``
  line without a delimiter row under it is a paragraph. Where pulldown-cmark and cmark-gfm
  disagree on a table (``docs/decisions.md``), the reader follows cmark-gfm.
- Headings (ATX and setext): marked ``heading`` (exempt).
- Exempt, so no block at all: fenced and indented code (a fence ends where the renderer ends it:
  at its closer, at its container's end, or at the end); a paragraph that is one code span; a
  paragraph of images only; link reference definitions; thematic breaks; HTML comments.
- An HTML block is prose where a browser shows its text: outside tags, comments, processing
  instructions, declarations and CDATA, and outside ``<script>``, ``<style>``, ``<pre>`` and
  ``<textarea>`` elements (hidden, or preformatted like code). A block of comments alone is no
  block; a claim cannot hide from the check inside a ``<div>`` or after a comment on its line.

This module is the API (``blocks``, ``mask``); ``markdown_reader`` reads the parser's events into
blocks, ``cmark_gfm`` holds where it follows cmark-gfm over pulldown-cmark, ``html_text`` what a
browser shows of an HTML block.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import lru_cache

from worker.core.claims.cmark_gfm import NOT_BLANK
from worker.core.claims.markdown_reader import Block, Reader

__all__ = [
    "BLOCK_STARTS",
    "blocks",
    "mask",
]

#: First characters of a line that may start something other than a paragraph of plain prose
#: (with any whitespace: indentation may make indented code). A one-line text whose first
#: character is none of these, holding no line break, is one paragraph.
BLOCK_STARTS = frozenset("`~#=-*_+|0123456789<[!>\\ \t\r\n\f\v")
#: ``tuple.__new__``: builds a ``Block`` from all its fields without its Python ``__new__``.
_new = tuple.__new__


@lru_cache(maxsize=64)
def blocks(text: str) -> list[Block]:
    """The blocks of ``text``: prose, table rows and headings; code and the like are left out.

    Memoised (callers never change what it returns): a field is read for its sentences, then
    again by rule 5 (``hidden_words``) where it carries a hidden citation."""
    if not text:
        return []
    if text[0] not in BLOCK_STARTS and "\n" not in text and "\r" not in text:
        return [_new(Block, ([(0, len(text))], False, False, False))]
    plain = _plain_paragraphs(text)
    if plain is not None:
        return plain
    reader = Reader(text)
    parsed = text.translate(NOT_BLANK) if "\f" in text or "\v" in text else text
    reader.read(parsed)
    if reader.marks:  # empty list items cmark-gfm keeps open: read again, with them open
        edited = bytearray(parsed.encode())
        for at in reader.marks:
            edited[at] = 0x1F
        reader = Reader(text)
        reader.read(edited.decode(), again=True)
    if not text.isascii():
        return _to_str_offsets(text, reader.blocks)
    return reader.blocks


def _plain_paragraphs(text: str) -> list[Block] | None:
    """The blocks of a text that is plain paragraphs only, without the parser; ``None`` if it
    may be more. Every line that is not empty starts with none of ``BLOCK_STARTS`` (so it opens
    no block and continues no container: there is none), and there is no ``|`` (no table), no
    backslash (no hard break or escape to leave out) and no ``\r``: then each run of lines
    between empty ones is a paragraph, each line one segment."""
    if "|" in text or "\\" in text or "\r" in text:
        return None
    out: list[Block] = []
    segments: list[tuple[int, int]] = []
    at = 0
    for line in text.split("\n"):
        end = at + len(line)
        if not line:
            if segments:
                out.append(_new(Block, (segments, False, False, False)))
                segments = []
        elif line[0] in BLOCK_STARTS:
            return None
        else:
            segments.append((at, end))
        at = end + 1
    if segments:
        out.append(_new(Block, (segments, False, False, False)))
    return out


def _to_str_offsets(text: str, found: list[Block]) -> list[Block]:
    """The blocks with the parser's UTF-8 byte offsets turned into ``str`` indices: every offset
    sorted once, then one decoding walk over the text (linear)."""
    offsets = sorted({o for block in found for seg in block.segments for o in seg})
    raw = text.encode()
    chars: list[int] = []
    byte_at = char_at = 0
    for offset in offsets:
        char_at += len(raw[byte_at:offset].decode())
        byte_at = offset
        chars.append(char_at)

    def at(offset: int) -> int:
        return chars[bisect_left(offsets, offset)]

    return [block._replace(segments=[(at(s), at(e)) for s, e in block.segments]) for block in found]


def mask(text: str, segments: list[tuple[int, int]]) -> str:
    """The text from the first segment to the last, blanking what lies between (newlines kept)."""
    if len(segments) == 1:
        return text[segments[0][0] : segments[0][1]]
    parts: list[str] = []
    cursor = segments[0][0]
    blanked: dict[str, str] = {}  # each distinct gap blanked once (most repeat: ``\n> ``)
    for seg_start, seg_end in segments:
        if seg_start > cursor:
            gap = text[cursor:seg_start]
            blank = blanked.get(gap)
            if blank is None:
                blank = blanked[gap] = "\n".join([" " * len(line) for line in gap.split("\n")])
            parts.append(blank)
        parts.append(text[seg_start:seg_end])
        cursor = seg_end
    return "".join(parts)
