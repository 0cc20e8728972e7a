"""Assertion sentences of Markdown: where each one starts and ends (contract §3.7).

Decisions (fail closed where in doubt — an extra unit costs at most a regeneration, a missed one
lets an uncited claim through):

- Blocks (``worker.core.markdown_blocks``, CommonMark 0.31.2 + GFM tables): a sentence never
  crosses a block; headings, table header rows and the exempt blocks (code, …) hold none. A
  single newline inside a paragraph is a soft wrap and does not end a sentence, except after a
  line ending in ``:`` (see below).
- Not assertions: questions (the last terminator run, ignoring trailing citation tokens,
  whitespace and closing quotes/brackets, contains ``?``); a sentence ending a line with ``:``.
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
from bisect import bisect_right
from collections.abc import Sequence

from worker.core.markdown_blocks import BLOCK_STARTS, blocks, mask

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
_NON_SPACE_RE = re.compile(r"\S")


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
    if not any(c in markdown for c in "\n\r?:"):
        # One line of prose (a report section's body, mostly): its first sentence starts at its
        # first character; a letter or digit there makes it a sentence, and with no ``?`` or
        # ``:`` anywhere, whatever ends it, it is an assertion.
        first = markdown[:1]  # indentation may make it indented code (BLOCK_STARTS)
        if first and first not in BLOCK_STARTS and first.isalnum():
            return True
    return bool(_assertions(markdown, first_only=True))


def _assertions(markdown: str, first_only: bool) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for block in blocks(markdown):
        if block.heading or block.header or not block.segments:
            continue
        origin = block.segments[0][0]
        masked = mask(markdown, block.segments)
        for s, e, assertion in _split(masked, block.row, first_only):
            if assertion:
                spans.append((origin + s, origin + e))
                if first_only:
                    return spans
    return spans


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


def _either_case(word: str) -> str:
    """``word`` as a pattern matching it in ASCII upper or lower case, letter by letter (not
    ``(?i)``, which would also fold ``ſ`` or ``K`` that ``str.lower`` does not)."""
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word)


def _after_word(words: frozenset[str]) -> str:
    """Look-behinds, one pair per word length: a ``word`` and ``.`` just consumed, with a space,
    ``(``, ``[`` or the start of the block before the word. Only there does ``_period_ends``
    read exactly that word (it walks back over letters and dots, and a digit before makes it no
    abbreviation); anywhere else the stop is left to it."""
    out = []
    for length in sorted({len(w) for w in words}):
        alt = "|".join(_either_case(w) for w in sorted(words) if len(w) == length)
        out.append(rf"(?<=[\s(\[](?:{alt})\.)|(?<=^(?:{alt})\.)")
    return "|".join(out)


#: A single ``.`` (just consumed) that closes an abbreviation ``_period_ends`` keeps open in any
#: case: one of ``NEVER_END``, or of ``BEFORE_NUMBER`` with whitespace and an ASCII digit next
#: (``No. 7``). The stop pattern does not stop there, which saves a Python step per such
#: abbreviation; every other single ``.`` after a letter is still decided by ``_period_ends``.
_KEPT_OPEN = (
    rf"(?<=[A-Za-z]\.)(?![{_TERMINATORS}])"  # a cheap test first: most stops fail it
    rf"(?:{_after_word(NEVER_END)}|(?:{_after_word(BEFORE_NUMBER)})\s++[0-9])"
)
_STOP_RE = re.compile(
    # The pattern opens with the set of every first character, so ``re`` compiles it a charset
    # prefix and skips to the next candidate in C (~3 ns a character); each alternative then
    # looks back at the one character consumed. (A look-ahead first gets no prefix: the whole
    # matcher ran at every position, ~9 ns a character.)
    rf"[`:{_TERMINATORS}](?:"
    r"(?<=`)"
    rf"|(?<=:)(?=(?P<tail>{_CLOSER_SET}*+(?:\s*+{_TOKEN})*+)[ \t\r]*+(?:\n|\Z))"
    rf"|(?<=[{_TERMINATORS}])(?!{_KEPT_OPEN})(?P<run>[{_TERMINATORS}]*+){_CLOSER_SET}*+"
    rf"(?P<att>(?:\s*+{_TOKEN})++|(?=\s|\Z))\s*+"
    r")"
)
#: Text with no letter or digit outside tokens (``[\W_]`` is exactly ``not str.isalnum()``).
_NO_WORDS_RE = re.compile(rf"(?:{_TOKEN}|[\W_])*+")
_DIGITS = frozenset("0123456789")
_TICKS_RE = re.compile(r"`+")


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
    """Inline code spans of one block: every backtick run found once, filed by width, so the
    closer of an opener is one binary search away (linear overall; searching the text from each
    opener for a run of its width was cubic on runs of growing widths: a 1 MB draft of them took
    over a minute)."""

    __slots__ = ("m", "runs")

    def __init__(self, m: str) -> None:
        self.m = m
        #: Width -> the starts of the runs of exactly that width, in order (built at first use).
        self.runs: dict[int, list[int]] | None = None

    def end(self, i: int) -> int:
        """Past the inline code span opening at ``i``, or past its backtick run if unclosed."""
        runs = self.runs
        if runs is None:
            runs = self.runs = {}
            for run in _TICKS_RE.finditer(self.m):
                runs.setdefault(run.end() - run.start(), []).append(run.start())
        m = self.m
        j = i
        while j < len(m) and m[j] == "`":  # each run is walked once, by its opener
            j += 1
        width = j - i
        starts = runs.get(width, ())
        k = bisect_right(starts, i)  # the first run of that width after the opener
        return starts[k] + width if k < len(starts) else j


def _is_initialism(word: str) -> bool:
    parts = word.split(".")
    return len(parts) > 1 and all(len(p) == 1 for p in parts)
