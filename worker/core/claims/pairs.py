"""Parentheses, quotations and inline code spans of one block: where a terminator ends nothing
(``worker.core.claims.sentences`` documents the rules).

``Pairs`` finds the matched pairs of a block once and says, for a stop inside one, where the
scan goes on; ``CodeSpans`` finds the closer of an inline code span (opaque to the scan).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from worker.core.claims.stops import CCL, CJK, CL, CLOSERS, QUOTE_CLOSERS, RUN, TERMINATORS, follows

#: ``Pairs.skip``: the stop's closers close the quotation around it (it ends the sentence).
CLOSES_QUOTE = -2
#: Every quote mark that can close a quotation, as a closer that cannot.
_QUOTES_AS_OTHER = str.maketrans(dict.fromkeys(QUOTE_CLOSERS, "'"))
_TICKS_RE = re.compile(r"`+")
#: Characters of the pairs that hide terminators (and backticks: code spans are opaque).
_PAIRS_RE = re.compile(r"`+|[()（）\"“”«»「」『』]")
#: The pair characters but straight quotes and backticks, and straight quotes.
_BRACKETS_RE = re.compile(r"[()（）“”«»「」『』]")
_STRAIGHT_RE = re.compile('"')
#: A character that can open a pair, and those that can close one.
OPENING_RE = re.compile(r"[(（\"“«「『]")
CLOSING = '")）”»」』'
_CLOSER_OF = {"(": ")", "（": "）", "“": "”", "«": "»", "「": "」", "『": "』"}
_PAREN_CLOSERS = frozenset(")）")


class CodeSpans:
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


class Pairs:
    """The matched parentheses and quotations of one block, as the outermost ``(open, close)``
    intervals of each: where a terminator ends nothing. Found in one pass (a stack per kind;
    straight ``"`` paired in order; code spans skipped); an opener never closed in its block
    opens nothing."""

    __slots__ = ("paren_ends", "paren_starts", "quote_ends", "quote_starts")

    def __init__(self, m: str, code: CodeSpans) -> None:
        parens: list[tuple[int, int]] = []
        quotes: list[tuple[int, int]] = []
        open_at: dict[str, list[int]] = {}
        if "`" not in m:  # no code span: straight quotes pair in order, found in C
            straight = [hit.start() for hit in _STRAIGHT_RE.finditer(m)]
            for hit in _BRACKETS_RE.finditer(m):
                i = hit.start()
                c = m[i]
                if c in _CLOSER_OF:
                    open_at.setdefault(_CLOSER_OF[c], []).append(i)
                elif stack := open_at.get(c):
                    (parens if c in _PAREN_CLOSERS else quotes).append((stack.pop(), i))
            self.paren_starts, self.paren_ends = _outermost(parens)
            if not quotes:  # in order, none inside another: outermost as they are
                self.quote_starts = straight[0 : len(straight) - 1 : 2]
                self.quote_ends = straight[1::2]
                return
            quotes += zip(straight[0::2], straight[1::2], strict=False)
            self.quote_starts, self.quote_ends = _outermost(quotes)
            return
        quote = -1
        past = 0  # past the last code span
        for hit in _PAIRS_RE.finditer(m):
            i = hit.start()
            if i < past:
                continue
            c = m[i]
            if c == "`":
                past = code.end(i)
                continue
            if c == '"':
                if quote < 0:
                    quote = i
                else:
                    quotes.append((quote, i))
                    quote = -1
            elif c in _CLOSER_OF:
                open_at.setdefault(_CLOSER_OF[c], []).append(i)
            elif stack := open_at.get(c):
                (parens if c in _PAREN_CLOSERS else quotes).append((stack.pop(), i))
        self.paren_starts, self.paren_ends = _outermost(parens)
        self.quote_starts, self.quote_ends = _outermost(quotes)

    def inside(self, i: int) -> bool:
        """Whether ``i`` is inside a parenthesis or a quotation."""
        return (
            _enclosing(self.paren_starts, self.paren_ends, i) >= 0
            or _enclosing(self.quote_starts, self.quote_ends, i) >= 0
        )

    def skip(self, m: str, stop: re.Match[str], start: int) -> int:
        """Where to go on from a stop inside a pair (past its closer), or negative: the stop may
        end the sentence (``CLOSES_QUOTE``: its closers close the quotation around it). A
        terminator inside a parenthesis ends nothing, unless the parenthesis opens the sentence
        and closes right after the terminator (``(See above.)``); one inside a quotation only
        where the quotation closes right after it (``He said "stop." Then``).
        After a parenthesis's closer, whitespace, a token, a hard break or the end must follow,
        CJK terminators included; after a quotation's closer anything may (contract v4:
        ``注："……也。"这表明`` is two sentences)."""
        i = stop.start()
        colon = m[i] in ":\uff1a"  # a lead-in's colon inside a pair ends nothing, and hides nothing
        # ``_enclosing`` inlined, and the closers' end read only for a stop inside a pair: one
        # call per stop here, most stops of a block with pairs being inside none.
        closed = -1
        starts = self.paren_starts
        k = bisect_right(starts, i) - 1 if starts else -1
        if k >= 0 and starts[k] < i < (close := self.paren_ends[k]):
            closed = _closers_end(stop)
            if starts[k] != start or closed <= close or not follows(m, closed):
                return i + 1 if colon else _last_run(m, _run_end(stop), close)
        starts = self.quote_starts
        k = bisect_right(starts, i) - 1
        if k >= 0 and starts[k] < i < (close := self.quote_ends[k]):
            if closed < 0:
                closed = _closers_end(stop)
            if closed <= close:
                return i + 1 if colon else _last_run(m, _run_end(stop), close)
            return CLOSES_QUOTE
        return -1

    def closing_quotes_only(self, m: str) -> str:
        """``m`` with every quote mark that closes no outermost quotation read as ``'``."""
        t = m.translate(_QUOTES_AS_OTHER)
        pieces: list[str] = []
        prev = 0
        for e in self.quote_ends:
            pieces += (t[prev:e], m[e])
            prev = e + 1
        pieces.append(t[prev:])
        return "".join(pieces)


def _run_end(stop: re.Match[str]) -> int:
    """Where a stop's terminator run ends (either branch)."""
    return stop.end(RUN) if stop.start(RUN) >= 0 else stop.end(CJK)


def _last_run(m: str, j: int, close: int) -> int:
    """Where to go on from a stop that ends nothing inside a pair closing at ``close`` (its
    terminators end at ``j``): the terminator run right before the closer (closers between
    allowed), the one stop left inside that may end the sentence, else past the closer.
    Each pair is walked back once: the next stop is that run or past the pair."""
    k = close
    while k > j and m[k - 1] in CLOSERS:
        k -= 1
    r = k
    while r > j and m[r - 1] in TERMINATORS:
        r -= 1
    return r if r < k else close + 1


def _closers_end(stop: re.Match[str]) -> int:
    """Where the closers after a stop's terminator run end (its start for a colon)."""
    if stop.start(CL) >= 0:
        return stop.end(CL)
    if stop.start(CCL) >= 0:
        return stop.end(CCL)
    return stop.start()


def _outermost(pairs: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """The outermost intervals of ``pairs`` (overlapping ones merged), as starts and ends."""
    pairs.sort()
    starts: list[int] = []
    ends: list[int] = []
    for s, e in pairs:
        if ends and s < ends[-1]:
            ends[-1] = max(ends[-1], e)
        else:
            starts.append(s)
            ends.append(e)
    return starts, ends


def _enclosing(starts: list[int], ends: list[int], i: int) -> int:
    """The index of the interval ``i`` is strictly inside, or -1."""
    k = bisect_right(starts, i) - 1
    return k if k >= 0 and starts[k] < i < ends[k] else -1
