"""Markdown blocks as a CommonMark renderer shows them (contract §3.7): which hold prose, which
are table rows, which are exempt from needing a citation.

The first half of finding assertion sentences (``worker.core.claims.sentences`` splits each block).

The block structure is CommonMark 0.31.2 with the GFM table extension, read by pulldown-cmark
(``pyromark``; ``docs/decisions.md`` has the choice and the figures), checked against cmark-gfm,
the contract's reference renderer, by ``tests/unit/core/test_blocks_cmark_gfm.py``. Decisions:

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
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from functools import lru_cache
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
#: Elements whose content is no prose a reader is shown as such (CommonMark's HTML block kind 1).
_RAW_HTML_RE = re.compile(rb"<((?i:script|pre|style|textarea))(?=[\s>/]|$)")
#: A GFM table's delimiter row (with a pipe: without one, ``---`` is a rule or an underline).
_DELIMITER_ROW_RE = re.compile(r"[ \t]*\|?(?:[ \t]*+:?-++:?[ \t]*+\|)++(?:[ \t]*+:?-++:?[ \t]*+)?")
#: A pipe escaped by a backslash (``\\|``: the backslash is escaped, the pipe is not).
_ESCAPED_PIPE_RE = re.compile(r"(?<!\\)(?:\\\\)*+\\\|")
_TICKS_RE = re.compile(r"`++")
#: Block quote markers at a line's start (each may be followed by one space).
_QUOTE_MARKS_RE = re.compile(r"(?:[ \t]{0,3}>[ ]?)*")
#: What may follow ``<`` in a tag, comment, declaration or processing instruction.
_TAG_START_RE = re.compile(rb"[A-Za-z/!?]")
#: What closes what an HTML block may hold, by its opener (anything else ``<`` opens: ``>``).
_HTML_CLOSERS = ((b"<!--", b"-->"), (b"<?", b"?>"), (b"<![CDATA[", b"]]>"), (b"<!", b">"))
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
    reader = _Reader(text)
    parsed = text.translate(_NOT_BLANK) if "\f" in text or "\v" in text else text
    reader.read(parsed)
    if reader.marks:  # empty list items cmark-gfm keeps open: read again, with them open
        edited = bytearray(parsed.encode())
        for at in reader.marks:
            edited[at] = 0x1F
        reader = _Reader(text)
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


#: Where pulldown-cmark and cmark-gfm read other blocks, the reader gives pulldown-cmark a text
#: with the same offsets, changed so that it reads cmark-gfm's (rule 7: where they differ,
#: cmark-gfm is what the reader sees; ``\x1f`` is one byte, no whitespace to pulldown-cmark,
#: and dropped by ``str.strip`` as the reader's test for a blank text wants):
#:
#: - a line of form feeds or vertical tabs is text to cmark-gfm (a paragraph, which an indented
#:   line after it continues), blank to pulldown-cmark (which reads that indented line as
#:   code): both are read as ``\x1f`` (cmark-gfm takes only space and tab as whitespace in a
#:   line's block structure);
#: - an empty list item stays open for cmark-gfm over a line of whitespace that reaches its
#:   content column (cmark-gfm tests the indentation before blankness), where pulldown-cmark
#:   closes it (the spec's "at most one blank line") and reads an indented line after it as
#:   code: the text is read again with a ``\x1f`` at that column (``_blank_line_keeping``), so
#:   the item holds what follows for both. Only texts with such an item pay the second read.
_NOT_BLANK = str.maketrans("\f\v", "\x1f\x1f")
#: A list marker ending its line, then a line of whitespace (and ``>``) only: where an empty
#: list item may stay open for cmark-gfm. A cheap test before the reader looks at its items.
_EMPTY_ITEM_RE = re.compile(r"(?:[-+*]|[0-9][.)])[ \t]*+\r?\n(?=[ \t>]*?[ \t])[ \t>]*+\r?$", re.M)
_BLANK_LINE_RE = re.compile(rb"[ \t>]*")
_MARKER_RE = re.compile(rb"[-+*]|[0-9]{1,9}[.)]")


def _blank_line_keeping(raw: bytes, item: int) -> int:
    """Where to mark the empty list item whose marker is at ``item`` so that pulldown-cmark
    keeps it open as cmark-gfm does, or -1: the line under it is no whitespace line reaching
    its content column. The mark goes at that column, on the marker's line (its whitespace
    past the marker's space) or on the line under it; where neither has a character there,
    on that line's last (``_NOT_BLANK``)."""
    line_start = raw.rfind(b"\n", 0, item) + 1
    marker = _MARKER_RE.match(raw, item)
    end = raw.find(b"\n", item)
    if marker is None or end < 0:
        return -1
    if raw[marker.end() : end].strip(b" \t\r"):
        return -1  # the item has content on its marker's line
    content = _columns(raw[line_start : marker.end()], 0) + 1  # a blank start: one space
    below_end = raw.find(b"\n", end + 1)
    below = raw[end + 1 : below_end if below_end >= 0 else len(raw)].rstrip(b"\r")
    quotes = raw[line_start:item].count(b">")
    if not below or not _BLANK_LINE_RE.fullmatch(below) or below.count(b">") != quotes:
        return -1
    if _columns(below, 0) < content:
        return -1  # cmark-gfm closes the item too
    col = _columns(raw[line_start : marker.end() + 1], 0)  # past the marker's space
    for k in range(marker.end() + 1, end - (raw[end - 1 : end] == b"\r")):
        if col == content:
            return k
        col = _columns(raw[k : k + 1], col)
    col = 0
    for k, byte in enumerate(below):
        if col >= content and byte != 0x3E:
            return end + 1 + k
        col = (col // 4 + 1) * 4 if byte == 0x09 else col + 1
    # The line ends at the content column, or a tab spans it: its last character, marked, is
    # a paragraph for pulldown-cmark that holds the indented lines after it as text (fail
    # closed), where cmark-gfm has them in the item.
    return end + len(below)


def _columns(chars: bytes, col: int) -> int:
    """The column after ``chars`` from column ``col`` (a tab to the next multiple of 4)."""
    if 0x09 not in chars:
        return col + len(chars)
    for byte in chars:
        col = (col // 4 + 1) * 4 if byte == 0x09 else col + 1
    return col


class _Reader:
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
        #: Byte offsets to mark with ``\x1f`` for a second read (``_NOT_BLANK``).
        self.marks: list[int] = []

    def read(self, parsed: str | None = None, again: bool = False) -> None:
        """Read the events of ``parsed`` (``self.text`` with the same offsets, changed as
        ``_NOT_BLANK`` says; ``self.text`` itself by default). Unless ``again``, note in
        ``marks`` the empty list items to read open."""
        parsed = self.text if parsed is None else parsed
        maybe_empty = not again and _EMPTY_ITEM_RE.search(parsed) is not None
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
                inside = self._start(start, span)
            elif (end := event.get("End")) is not None:
                if end.__class__ is str and end in _INLINE_ENDS:
                    self.depth -= 1
                    self.line_end = max(self.line_end, span["end"])
                else:  # Paragraph, Item, Heading, BlockQuote, List
                    self._close()
                    if end.__class__ is not str or end == "Item":  # BlockQuote, List, Item
                        self.container_closed = True
                        if maybe_empty and end == "Item":
                            at = _blank_line_keeping(self._source(), span["start"])
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
        line = _as_str(source[newline + 1 : end if after < 0 else after])
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
        gap = _as_str(source[self.last_paragraph[0][-1][1] : at])
        if gap.count("\n") + gap.count("\r") - gap.count("\r\n") != 1:
            return False
        # A lazy line: no list marker opens an item on it, and no more ``>`` than the
        # paragraph's lines have (else a new quote or item holds the table).
        prefix = gap[max(gap.rfind("\n"), gap.rfind("\r")) + 1 :]
        quotes = _Laziness(source, self.last_paragraph[0][0][0]).quotes
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
        lazy: _Laziness | None = None
        for k in range(1, len(segments) - 1):
            start, end = segments[k + 1]
            line = _as_str(source[start:end])
            if "|" not in line or "-" not in line or not _DELIMITER_ROW_RE.fullmatch(line):
                continue
            if lazy is None:
                lazy = _Laziness(source, segments[0][0])
            head_start, head_end = segments[k]
            cells = line.strip().strip("|").count("|") + 1
            if _cells(_as_str(source[head_start:head_end])) != cells:
                continue
            if lazy(start) or lazy.indented(start):  # the header row may be lazy, the
                continue  # delimiter row may not, nor be indented 4 columns past the text
            add = self.blocks.append
            above = _as_str(source[segments[0][0] : segments[k - 1][1]])
            if above[:1] != "`" or not _one_code_span(above):  # else exempt (images alone
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
        for shown_start, shown_end in _shown_html(source, start, end):
            for line in _LINE_RE.finditer(source, shown_start, shown_end):
                if line.group().strip():
                    segments.append(line.span())
        if segments:
            self.blocks.append(_new(Block, (segments, False, False, False)))


def _shown_html(source: bytes, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The stretches of ``source[start:end]`` (an HTML block) a browser shows as text: outside
    tags, comments, processing instructions, declarations, CDATA, and ``<script>``, ``<style>``,
    ``<pre>`` and ``<textarea>`` elements (preformatted or no text: exempt like code). One pass:
    each search starts where the last one ended, and one that finds nothing ends the scan."""
    pos = scan = start
    lowered: bytes | None = None  # the block in lower case, for a raw element's closing tag
    while scan < end:
        lt = source.find(b"<", scan, end)
        if lt < 0:
            break
        if not _TAG_START_RE.match(source, lt + 1, end):  # ``a < b``: text
            scan = lt + 1
            continue
        raw = _RAW_HTML_RE.match(source, lt, end)
        if raw is None:
            closer = next((c for o, c in _HTML_CLOSERS if source.startswith(o, lt)), b">")
            found = source.find(closer, lt + 1, end)
            if found < 0 and closer == b">":  # no tag closes after here: the rest is text
                break
            after = found + len(closer)
        else:
            if lowered is None:
                lowered = source[start:end].lower()
            found = lowered.find(b"</" + raw.group(1).lower(), lt + 1 - start)
            gt = lowered.find(b">", found) if found >= 0 else -1
            after = start + gt + 1 if gt >= 0 else -1
            found = after
        yield pos, lt
        if found < 0:  # an unclosed comment or raw element hides the rest
            return
        pos = scan = after
    if pos < end:
        yield pos, end


class _Laziness:
    """Whether a line of a paragraph is a lazy continuation line: it lacks a ``>`` of the
    paragraph's first line, or is indented less than that line's list item content."""

    def __init__(self, source: str | bytes, first: int) -> None:
        self.source = source
        prefix = self._prefix(first)
        self.quotes = prefix.count(">")
        after = prefix[prefix.rfind(">") + 1 :]
        #: The first line's content column past its last ``>``, when a list marker is there.
        self.indent = len(after.expandtabs(4)) if after.strip() else None

    def _prefix(self, at: int) -> str:
        source = self.source
        if isinstance(source, str):
            return source[source.rfind("\n", 0, at) + 1 : at]
        return source[source.rfind(b"\n", 0, at) + 1 : at].decode()

    def indented(self, at: int) -> bool:
        """Whether the line starting its content at ``at`` is indented 4 columns or more past
        the paragraph's content column."""
        prefix = self._prefix(at)
        after = prefix[prefix.rfind(">") + 1 :]
        if self.quotes and after.startswith(" "):
            after = after[1:]  # the space of the ``>`` marker
        return len(after.expandtabs(4)) - (self.indent or 0) >= 4

    def __call__(self, at: int) -> bool:
        prefix = self._prefix(at)
        if prefix.count(">") != self.quotes:
            return True
        after = prefix[prefix.rfind(">") + 1 :]
        return self.indent is not None and len(after.expandtabs(4)) < self.indent


def _one_code_span(text: str) -> bool:
    """Whether ``text`` is one inline code span: a backtick run at each end, of one width, and
    no run of that width between."""
    text = text.strip()
    runs = [m.span() for m in _TICKS_RE.finditer(text)]
    if len(runs) < 2 or runs[0][0] != 0 or runs[-1][1] != len(text):
        return False
    width = runs[0][1]
    return runs[-1][1] - runs[-1][0] == width and all(e - s != width for s, e in runs[1:-1])


def _as_str(line: str | bytes) -> str:
    return line.decode() if isinstance(line, bytes) else line


def _cells(row: str) -> int:
    """How many cells a GFM table row has: its pipes not escaped by a backslash, less a leading
    and a trailing one."""
    row = row.strip()
    pipes = row.count("|") - len(_ESCAPED_PIPE_RE.findall(row))
    if row.startswith("|"):
        pipes -= 1
    if row.endswith("|") and not row.endswith("\\|") and len(row) > 1:
        pipes -= 1
    return pipes + 1


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
