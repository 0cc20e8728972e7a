"""The reader of ``worker.core.claims.markdown``: one pass over pulldown-cmark's events
(``pyromark``), building the blocks a CommonMark renderer shows (``Block``); the module
``worker.core.claims.markdown`` documents which blocks those are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pyromark

from worker.core.claims.cmark_gfm import (
    EMPTY_ITEM_RE,
    Laziness,
    as_str,
    blank_line_keeping,
    cell_count,
    one_code_span,
)
from worker.core.claims.html_text import shown_html

#: ``tuple.__new__``: builds a ``Block`` from all its fields without its Python ``__new__``.
_new = tuple.__new__
_OPTIONS = pyromark.Options.ENABLE_TABLES
#: The parser's events with their source ranges, typed loosely: the loop dispatches on the shape
#: of each event (a string, or a one-key dict) faster than ``isinstance`` narrowing would.
_events: Callable[..., Iterator[tuple[Any, Any]]] = pyromark.Markdown(
    options=_OPTIONS
).events_with_range
#: A GFM table's delimiter row (with a pipe: without one, ``---`` is a rule or an underline).
_DELIMITER_ROW_RE = re.compile(r"[ \t]*\|?(?:[ \t]*+:?-++:?[ \t]*+\|)++(?:[ \t]*+:?-++:?[ \t]*+)?")
#: Block quote markers at a line's start (each may be followed by one space).
_QUOTE_MARKS_RE = re.compile(r"(?:[ \t]{0,3}>[ ]?)*")
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


class Reader:
    """One pass over the parser's events (linear in their number, which is linear in the text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        #: ``text`` in UTF-8, the parser's offsets' unit (encoded when first needed).
        self.raw: bytes | None = None
        self.ascii = text.isascii()
        self.blocks: list[Block] = []
        #: Content segments of the open inline container (paragraph, heading, tight item text).
        self.segments: list[tuple[int, int]] | None = None
        self.heading = False
        #: Start of the current line's content; -1 between a line break and the next content.
        self.line_start = -1
        self.line_end = -1
        #: Nesting of inline elements inside the open container.
        self.depth = 0
        #: End of the last cell of the table row being read.
        self.cell_end = 0
        #: The last paragraph closed: its segments and whether it was added (not exempt).
        self.last_paragraph: tuple[list[tuple[int, int]], bool] | None = None
        #: The table being read has no GFM delimiter row (see ``_delimiter_row_follows``).
        self.bogus_table = False
        #: A container (quote, list item) closed since that paragraph.
        self.container_closed = False
        #: A table cmark-gfm reads as lazy continuation lines of the last paragraph: its rows.
        self.lazy_rows: list[tuple[int, int]] | None = None
        #: Top-level content of the open container: images, code spans, anything else.
        self.images = 0
        self.codes = 0
        self.other = False
        #: Byte offsets to mark with ``\x1f`` for a second read (``NOT_BLANK``).
        self.marks: list[int] = []

    def read(  # noqa: PLR0915 -- one loop over the events, inlined: a call per event costs
        self, parsed: str | None = None, again: bool = False
    ) -> None:
        """Read the events of ``parsed`` (``self.text`` with the same offsets, changed as
        ``NOT_BLANK`` says; ``self.text`` itself by default). Unless ``again``, note in
        ``marks`` the empty list items to read open."""
        parsed = self.text if parsed is None else parsed
        maybe_empty = not again and EMPTY_ITEM_RE.search(parsed) is not None
        #: Inside a code block, an HTML block or a table (the name of its End event): their inner
        #: events are no prose; a table's rows are read from their Start events.
        inside: str | None = None
        for event, span in _events(parsed, merge_text=True):
            if event.__class__ is str:  # SoftBreak, HardBreak, Rule
                if self.segments is not None and event != "Rule":
                    self._break(span["start"])
            elif inside is not None:
                end = event.get("End")
                if end == "TableCell":
                    self.cell_end = span["end"]
                elif end in ("TableHead", "TableRow"):
                    self._row(span, end == "TableHead")
                elif end == inside:
                    inside = None
                    if self.lazy_rows is not None:
                        self._lazy_table()
                elif event.get("Start") in ("TableHead", "TableRow"):
                    self.cell_end = span["start"]
            elif (start := event.get("Start")) is not None:
                # Items and lists (most events of a deep list) close what is open, if anything,
                # without a call: nothing else reads them.
                if start == "Item" or (start.__class__ is dict and "List" in start):
                    if self.segments is not None:
                        self._close()
                else:
                    inside = self._start(start, span)
            elif (end := event.get("End")) is not None:
                if end.__class__ is str and end in _INLINE_ENDS:
                    self.depth -= 1
                    self.line_end = max(self.line_end, span["end"])
                else:  # Paragraph, Item, Heading, BlockQuote, List
                    if self.segments is not None:
                        self._close()
                    if end.__class__ is not str or end == "Item":  # BlockQuote, List, Item
                        self.container_closed = True
                        if maybe_empty and end == "Item":
                            at = blank_line_keeping(self._source(), span["start"])
                            if at >= 0:
                                self.marks.append(at)
            else:  # Text, Code, InlineHtml (Html only inside an HTML block)
                if self.line_start < 0 or self.segments is None:  # the first on its line
                    self._inline_start(span["start"])
                self.line_end = span["end"]
                if self.depth == 0 and not self.other:
                    text = event.get("Text")
                    if text is None:
                        if "Code" in event:
                            self.codes += 1
                        else:
                            self.other = True
                    elif text.strip():
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
                self.lazy_rows = [] if self._continues_last_paragraph(span["start"]) else None
                self.bogus_table = not self._delimiter_row_follows(span["start"], span["end"])
                return "Table"
        return None

    def _delimiter_row_follows(self, start: int, end: int) -> bool:
        """Whether the table's second line is a GFM delimiter row (pulldown-cmark also takes
        ``- --|--``, a list item for cmark-gfm: its header row is then read as prose)."""
        source = self.text if self.ascii else self._source()
        newline = source.find("\n" if self.ascii else b"\n", start, end)  # type: ignore[arg-type]
        if newline < 0:
            return False
        after = source.find("\n" if self.ascii else b"\n", newline + 1, end)  # type: ignore[arg-type]
        line = as_str(source[newline + 1 : end if after < 0 else after])
        line = line[_QUOTE_MARKS_RE.match(line).end() :]  # type: ignore[union-attr]
        # Indented 4 columns or more, a delimiter row is none for cmark-gfm (a list item's
        # content column counts here: such a table's header row is read as prose, fail closed).
        indent = len(line) - len(line.lstrip(" \t"))
        return indent < 4 and bool(_DELIMITER_ROW_RE.fullmatch(line.strip()))

    def _continues_last_paragraph(self, at: int) -> bool:
        """Whether a table starting at ``at`` is, for cmark-gfm, lazy continuation lines of the
        paragraph just closed: that paragraph was in a quote or a list item which the table's
        first line does not continue (so pulldown-cmark closed it), on the line right above."""
        if self.last_paragraph is None or not self.container_closed:
            return False
        source = self.text if self.ascii else self._source()
        gap = as_str(source[self.last_paragraph[0][-1][1] : at])
        if gap.count("\n") + gap.count("\r") - gap.count("\r\n") != 1:
            return False
        # A lazy line: no list marker opens an item on it, and no more ``>`` than the
        # paragraph's lines have (else a new quote or item holds the table).
        prefix = gap[max(gap.rfind("\n"), gap.rfind("\r")) + 1 :]
        quotes = Laziness(source, self.last_paragraph[0][0][0]).quotes
        return not prefix.strip(" \t>") and prefix.count(">") <= quotes

    def _lazy_table(self) -> None:
        """The table just read joins the last paragraph, as cmark-gfm reads it (see above)."""
        if self.last_paragraph is None or self.lazy_rows is None:  # never: set together
            return
        segments, added = self.last_paragraph
        if added:
            self.blocks.pop()
        merged = [*segments, *self.lazy_rows]
        self.blocks.append(_new(Block, (merged, False, False, False)))
        self.last_paragraph, self.lazy_rows = (merged, True), None

    def _open(self, heading: bool) -> None:
        if self.segments is not None:
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
            # A backslash escape's text starts after the backslash: the line starts at it.
            source = self.text if self.ascii else self._source()
            self.line_start = at - 1 if at and source[at - 1 : at] in ("\\", b"\\") else at

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
        self.last_paragraph, self.container_closed = None, False
        if not segments or self.heading:
            if segments:
                self.blocks.append(_new(Block, (segments, True, False, False)))
            return
        if not self.other and (
            (self.images and not self.codes) or (self.codes == 1 and not self.images)
        ):
            self.last_paragraph = (segments, False)
            return  # a paragraph of images only, or one code span: exempt
        if len(segments) > 2 and self._table_inside(segments):
            return
        self.last_paragraph = (segments, True)
        self.blocks.append(_new(Block, (segments, False, False, False)))

    def _table_inside(self, segments: list[tuple[int, int]]) -> bool:
        """A table that starts inside the paragraph ``segments`` (its lines), as cmark-gfm reads
        it: a line over a delimiter row of as many cells is a header row whatever it starts
        with (pulldown-cmark lets a table interrupt a paragraph only when it starts with ``|``),
        if the delimiter row is no lazy continuation line. Adds the paragraph's lines above it,
        the header, a row per line below up to a lazy line, and the lines from there as a
        paragraph; or nothing. Each line is looked at a bounded number of times: linear."""
        source = self.text if self.ascii else self._source()
        lazy: Laziness | None = None
        for k in range(1, len(segments) - 1):
            start, end = segments[k + 1]
            line = as_str(source[start:end])
            if "|" not in line or "-" not in line or not _DELIMITER_ROW_RE.fullmatch(line):
                continue
            if lazy is None:
                lazy = Laziness(source, segments[0][0])
            head_start, head_end = segments[k]
            cells = line.strip().strip("|").count("|") + 1
            if cell_count(as_str(source[head_start:head_end])) != cells:
                continue
            if lazy(start) or lazy.indented(start):  # the header row may be lazy, the
                continue  # delimiter row may not, nor be indented 4 columns past the text
            add = self.blocks.append
            above = as_str(source[segments[0][0] : segments[k - 1][1]])
            if above[:1] != "`" or not one_code_span(above):  # else exempt (images alone
                # are left prose)
                add(_new(Block, (segments[:k], False, False, False)))
            add(_new(Block, ([segments[k]], False, True, True)))
            n = k + 2
            while n < len(segments) and not lazy(segments[n][0]):
                add(_new(Block, ([segments[n]], False, True, False)))
                n += 1
            if n < len(segments):
                add(_new(Block, (segments[n:], False, False, False)))
            return True
        return False

    def _source(self) -> bytes:
        """The text as the parser's offsets count it (UTF-8), encoded at most once."""
        if self.raw is None:
            self.raw = self.text.encode()
        return self.raw

    def _row(self, span: Any, header: bool) -> None:
        """A table row, up to its last cell a renderer shows (GFM ignores cells past the header's
        count), its closing pipe included."""
        source = self.text if self.ascii else self._source()
        start, end = span["start"], span["end"]
        end = start + len(source[start:end].rstrip())
        shown = self.cell_end
        if shown < end and source[shown:end].strip() not in ("|", b"|"):  # cells past the header's
            end = shown + 1 if source[shown : shown + 1] in ("|", b"|") else shown
        if end > start:
            if self.lazy_rows is not None:
                self.lazy_rows.append((start, end))
            elif header and self.bogus_table:
                self.blocks.append(_new(Block, ([(start, end)], False, False, False)))
            else:
                self.blocks.append(_new(Block, ([(start, end)], False, True, header)))

    def _html(self, span: Any) -> None:
        """An HTML block: its text a reader is shown, outside tags, comments and the like."""
        source, start, end = self._source(), span["start"], span["end"]
        segments: list[tuple[int, int]] = []
        for shown_start, shown_end in shown_html(source, start, end):
            shown = source[shown_start:shown_end]
            content = shown.strip()
            if not content:  # whitespace between tags (most stretches): no line
                continue
            if b"\n" not in content:  # one line holds it: that line, without a match object
                first = shown_start + len(shown) - len(shown.lstrip())
                line_start = source.rfind(b"\n", shown_start, first) + 1 or shown_start
                line_end = source.find(b"\n", shown_start + len(shown.rstrip()), shown_end)
                segments.append((line_start, shown_end if line_end < 0 else line_end))
                continue
            for line in _LINE_RE.finditer(source, shown_start, shown_end):
                if line.group().strip():
                    segments.append(line.span())
        if segments:
            self.blocks.append(_new(Block, (segments, False, False, False)))
