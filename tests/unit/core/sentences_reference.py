"""The sentence splitter as first written (before it was made faster), kept as a test oracle.

Do not change it: ``test_sentences.py`` checks that ``worker.core.sentences`` finds exactly the
spans this finds. Since contract v3 it takes its blocks from ``worker.core.markdown_blocks`` (the
CommonMark + GFM tables reader, checked against cmark-gfm by ``test_blocks_cmark_gfm.py``); its
own line scanner, and the block rules below, are gone. Its original documentation follows.

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

from worker.core.citations import scan_tokens
from worker.core.markdown_blocks import blocks, mask

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
#: The only characters the sentence scanner acts on (tokens start with ``[``).
_INTERESTING_RE = re.compile(r"[\[`.!?…:]")


def sentence_spans(markdown: str) -> list[tuple[int, int]]:
    """``[start, end)`` of every assertion sentence of ``markdown``, in order."""
    spans: list[tuple[int, int]] = []
    for block in blocks(markdown):
        if block.heading or block.header or not block.segments:
            continue
        origin = block.segments[0][0]
        masked = mask(markdown, block.segments)
        spans.extend(
            (origin + s, origin + e) for s, e, assertion in _split(masked, block.row) if assertion
        )
    return spans


# --- sentences ----------------------------------------------------------------------------------


def _split(m: str, whole: bool = False) -> list[tuple[int, int, bool]]:
    """Sentences of one block of masked text: ``(start, end, is_assertion)``; ``whole``: one."""
    splitter = _Splitter(m)
    if whole:
        splitter.emit(0, len(m.rstrip()))
    else:
        splitter.run()
    return splitter.out


class _Splitter:
    """One pass over one block; every index moves forward, so it is linear in the block."""

    def __init__(self, m: str) -> None:
        self.m = m
        self.token_end = {t.start: t.end for t in scan_tokens(m)} if "[" in m else {}
        self.token_start = {e: s for s, e in self.token_end.items()}
        self.no_code_closer: dict[int, int] = {}
        self.out: list[tuple[int, int, bool]] = []

    def run(self) -> None:
        m = self.m
        start: int | None = None
        i = 0
        while i < len(m):
            if start is None:
                found = _NON_SPACE_RE.search(m, i)
                if found is None:
                    break
                i = start = found.start()
            else:
                found = _INTERESTING_RE.search(m, i)
                if found is None:
                    break
                i = found.start()
            c = m[i]
            if i in self.token_end:
                i = self.token_end[i]
            elif c == "`":
                i = self.code_span_end(i)
            elif c in _TERMINATORS or c == ":":
                end, i = self.terminator(i) if c != ":" else self.colon(i)
                if end is not None:
                    self.emit(start, end)
                    start = None
            else:
                i += 1
        if start is not None:
            end = len(m)
            while end > start and m[end - 1].isspace():
                end -= 1
            self.emit(start, end)

    def terminator(self, i: int) -> tuple[int | None, int]:
        """``(sentence end or None, where to continue)`` for a terminator run at ``i``."""
        m = self.m
        j = i
        while j < len(m) and m[j] in _TERMINATORS:
            j += 1
        k = j
        while k < len(m) and m[k] in _CLOSERS:
            k += 1
        if (k == len(m) or m[k].isspace() or k in self.token_end) and self.ends(i, j, k):
            end = self.attach_tokens(k)
            return end, end
        return None, j

    def colon(self, i: int) -> tuple[int | None, int]:
        """A ``:`` ends a sentence only at the end of its line (after closers and tokens)."""
        m = self.m
        k = i + 1
        while k < len(m) and m[k] in _CLOSERS:
            k += 1
        end = self.attach_tokens(k)
        rest = end
        while rest < len(m) and m[rest] in " \t\r":
            rest += 1
        if rest == len(m) or m[rest] == "\n":
            return end, end
        return None, i + 1

    def emit(self, start: int, end: int) -> None:
        """Add a sentence, or fold a fragment without words into the previous sentence."""
        if not self.has_words(start, end):
            if self.out:
                prev_start, _, prev_assertion = self.out[-1]
                self.out[-1] = (prev_start, end, prev_assertion)
            return
        self.out.append((start, end, self.is_assertion(start, end)))

    def has_words(self, start: int, end: int) -> bool:
        i = start
        while i < end:
            if i in self.token_end:
                i = self.token_end[i]
                continue
            if self.m[i].isalnum():
                return True
            i += 1
        return False

    def is_assertion(self, start: int, end: int) -> bool:
        """False for a question or a sentence ending in ``:`` (trailing tokens, closers ignored)."""
        m = self.m
        pos = end
        while pos > start:
            if m[pos - 1].isspace():
                pos -= 1
            elif pos in self.token_start and self.token_start[pos] >= start:
                pos = self.token_start[pos]
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

    def attach_tokens(self, k: int) -> int:
        """The end of the citation tokens (whitespace between allowed) from ``k`` on."""
        m = self.m
        end = k
        pos = k
        while True:
            while pos < len(m) and m[pos].isspace():
                pos += 1
            if pos in self.token_end:
                pos = self.token_end[pos]
                end = pos
            else:
                return end

    def ends(self, i: int, j: int, k: int) -> bool:
        """Whether the terminator run ``m[i:j]`` (closers up to ``k``) ends a sentence."""
        m = self.m
        if j - i > 1 or m[i] != ".":
            return True
        w = i
        while w > 0 and (m[w - 1].isalpha() or m[w - 1] == "."):
            w -= 1
        word = m[w:i].lower()
        if not word or (w > 0 and m[w - 1].isdigit()):  # "2023." or "1st." is no abbreviation
            return True
        if word in NEVER_END:
            return False
        after = self.attach_tokens(k)
        cited = after > k
        while after < len(m) and m[after].isspace():
            after += 1
        nxt = m[after] if after < len(m) else ""
        if word in BEFORE_NUMBER:
            return not nxt.isdigit()
        if len(word) == 1 and m[w].isupper():
            return cited
        if word in UNLESS_CAPITAL or _is_initialism(word):
            return nxt == "" or not nxt.isalpha() or nxt.isupper()
        return True

    def code_span_end(self, i: int) -> int:
        """Past the inline code span opening at ``i``, or past its backtick run if unclosed."""
        m = self.m
        j = i
        while j < len(m) and m[j] == "`":
            j += 1
        width = j - i
        if self.no_code_closer.get(width, len(m) + 1) <= i:
            return j
        pos = j
        run = "`" * width
        while True:
            q = m.find(run, pos)
            if q < 0:
                self.no_code_closer[width] = i
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
