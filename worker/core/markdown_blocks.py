"""Markdown blocks: which lines hold prose, table rows or headings, and which are code (§3.7).

The first half of finding assertion sentences (``worker.core.sentences`` splits each block).

Decisions (fail closed where in doubt):

- Blocks: a blank line, an ATX heading, a fence line, a thematic break, a table row, and the start
  of a list item (``-``, ``*``, ``+``, ``1.``, ``1)``) end the current block; a sentence never
  crosses a block. A single newline inside a paragraph is a soft wrap. Blockquote markers (``>``)
  and list markers are not part of any block's content.
- Headings: ATX (``# …``) and setext (a one-line paragraph underlined with ``===`` or ``---``).
- Fenced code (```` ``` ```` or ``~~~``, closed by a run of the same character at least as long,
  CommonMark's indentation rules) is no block. An *unclosed* fence hides nothing: only its fence
  line is skipped and what follows is prose (a truncated or adversarial fence cannot exempt claims).
- Indented code (4 spaces / tab) is NOT skipped: in LLM Markdown indentation is almost always a
  list continuation, and skipping it would let an agent exempt claims by indenting them.
- Table rows (header and data) are one block each; delimiter rows are none.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["BLOCK_STARTS", "Block", "blocks", "mask"]

_HEADING_RE = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_THEMATIC_RE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SETEXT_RE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
_LIST_RE = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+|$)")
_QUOTE_RE = re.compile(r"(?:[ \t]*>[ \t]?)+")
_TABLE_DELIM_RE = re.compile(r"[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?$")
_FENCE_RE = re.compile(r"([ \t]*)(`{3,}|~{3,})(.*)")
#: CommonMark: a fence is indented at most 3 columns (past a list item's content column).
_FENCE_INDENT = 3
#: First characters of a line that may start something other than plain prose.
BLOCK_STARTS = frozenset("`~#=-*_+|0123456789")
#: First characters that can only start a list item, unless the line is all rule characters.
_ITEM_STARTS = frozenset("-*+0123456789")
#: ``tuple.__new__``: builds a ``Block`` from all its fields without its Python ``__new__``.
_new = tuple.__new__
#: What setext underlines and thematic breaks are made of.
_RULE_CHARS = " \t-*_="


class Block(NamedTuple):
    """A block of prose (its content segments), a table row, or a heading."""

    #: Content segments ``(start, end)`` of its lines, markers excluded.
    segments: list[tuple[int, int]]
    heading: bool = False
    #: A table data row: one sentence, not split.
    row: bool = False


def _lines(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        end = pos + len(line)
        out.append((pos, end))
        pos = end + 1
    return out


def _unquote(line: str) -> tuple[int, str]:
    """Where the content of a line starts after its blockquote markers, and that content."""
    if not line.lstrip(" \t").startswith(">"):
        return 0, line
    quote = _QUOTE_RE.match(line)
    at = quote.end() if quote else 0
    return at, line[at:]


def _fence_run(body: str) -> tuple[str, int] | None:
    """``(char, width)`` when ``body`` is nothing but a fence run (a possible closer)."""
    stripped = body.strip()
    if len(stripped) >= 3 and stripped[0] in "`~" and stripped == stripped[0] * len(stripped):
        return stripped[0], len(stripped)
    return None


def _widest_closers(text: str, lines: list[tuple[int, int]]) -> dict[str, list[int]]:
    """For each fence char, the widest bare fence run on line ``n`` or later (suffix maxima)."""
    widest = {"`": [0] * (len(lines) + 1), "~": [0] * (len(lines) + 1)}
    for n in range(len(lines) - 1, -1, -1):
        for col in widest.values():
            col[n] = col[n + 1]
        line = text[lines[n][0] : lines[n][1]]
        run = _fence_run(_unquote(line)[1]) if "`" in line or "~" in line else None
        if run is not None:
            col = widest[run[0]]
            col[n] = max(col[n], run[1])
    return widest


class _BlockBuilder:
    """Accumulates the prose lines of the current block."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.current: list[tuple[int, int]] = []
        #: The current block is no list item, so a setext underline makes it a heading.
        self.plain = True
        #: The content column of the list item the lines belong to, if any: a fence inside it
        #: may be indented up to 3 columns past it (CommonMark).
        self.list_col: int | None = None

    def flush(self, heading: bool = False) -> None:
        if self.current:
            self.blocks.append(_new(Block, (self.current, heading, False)))
        self.current = []
        self.plain = True

    def row(self, start: int, end: int) -> None:
        """A table row (header or data): one block, one sentence."""
        self.blocks.append(_new(Block, ([(start, end)], False, True)))


def blocks(text: str) -> list[Block]:
    """Split Markdown into blocks of prose lines, table rows and headings; code is left out."""
    if "\n" not in text and ">" not in text:  # one line (a section body, a claim): no markers
        first = text.lstrip()[:1]
        if first and first not in BLOCK_STARTS:
            return [Block([(0, len(text))])]
    lines = _lines(text)
    widest: dict[str, list[int]] | None = None  # computed at the first fence opener, if any
    b = _BlockBuilder()
    fence: tuple[str, int] | None = None
    for n, (start, end) in enumerate(lines):
        line = text[start:end]
        content_at, body = _unquote(line) if ">" in line else (0, line)
        if fence is not None:
            run = _fence_run(body)
            if run is not None and run[0] == fence[0] and run[1] >= fence[1]:
                fence = None
            continue
        first = body.lstrip()[:1]
        if not first:
            b.flush()
            continue
        if b.list_col is not None and first == body[:1]:  # an unindented line ends the item
            b.list_col = None
        if first not in BLOCK_STARTS:  # plain prose: the common case, no pattern to try
            b.current.append((start + content_at, end))
            continue
        if first in _ITEM_STARTS and body.strip(_RULE_CHARS):
            # A digit, or a bullet on a line that is not only rule characters, can start nothing
            # but a list item (no fence, heading, setext or thematic break, table row): skip the
            # patterns that cannot match.
            _item_or_prose(b, body, start + content_at, end)
            continue
        opener = _FENCE_RE.match(body)
        if opener is not None and _opens_fence(opener, b.list_col):
            b.flush()
            char, width = opener.group(2)[0], len(opener.group(2))
            if widest is None:
                widest = _widest_closers(text, lines)
            if widest[char][n + 1] >= width:  # an unclosed fence hides nothing
                fence = (char, width)
            continue
        if _SETEXT_RE.match(body) and len(b.current) == 1 and b.plain and not content_at:
            b.flush(heading=True)
            continue
        if (
            _HEADING_RE.match(body)
            or _THEMATIC_RE.match(body)
            or (_SETEXT_RE.match(body) and body.lstrip()[0] == "=")
        ):
            b.flush()
            continue
        if body.lstrip().startswith("|"):
            b.flush()
            if not _TABLE_DELIM_RE.match(body):  # a header row is a row like any other
                lead = len(body) - len(body.lstrip())
                b.row(start + content_at + lead, start + len(line.rstrip()))
            continue
        _item_or_prose(b, body, start + content_at, end)
    b.flush()
    return b.blocks


def _item_or_prose(b: _BlockBuilder, body: str, at: int, end: int) -> None:
    """A list item starts a block of its own (its marker excluded); other prose continues one."""
    item = _LIST_RE.match(body)
    if item is not None:
        b.flush()
        b.plain = False
        b.list_col = len(body[: item.end()].expandtabs(4))
        at += item.end()
    b.current.append((at, end))


def _opens_fence(opener: re.Match[str], list_col: int | None) -> bool:
    """CommonMark's fence opener: indented at most 3 columns (past the content column of the list
    item it belongs to), and a backtick fence's info string holds no backtick (so
    ```` ```Falcon``` is priced… ```` is a paragraph, not a fence)."""
    if opener.group(2)[0] == "`" and "`" in opener.group(3):
        return False
    indent = len(opener.group(1).expandtabs(4))
    return indent <= _FENCE_INDENT or (
        list_col is not None and list_col <= indent <= list_col + _FENCE_INDENT
    )


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
