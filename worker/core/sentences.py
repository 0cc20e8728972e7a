"""Assertion sentences of Markdown: where each one starts and ends (contract §3.7).

Decisions (fail closed where in doubt — an extra unit costs at most a regeneration, a missed one
lets an uncited claim through):

- Blocks: a blank line, an ATX heading, a fence line, a thematic break, a table row, and the start
  of a list item (``-``, ``*``, ``+``, ``1.``, ``1)``) end the current block; a sentence never
  crosses a block. A single newline inside a paragraph is a soft wrap and does not end a sentence,
  except after a line ending in ``:`` (see below). Blockquote markers (``>``) and list markers are
  not part of any sentence.
- Not assertions: ATX headings (``# …``) and setext headings (a one-line paragraph underlined with
  ``===`` or ``---``); questions (the last terminator run, ignoring trailing citation tokens,
  whitespace and closing quotes/brackets, contains ``?``); a sentence ending a line with ``:``;
  fenced code (```` ``` ```` or ``~~~``, closed by a run of the same character at least as long);
  table header and delimiter rows. An *unclosed* fence hides nothing: only its fence line is
  skipped and what follows is prose (a truncated or adversarial fence cannot exempt claims).
- Indented code (4 spaces / tab) is NOT skipped: in LLM Markdown indentation is almost always a
  list continuation, and skipping it would let an agent exempt claims by indenting them.
- Table data rows: each row is one sentence (cells are not split).
- Terminators: a run of ``.``, ``!``, ``?``, ``…`` followed, after optional closing characters
  (``"'”’»)]*_``), by whitespace, the end, or a citation token. ``.`` inside a number never
  qualifies (no whitespace follows). A single ``.`` after an abbreviation does not end a sentence:
  ``NEVER_END`` always (``e.g.``, ``Dr.``, ``vs.``, ``U.S.``…), ``BEFORE_NUMBER`` when a digit
  follows (``No. 5``, ``Fig. 3``, ``Jan. 5``; ``the answer is no.`` ends), ``UNLESS_CAPITAL``
  unless the next word is capitalised or the block ends (``etc.``, ``Inc.``, ``a.m.``…), and a
  single capital initial (``J. Smith``) unless a citation token directly follows it. A word glued
  to digits (``1st.``) is no abbreviation. Inline code spans are opaque.
- Citation tokens right after a terminator (whitespace between allowed) belong to its sentence
  and are inside its span; tokens are never split. A fragment with no letter or digit outside
  tokens (``[OBS-1][OBS-2]`` alone, ``—``) is not a sentence: its span is added to the previous
  sentence of the block, or dropped if there is none.

Spans are ``[start, end)`` offsets into the original text, from the first non-space character to
the end of the terminator, closing characters and attached tokens; redaction replaces exactly that.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

NEVER_END = frozenset(
    {
        "e.g", "i.e", "cf", "vs", "viz", "approx", "ca", "resp", "incl",
        "mr", "mrs", "ms", "dr", "prof", "st", "mt", "gen", "col", "lt", "capt", "cmdr", "cdr",
        "sgt", "adm", "gov", "sen", "rep", "rev", "hon", "messrs",
        "u.s", "u.k", "u.n", "e.u", "u.s.a",
    }
)  # fmt: skip
BEFORE_NUMBER = frozenset(
    {
        "no", "nos", "fig", "figs", "vol", "vols", "p", "pp", "art", "sec", "ch", "para", "eq",
        "tab", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    }
)  # fmt: skip
UNLESS_CAPITAL = frozenset(
    {"etc", "inc", "ltd", "co", "corp", "al", "jr", "sr", "a.m", "p.m", "est", "dept", "min", "max"}
)

_CLOSERS = "\"'”’»)]*_"
_TERMINATORS = ".!?…"
_HEADING_RE = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_THEMATIC_RE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SETEXT_RE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
_LIST_RE = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+|$)")
_QUOTE_RE = re.compile(r"(?:[ \t]*>[ \t]?)+")
_TABLE_DELIM_RE = re.compile(r"[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?$")
_FENCE_RE = re.compile(r"([ \t]*)(`{3,}|~{3,})(.*)")
_NON_SPACE_RE = re.compile(r"\S")
#: CommonMark: a fence is indented at most 3 columns (past a list item's content column).
_FENCE_INDENT = 3
#: First characters of a line that may start something other than plain prose.
_BLOCK_STARTS = frozenset("`~#=-*_+|0123456789")
#: First characters that can only start a list item, unless the line is all rule characters.
_ITEM_STARTS = frozenset("-*+0123456789")
#: What setext underlines and thematic breaks are made of.
_RULE_CHARS = " \t-*_="


def sentence_spans(
    markdown: str, token_spans: Sequence[tuple[int, int]] | None = None
) -> list[tuple[int, int]]:
    """``[start, end)`` of every assertion sentence of ``markdown``, in order.

    ``token_spans`` (the spans of the tokens of ``markdown``) is accepted from callers that have
    them, and not needed: the scanner finds tokens by their pattern where it needs them.
    """
    del token_spans
    return _assertions(markdown, first_only=False)


def has_assertion(markdown: str, token_spans: Sequence[tuple[int, int]] | None = None) -> bool:
    """``bool(sentence_spans(markdown))``, stopping at the first assertion sentence."""
    del token_spans
    if "\n" not in markdown and ">" not in markdown and "?" not in markdown and ":" not in markdown:
        # One line of prose (a report section's body, mostly): its first sentence starts at its
        # first character; a letter or digit there makes it a sentence, and with no ``?`` or
        # ``:`` anywhere, whatever ends it, it is an assertion.
        first = markdown.lstrip()[:1]
        if first and first not in _BLOCK_STARTS and first.isalnum():
            return True
    return bool(_assertions(markdown, first_only=True))


def _assertions(markdown: str, first_only: bool) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for block in _blocks(markdown):
        if block.heading or not block.segments:
            continue
        origin = block.segments[0][0]
        masked = _mask(markdown, block.segments)
        for s, e, assertion in _split(masked, block.row, first_only):
            if assertion:
                spans.append((origin + s, origin + e))
                if first_only:
                    return spans
    return spans


# --- blocks -------------------------------------------------------------------------------------


class _Block(NamedTuple):
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
        self.blocks: list[_Block] = []
        self.current: list[tuple[int, int]] = []
        #: The current block is no list item, so a setext underline makes it a heading.
        self.plain = True
        #: The content column of the list item the lines belong to, if any: a fence inside it
        #: may be indented up to 3 columns past it (CommonMark).
        self.list_col: int | None = None

    def flush(self, heading: bool = False) -> None:
        if self.current:
            self.blocks.append(_Block(self.current, heading=heading))
        self.current = []
        self.plain = True

    def row(self, start: int, end: int) -> None:
        """A table row (header or data): one block, one sentence."""
        self.blocks.append(_Block([(start, end)], row=True))


def _blocks(text: str) -> list[_Block]:
    """Split Markdown into blocks of prose lines, table rows and headings; code is left out."""
    if "\n" not in text and ">" not in text:  # one line (a section body, a claim): no markers
        first = text.lstrip()[:1]
        if first and first not in _BLOCK_STARTS:
            return [_Block([(0, len(text))])]
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
        if first not in _BLOCK_STARTS:  # plain prose: the common case, no pattern to try
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


def _mask(text: str, segments: list[tuple[int, int]]) -> str:
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


# --- sentences ----------------------------------------------------------------------------------

#: A citation token (the grammar of ``worker.core.citations``, overlong ids included). The grammar
#: has no context, so the tokens of a block are exactly this pattern's matches in its text.
_TOKEN = r"\[(?:OBS|DOC|EVT)-[0-9]++\]"  # noqa: S105 -- a pattern, not a password
#: The next place the scanner must act on, inside a sentence (one C-level search per stop):
#: - a backtick (an inline code span, opaque);
#: - a ``:`` that ends its line after closers and attached tokens (``tail``: where the sentence
#:   ends); any other colon ends nothing;
#: - a terminator run (``run``), its closers, then attached tokens (``att``, whitespace between
#:   allowed) or whitespace or the end: ``att`` ends where the sentence would, the match where
#:   the next one may start (past whitespace). Any other run ends nothing. Runs are whole: the
#:   scan never starts inside one, and the run is possessive, so no later position of a run that
#:   fails can match either.
#: Tokens need no stop: they hold none of these characters, so stepping over one changes nothing.
_CLOSER_SET = f"[{re.escape(_CLOSERS)}]"
_STOP_RE = re.compile(
    # The look-ahead names every first character: ``re`` then skips to the next one of them in
    # a tight loop instead of trying each alternative at every position (~25 % of the scan).
    rf"(?=[`:{_TERMINATORS}])(?:"
    r"`"
    rf"|:(?=(?P<tail>{_CLOSER_SET}*+(?:\s*+{_TOKEN})*+)[ \t\r]*+(?:\n|\Z))"
    rf"|(?P<run>[{_TERMINATORS}]++){_CLOSER_SET}*+(?P<att>(?:\s*+{_TOKEN})++|(?=\s|\Z))\s*+"
    r")"
)
#: Text with no letter or digit outside tokens (``[\W_]`` is exactly ``not str.isalnum()``).
_NO_WORDS_RE = re.compile(rf"(?:{_TOKEN}|[\W_])*+")
_DIGITS = frozenset("0123456789")


def _split(m: str, whole: bool = False, first_only: bool = False) -> list[tuple[int, int, bool]]:
    """Sentences of one block of masked text: ``(start, end, is_assertion)``; ``whole``: one.

    One pass, every index moving forward (linear in the block). ``first_only``: stop after the
    first assertion (its flag is final when emitted; only its end could still grow).
    """
    out: list[tuple[int, int, bool]] = []
    if whole:
        end = len(m.rstrip())
        _emit(m, out, 0, end, _is_assertion(m, 0, end))
        return out
    code: _CodeSpans | None = None
    search_stop = _STOP_RE.search
    pos = 0
    while True:
        if pos == len(m):
            return out
        if m[pos].isspace():
            found = _NON_SPACE_RE.search(m, pos)
            if found is None:
                return out
            pos = found.start()
        start = pos
        while True:
            stop = search_stop(m, pos)
            if stop is None:
                end = len(m.rstrip())
                _emit(m, out, start, end, _is_assertion(m, start, end))
                return out
            i = stop.start()
            c = m[i]
            if c == "`":
                code = code or _CodeSpans(m)
                pos = code.end(i)
                continue
            if c == ":":
                pos = end = stop.end("tail")
                _emit(m, out, start, end, False)
            else:
                end = stop.end("att")
                j = stop.end("run")
                if (
                    j - i == 1
                    and c == "."
                    and i
                    and (m[i - 1].isalpha() or m[i - 1] == ".")  # else no abbreviation
                    and not _period_ends(m, i, stop.start("att"), end)
                ):
                    pos = j
                    continue
                _emit(m, out, start, end, "?" not in m[i:j])
                pos = stop.end()
            if first_only and out and out[-1][2]:
                return out
            break


def _emit(m: str, out: list[tuple[int, int, bool]], start: int, end: int, assertion: bool) -> None:
    """Add a sentence, or fold a fragment without words into the previous sentence."""
    if m[start].isalnum() or _NO_WORDS_RE.fullmatch(m, start, end) is None:
        out.append((start, end, assertion))
    elif out:
        prev_start, _, prev_assertion = out[-1]
        out[-1] = (prev_start, end, prev_assertion)


def _is_assertion(m: str, start: int, end: int) -> bool:
    """False for a question or a sentence ending in ``:`` (trailing tokens, closers ignored)."""
    pos = end
    while pos > start:
        if m[pos - 1].isspace():
            pos -= 1
        elif (token := _token_ending_at(m, start, pos)) is not None:
            pos = token
        elif m[pos - 1] in _CLOSERS:
            pos -= 1
        else:
            break
    run_end = pos
    while pos > start and m[pos - 1] in _TERMINATORS:
        pos -= 1
    if "?" in m[pos:run_end]:
        return False
    return not (pos == run_end and pos > start and m[pos - 1] == ":")


def _token_ending_at(m: str, start: int, pos: int) -> int | None:
    """The start of the token ``m[t:pos]`` with ``t >= start``, if there is one.

    Linear overall: the digits looked at belong to the token (skipped next), or the walk stops.
    """
    if m[pos - 1] != "]":
        return None
    d = pos - 1
    while d > start and m[d - 1] in _DIGITS:
        d -= 1
    t = d - 5
    if d < pos - 1 and t >= start and m[t] == "[" and m[t + 1 : d] in ("OBS-", "DOC-", "EVT-"):
        return t
    return None


def _period_ends(m: str, i: int, k: int, after: int) -> bool:
    """Whether a single ``.`` at ``i`` (closers up to ``k``, tokens attached up to ``after``)
    ends its sentence, or closes an abbreviation."""
    w = i
    while w > 0 and (m[w - 1].isalpha() or m[w - 1] == "."):
        w -= 1
    word = m[w:i].lower()
    if not word or (w > 0 and m[w - 1].isdigit()):  # "2023." or "1st." is no abbreviation
        return True
    if word in NEVER_END:
        return False
    cited = after > k
    following = _NON_SPACE_RE.search(m, after)
    nxt = m[following.start()] if following is not None else ""
    if word in BEFORE_NUMBER:
        return not nxt.isdigit()
    if len(word) == 1 and m[w].isupper():
        return cited
    if word in UNLESS_CAPITAL or _is_initialism(word):
        return nxt == "" or not nxt.isalpha() or nxt.isupper()
    return True


class _CodeSpans:
    """Inline code spans of one block, remembering the widths that have no closer left."""

    __slots__ = ("m", "no_closer")

    def __init__(self, m: str) -> None:
        self.m = m
        self.no_closer: dict[int, int] = {}

    def end(self, i: int) -> int:
        """Past the inline code span opening at ``i``, or past its backtick run if unclosed."""
        m = self.m
        j = i
        while j < len(m) and m[j] == "`":
            j += 1
        width = j - i
        if self.no_closer.get(width, len(m) + 1) <= i:
            return j
        pos = j
        run = "`" * width
        while True:
            q = m.find(run, pos)
            if q < 0:
                self.no_closer[width] = i
                return j
            r = q
            while r < len(m) and m[r] == "`":
                r += 1
            if r - q == width:
                return r
            pos = r


def _is_initialism(word: str) -> bool:
    parts = word.split(".")
    return len(parts) > 1 and all(len(p) == 1 for p in parts)
