"""Where the reader follows cmark-gfm, the contract's reference renderer, over pulldown-cmark:
the texts it reads instead (``NOT_BLANK``, ``blank_line_keeping``), lazy continuation lines
(``Laziness``) and the table rows cmark-gfm finds inside a paragraph (``cell_count``,
``one_code_span``).
"""

from __future__ import annotations

import re

#: A pipe escaped by a backslash (``\\|``: the backslash is escaped, the pipe is not).
_ESCAPED_PIPE_RE = re.compile(r"(?<!\\)(?:\\\\)*+\\\|")
_TICKS_RE = re.compile(r"`++")


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
#:   code: the text is read again with a ``\x1f`` at that column (``blank_line_keeping``), so
#:   the item holds what follows for both. Only texts with such an item pay the second read.
NOT_BLANK = str.maketrans("\f\v", "\x1f\x1f")
#: A list marker ending its line, then a line of whitespace (and ``>``) only: where an empty
#: list item may stay open for cmark-gfm. A cheap test before the reader looks at its items.
EMPTY_ITEM_RE = re.compile(r"(?:[-+*]|[0-9][.)])[ \t]*+\r?\n(?=[ \t>]*?[ \t])[ \t>]*+\r?$", re.M)
#: From an item's marker: the marker (1), its line's rest up to the newline (2: only spaces, tabs
#: and ``\r``), and the line under it (3: whitespace and ``>``, then ``\r``s, to its end).
_EMPTY_ITEM_AT_RE = re.compile(rb"([-+*]|[0-9]{1,9}[.)])([ \t\r]*+)\n([ \t>]++)\r*+(?=\n|\Z)")


def blank_line_keeping(raw: bytes, item: int) -> int:
    """Where to mark the empty list item whose marker is at ``item`` so that pulldown-cmark
    keeps it open as cmark-gfm does, or -1: the line under it is no whitespace line reaching
    its content column. The mark goes at that column, on the marker's line (its whitespace
    past the marker's space) or on the line under it; where neither has a character there,
    on that line's last (``NOT_BLANK``)."""
    # One match in C: the marker, nothing but spaces, tabs and ``\r`` after it on its line
    # (else the item has content there), and a line under it of whitespace and ``>`` only.
    found = _EMPTY_ITEM_AT_RE.match(raw, item)
    if found is None:
        return -1
    line_start = raw.rfind(b"\n", 0, item) + 1
    marker_end, end = found.end(1), found.end(2)
    below = found.group(3)
    quotes = raw.count(b">", line_start, item)
    if below.count(b">") != quotes:
        return -1
    content = _columns(raw[line_start:marker_end], 0) + 1  # a blank start: one space
    if _columns(below, 0) < content:
        return -1  # cmark-gfm closes the item too
    col = _columns(raw[line_start : marker_end + 1], 0)  # past the marker's space
    for k in range(marker_end + 1, end - (raw[end - 1 : end] == b"\r")):
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


class Laziness:
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


def one_code_span(text: str) -> bool:
    """Whether ``text`` is one inline code span: a backtick run at each end, of one width, and
    no run of that width between."""
    text = text.strip()
    runs = [m.span() for m in _TICKS_RE.finditer(text)]
    if len(runs) < 2 or runs[0][0] != 0 or runs[-1][1] != len(text):
        return False
    width = runs[0][1]
    return runs[-1][1] - runs[-1][0] == width and all(e - s != width for s, e in runs[1:-1])


def as_str(line: str | bytes) -> str:
    return line.decode() if isinstance(line, bytes) else line


def cell_count(row: str) -> int:
    """How many cells a GFM table row has: its pipes not escaped by a backslash, less a leading
    and a trailing one."""
    row = row.strip()
    pipes = row.count("|") - len(_ESCAPED_PIPE_RE.findall(row))
    if row.startswith("|"):
        pipes -= 1
    if row.endswith("|") and not row.endswith("\\|") and len(row) > 1:
        pipes -= 1
    return pipes + 1
