"""Markdown blocks as a CommonMark renderer shows them (contract §3.7): which hold prose, which
are table rows, which are exempt from needing a citation.

The first half of finding assertion sentences (``worker.core.sentences`` splits each block).

The block structure is CommonMark 0.31.2 with the GFM table extension, read by pulldown-cmark
(``pyromark``; ``docs/decisions.md`` has the choice and the figures), checked against cmark-gfm,
the contract's reference renderer, by ``tests/unit/core/test_blocks_cmark_gfm.py``. Decisions:

- Prose blocks: every paragraph, wherever it is (a list item, a block quote, a lazy continuation
  line), and the inline content of a tight list item. A block's segments are its lines' content
  (container markers excluded; a soft or hard line break ends a segment); a sentence never
  crosses a block.
- Table rows: one block each (one unit, not split), from the row's first to its last
  non-space character; the header row is marked ``header`` (exempt), the delimiter row is none.
  A row needs no leading pipe; a ``|`` line without a delimiter row under it is a paragraph.
- Headings (ATX and setext): marked ``heading`` (exempt).
- Exempt, so no block at all: fenced and indented code (a fence ends where the renderer ends it,
  at its closer or its container's end, or the document's end); a paragraph that is one code span;
  a paragraph of images only; link reference definitions; thematic breaks; and HTML blocks that a
  reader is never shown as prose: comments, processing instructions, declarations, CDATA and
  ``<script>``, ``<style>``, ``<pre>``, ``<textarea>`` blocks (CommonMark's HTML block kinds 1-5).
- Any other HTML block (``<div>`` …, kinds 6 and 7) is prose: its text outside tags, line by line,
  so a claim cannot hide from the check inside a tag a renderer shows.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pyromark

__all__ = ["BLOCK_STARTS", "Block", "blocks", "mask"]

#: First characters of a line that may start something other than a paragraph of plain prose
#: (with any whitespace: indentation may make indented code). A one-line text whose first
#: character is none of these, holding no line break, is one paragraph.
BLOCK_STARTS = frozenset("`~#=-*_+|0123456789<[!>\\ \t\r\n\f\v")
#: ``tuple.__new__``: builds a ``Block`` from all its fields without its Python ``__new__``.
_new = tuple.__new__
_OPTIONS = pyromark.Options.ENABLE_TABLES
#: The parser's events with their source ranges, typed loosely: the loop dispatches on the shape
#: of each event (a string, or a one-key dict) faster than ``isinstance`` narrowing would.
_events: Callable[..., Iterator[tuple[Any, Any]]] = pyromark.Markdown(
    options=_OPTIONS
).events_with_range
#: CommonMark's HTML blocks of kinds 1-5, which show a reader no prose.
_HIDDEN_HTML_RE = re.compile(rb"[ \t]*<(?:!|\?|(?i:script|pre|style|textarea)(?:[\s>]|$))")
#: An HTML tag on one line: blanked out of a shown HTML block's lines.
_TAG_RE = re.compile(rb"<[^<>\n]*+>")
#: Inline elements that wrap content (their Start/End events bracket it).
_INLINE_TAGS = frozenset({"Emphasis", "Strong", "Strikethrough", "Superscript", "Subscript"})
_INLINE_ENDS = frozenset({*_INLINE_TAGS, "Link", "Image"})
#: What ends a line of a shown HTML block.
_LINE_RE = re.compile(rb"[^\n]++")


class Block(NamedTuple):
    """A block of prose (its content segments), a table row, or a heading."""

    #: Content segments ``(start, end)`` of its lines, markers excluded.
    segments: list[tuple[int, int]]
    heading: bool = False
    #: A table row (header or data): one sentence, not split.
    row: bool = False
    #: A table's header row: exempt from needing a citation.
    header: bool = False


def blocks(text: str) -> list[Block]:
    """The blocks of ``text``: prose, table rows and headings; code and the like are left out."""
    if not text:
        return []
    if text[0] not in BLOCK_STARTS and "\n" not in text and "\r" not in text:
        return [_new(Block, ([(0, len(text))], False, False, False))]
    reader = _Reader(text)
    reader.read()
    if not text.isascii():
        return _to_str_offsets(text, reader.blocks)
    return reader.blocks


class _Reader:
    """One pass over the parser's events (linear in their number, which is linear in the text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        #: ``text`` in UTF-8, the parser's offsets' unit (encoded when first needed).
        self.raw: bytes | None = None
        self.blocks: list[Block] = []
        #: Content segments of the open inline container (paragraph, heading, tight item text).
        self.segments: list[tuple[int, int]] | None = None
        self.heading = False
        #: Start of the current line's content; -1 between a line break and the next content.
        self.line_start = -1
        self.line_end = -1
        #: Nesting of inline elements inside the open container.
        self.depth = 0
        #: Top-level content of the open container: images, code spans, anything else.
        self.images = 0
        self.codes = 0
        self.other = False

    def read(self) -> None:
        #: Inside a code block, an HTML block or a table (the name of its End event): their inner
        #: events are no prose; a table's rows are read from their Start events.
        inside: str | None = None
        for event, span in _events(self.text, merge_text=True):
            if event.__class__ is str:  # SoftBreak, HardBreak, Rule
                if self.segments is not None and event != "Rule":
                    self._break(span["start"])
            elif inside is not None:
                start = event.get("Start")
                if start in ("TableHead", "TableRow"):
                    self._row(span, start == "TableHead")
                elif event.get("End") == inside:
                    inside = None
            elif (start := event.get("Start")) is not None:
                inside = self._start(start, span)
            elif (end := event.get("End")) is not None:
                if end.__class__ is str and end in _INLINE_ENDS:
                    self.depth -= 1
                    self.line_end = max(self.line_end, span["end"])
                else:  # Paragraph, Item, Heading, BlockQuote, List
                    self._close()
            else:  # Text, Code, InlineHtml (Html only inside an HTML block)
                self._inline_start(span["start"])
                self.line_end = span["end"]
                if self.depth == 0:
                    if "Code" in event:
                        self.codes += 1
                    elif "Text" not in event or event["Text"].strip():
                        self.other = True

    def _start(self, tag: Any, span: Any) -> str | None:
        """A Start event outside code, HTML and tables: what it opens, if one of those."""
        if tag.__class__ is str:
            if tag == "Paragraph":
                self._open(False)
            elif tag in _INLINE_TAGS:
                self._inline_start(span["start"])
                self.other = self.other or self.depth == 0
                self.depth += 1
            elif tag == "HtmlBlock":
                self._html(span)
                return "HtmlBlock"
            else:  # Item (definition lists are off)
                self._close()
            return None
        if "Heading" in tag:
            self._open(True)
        elif "Image" in tag or "Link" in tag:
            self._inline_start(span["start"])
            if self.depth == 0:
                if "Image" in tag:
                    self.images += 1
                else:
                    self.other = True
            self.depth += 1
        else:  # CodeBlock, Table, BlockQuote, List
            self._close()
            if "CodeBlock" in tag:
                return "CodeBlock"
            if "Table" in tag:
                return "Table"
        return None

    def _open(self, heading: bool) -> None:
        self._close()
        self.segments = []
        self.heading = heading
        self.line_start = self.line_end = -1
        self.depth = self.images = self.codes = 0
        self.other = False

    def _inline_start(self, at: int) -> None:
        if self.segments is None:
            self._open(False)
        if self.line_start < 0:
            self.line_start = at

    def _break(self, at: int) -> None:
        """A line break inside the open container: its line's segment ends at ``at``."""
        segments = self.segments
        if segments is not None and self.line_start >= 0:
            segments.append((self.line_start, max(at, self.line_start)))
        self.line_start = self.line_end = -1

    def _close(self) -> None:
        segments = self.segments
        if segments is None:
            return
        self.segments = None
        if self.line_start >= 0:
            segments.append((self.line_start, max(self.line_end, self.line_start)))
        if not segments:
            return
        if (
            not self.heading
            and not self.other
            and ((self.images and not self.codes) or (self.codes == 1 and not self.images))
        ):
            return  # a paragraph of images only, or one code span: exempt
        self.blocks.append(_new(Block, (segments, self.heading, False, False)))

    def _source(self) -> bytes:
        """The text as the parser's offsets count it (UTF-8), encoded at most once."""
        if self.raw is None:
            self.raw = self.text.encode()
        return self.raw

    def _row(self, span: Any, header: bool) -> None:
        self._close()
        start, end = span["start"], span["end"]
        end = start + len(self._source()[start:end].rstrip())
        if end > start:
            self.blocks.append(_new(Block, ([(start, end)], False, True, header)))

    def _html(self, span: Any) -> None:
        """An HTML block: none, or its text outside tags as one prose block (see the docstring)."""
        self._close()
        source, start, end = self._source(), span["start"], span["end"]
        if _HIDDEN_HTML_RE.match(source, start, end):
            return
        segments: list[tuple[int, int]] = []
        for line in _LINE_RE.finditer(source, start, end):
            at = line.start()
            for tag in _TAG_RE.finditer(source, at, line.end()):
                if source[at : tag.start()].strip():
                    segments.append((at, tag.start()))
                at = tag.end()
            if source[at : line.end()].strip():
                segments.append((at, line.end()))
        if segments:
            self.blocks.append(_new(Block, (segments, False, False, False)))


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
    for seg_start, seg_end in segments:
        gap = text[cursor:seg_start]
        parts.append("".join("\n" if c == "\n" else " " for c in gap))
        parts.append(text[seg_start:seg_end])
        cursor = seg_end
    return "".join(parts)
