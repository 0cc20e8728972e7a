"""Assertion sentences of Markdown: where each one starts and ends (contract §3.7, rule 7).

Decisions (fail closed where in doubt — an extra unit costs at most a regeneration, a missed one
lets an uncited claim through; ``docs/decisions.md`` has the list and the reasons):

- Blocks (``worker.core.claims.markdown``, CommonMark 0.31.2 + GFM tables): a sentence never
  crosses a block; headings, table header rows and the exempt blocks (code, …) hold none. A
  single newline inside a paragraph is a soft wrap and does not end a sentence, except after a
  line ending in ``:`` or ``：`` (a lead-in, see below).
- Terminators: a run of ``.``, ``!``, ``?``, ``…``, ``‽``, ``。``, ``！``, ``？`` followed by
  optional closing characters (``"'”’»)]*_`` and ``」』）】》〉``), then whitespace, a citation
  token, a ``<br>`` or backslash hard break, or the block's end. A run ending in ``。``, ``！`` or
  ``？`` needs nothing after it. ``.`` inside a number never qualifies (no whitespace follows).
- Parentheses and quotations: a terminator inside a matched pair of ``()``, ``（）``, ``“”``,
  ``«»``, ``「」``, ``『』`` or straight ``"…"`` (paired in order) ends nothing, so
  ``4.2B (closing in May?) [DOC-1].`` is one sentence and no question. An opener with no closer
  in its block opens nothing (a stray ``(`` cannot swallow the rest of the block).
- Abbreviations: a single ``.`` after an abbreviation does not end a sentence: ``NEVER_END``
  always (``e.g.``, ``Dr.``, ``U.S.``, ``et al.``…), ``BEFORE_NUMBER`` when a digit follows
  (``No. 5``, ``Fig. 3``), ``UNLESS_CAPITAL`` unless the next word is capitalised and not an
  all-capitals word (``etc.``, ``Inc.``, ``p.m.``: ``2 p.m. UTC`` and ``Inc. CFO`` do not end), a
  single capital initial (``J. Smith``), an enumerator opening a sentence (``a.``, ``iv.``,
  ``**1.``, up to three digits). Whatever the abbreviation, a citation token right after
  its ``.`` ends the sentence (``U.S. [DOC-1] Next…`` is two). A word glued to digits (``1st.``)
  is no abbreviation. Inline code spans are opaque.
- Not assertions (exempt from needing a citation, never from rule 5): questions (the terminator
  run that ends the sentence, outside parentheses and quotations, holds ``?`` or ``？``);
  lead-ins (a sentence ending a line with ``:`` or ``：``, closing emphasis and tokens allowed
  after it); labels (a block that is one sentence and all emphasis, ``**Summary**``,
  ``*Key facts:*``, ``**Core idea.**``). A sentence that is all emphasis followed by another
  sentence of its block is a run-in label and belongs to that sentence (``**Core idea.** The
  rest…`` is one unit).
- Table data rows: each row is one sentence (cells are not split).
- Citation tokens right after a terminator (whitespace between allowed) belong to its sentence
  and are inside its span; tokens are never split. A fragment with no letter or digit outside
  tokens (``[OBS-1][OBS-2]`` alone, ``—``) is not a sentence: its span is added to the previous
  sentence of the block, or dropped if there is none.

Spans are ``[start, end)`` offsets into the original text, from the first non-space character to
the end of the terminator, closing characters and attached tokens; redaction replaces exactly that.
Every step moves forward through the block: linear in its size (``python -m dev.bench.sentences``).
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Sequence

from worker.core.claims.markdown import BLOCK_STARTS, blocks, mask

NEVER_END = frozenset(
    {
        "e.g", "i.e", "cf", "vs", "viz", "approx", "ca", "resp", "incl", "esp", "dir", "nat",
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
    {"etc", "inc", "ltd", "co", "corp", "jr", "sr", "a.m", "p.m", "est", "dept", "min", "max"}
)
#: ``al`` is an abbreviation only after ``et`` (``Smith et al. found``): never an end.
_ET_AL = "et "

_CLOSERS = "\"'”’»)]*_」』）】》〉"
_TERMINATORS = ".!?…‽。！？"
#: Terminators that end a sentence with nothing after them (CJK text has no spaces).
_CJK_TERMINATORS = "。！？"
_QUESTION_MARKS = "?？"
_LEAD_IN_MARKS = ":："
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
    if not any(c in markdown for c in "\n\r>") and _NO_EXEMPTION_RE.search(markdown) is None:
        # One line of prose (a report section's body, mostly): its first sentence starts at its
        # first character; a letter or digit there makes it a sentence (and no label), and with
        # no question mark, colon or quotation anywhere, whatever ends it, it is an assertion.
        first = markdown[:1]  # indentation may make it indented code (BLOCK_STARTS)
        if first and first not in BLOCK_STARTS and first.isalnum():
            return True
    return bool(_assertions(markdown, first_only=True))


#: What can make a one-line sentence exempt: a question mark, a colon, or an enclosure that may
#: hide its terminator from the question test.
_NO_EXEMPTION_RE = re.compile(r"[?？:：()（）\"“”«»「」『』]")


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

#: A citation token (the grammar of ``worker.core.citations.extraction``, overlong ids included).
#: The grammar
#: has no context, so the tokens of a block are exactly this pattern's matches in its text.
_TOKEN = r"\[(?:OBS|DOC|EVT)-[0-9]++\]"  # noqa: S105 -- a pattern, not a password
_CLOSER_SET = f"[{re.escape(_CLOSERS)}]"
#: Closers that can close a quotation (``_Pairs``), and the others.
_QUOTE_CLOSERS = '"”»」』'
_QUOTE_CLOSER_SET = f"[{re.escape(_QUOTE_CLOSERS)}]"
_OTHER_CLOSER_SET = "[%s]" % re.escape("".join(c for c in _CLOSERS if c not in _QUOTE_CLOSERS))  # noqa: UP031
_TERM_SET = f"[{re.escape(_TERMINATORS)}]"
#: What may follow a terminator and its closers for it to end a sentence, besides a token:
#: whitespace, the end, a ``<br>`` or a backslash hard break.
_FOLLOW = r"(?=\s|\Z|<[bB][rR][\s/>]|\\\n)"
_FOLLOWS_RE = re.compile(rf"\s|\Z|<[bB][rR][\s/>]|\\\n|{_TOKEN}")
#: What separates a sentence from the next: whitespace and hard breaks.
_GAP = r"(?:\s|<[bB][rR]\s*+/?>|\\(?=\n))*+"


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
#: case: one of ``NEVER_END`` with no citation token next, or of ``BEFORE_NUMBER`` with
#: whitespace and an ASCII digit next (``No. 7``). The stop pattern does not stop there, which
#: saves a Python step per such abbreviation; every other single ``.`` after a letter is still
#: decided by ``_period_ends``.
_KEPT_OPEN = (
    rf"(?<=[A-Za-z]\.)(?!{_TERM_SET})"  # a cheap test first: most stops fail it
    # (each branch tests first what its every word needs: two letters or dots before the ``.``,
    # a digit after the whitespace)
    rf"(?:(?<=[A-Za-z.]{{2}}\.)(?:{_after_word(NEVER_END)})(?!{_CLOSER_SET}*+\s*+{_TOKEN})"
    rf"|(?=\s++[0-9])(?:{_after_word(BEFORE_NUMBER)}))"
)
#: A ``.`` (just consumed) after five lower-case ASCII letters that make no listed word: no
#: abbreviation, initial or enumerator can end so, so ``_period_ends`` need not be asked (the
#: group takes part in the match; most sentence ends of prose).
_PLAIN = "(?P<plain>(?<=[a-z]{5}\\.)%s)?" % "".join(  # noqa: UP031 -- braces in the pattern
    rf"(?<!{_either_case(w)}\.)"
    for w in sorted(NEVER_END | BEFORE_NUMBER | UNLESS_CAPITAL)
    if len(w) >= 5 and w.isalpha()
)
#: The terminator just consumed opens its run: no terminator before it. What follows a run is
#: the same from each of its positions (the run is possessive), so a run that ends nothing from
#: its first terminator ends nothing from any other; without this test the search tried every
#: position of a failing run again, to its end (quadratic: 100,000 ``!`` then a letter took
#: 19.6 s; contract rule 7, last paragraph).
_RUN_START = rf"(?<={_TERM_SET})(?<!{_TERM_SET}{_TERM_SET})"
#: The next place the scanner must act on, inside a sentence (one C-level search per stop):
#: - a backtick (an inline code span, opaque);
#: - a ``:`` or ``：`` that ends its line after closers and attached tokens (``tail``: where the
#:   sentence ends); any other colon ends nothing;
#: - a terminator run (``run``), its closers, then attached tokens (``att``, whitespace between
#:   allowed) or what ``_FOLLOW`` allows, or anything when the closers hold a quotation's closer
#:   (``q``: ``_split`` keeps the stop only if that closer closes the quotation around the run,
#:   contract v4): ``att`` ends where the sentence would, the match where the next one may start
#:   (past whitespace and hard breaks);
#: - a terminator run ending in a CJK terminator (``cjk``), its closers and attached tokens
#:   (``catt``), whatever follows.
#: Any other run ends nothing. Runs are whole: the scan never starts inside one, and a match
#: only starts at a run's first terminator (``_RUN_START``), so each run is read once. Tokens
#: need no stop: they hold none of these characters, so stepping over one changes nothing.
_STOP_RE = re.compile(
    # The pattern opens with the set of every first character, so ``re`` compiles it a charset
    # prefix and skips to the next candidate in C (~3 ns a character); each alternative then
    # looks back at the one character consumed. (A look-ahead first gets no prefix: the whole
    # matcher ran at every position, ~9 ns a character.)
    rf"[`:：{_TERMINATORS}](?:"
    r"(?<=`)"
    rf"|(?<=[:：])(?=(?P<tail>{_CLOSER_SET}*+(?:\s*+{_TOKEN})*+)[ \t\r]*+(?:\n|\Z))"
    rf"|{_RUN_START}(?!{_KEPT_OPEN}){_PLAIN}(?P<run>{_TERM_SET}*+)"
    rf"(?P<cl>{_OTHER_CLOSER_SET}*+(?:(?P<q>{_QUOTE_CLOSER_SET}){_CLOSER_SET}*+)?)"
    rf"(?P<att>(?:\s*+{_TOKEN})++|{_FOLLOW}|(?(q)|(?!))){_GAP}"
    rf"|{_RUN_START}(?P<cjk>{_TERM_SET}*+)(?<=[{_CJK_TERMINATORS}])(?P<ccl>{_CLOSER_SET}*+)"
    rf"(?P<catt>(?:\s*+{_TOKEN})*+){_GAP}"
    r")"
)
#: A terminator whose closers hold a quote mark and no whitespace, token or break follows: the
#: one place the stop pattern's ``q`` decides (``_split`` then reads only the closing marks).
_UNSPACED_QUOTE_STOP_RE = re.compile(
    rf"{_TERM_SET}{_OTHER_CLOSER_SET}*+{_QUOTE_CLOSER_SET}{_CLOSER_SET}*+(?!{_FOLLOWS_RE.pattern})"
)
#: ``_Pairs.skip``: the stop's closers close the quotation around it (it ends the sentence).
_CLOSES_QUOTE = -2
#: Every quote mark that can close a quotation, as a closer that cannot.
_QUOTES_AS_OTHER = str.maketrans(dict.fromkeys(_QUOTE_CLOSERS, "'"))
#: Text with no letter or digit outside tokens (``[\W_]`` is exactly ``not str.isalnum()``).
_NO_WORDS_RE = re.compile(rf"(?:{_TOKEN}|[\W_])*+")
_DIGITS = frozenset("0123456789")
#: Before a single ``.``, what may end an abbreviation or an enumerator: a dot, an ASCII digit.
_WORD_DOT = frozenset(".0123456789")
#: ASCII lower-case letters: the words the scanner decides without asking ``_period_ends``.
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
#: Common characters before a word that are no letter, dot or digit (a cheap test first).
_BOUNDARY = frozenset(" \n\t([{\"'*_")
#: The longest number that enumerates when it opens a sentence (``12.``, not ``2023.``).
_ENUMERATOR_DIGITS = 3
_TICKS_RE = re.compile(r"`+")
#: A word of two or more capitals (``UTC``, ``CFO``): after ``p.m.`` or ``Inc.``, not a new
#: sentence's first word.
_ACRONYM_RE = re.compile(r"[A-Z][A-Z0-9]++(?![^\W\d_])")
#: Every word of the lists (``al`` of ``et al.`` included): any other word ends its sentence,
#: unless it is an initial or an enumerator.
_LISTED = NEVER_END | BEFORE_NUMBER | UNLESS_CAPITAL | {"al"}
#: The longest roman-numeral enumerator (``viii``).
_ROMAN_MAX = 4
#: An enumerator that starts a sentence without being a list marker (``a.``, ``iv.``).
_ENUMERATOR_RE = re.compile(r"[a-z]|[ivx]{2,4}")
#: The words ``_ENUMERATOR_RE`` matches whole (a set lookup where the word is known lower-case).
_ENUMERATORS = frozenset(_LOWER) | frozenset(
    "".join(p) for n in range(2, _ROMAN_MAX + 1) for p in itertools.product("ivx", repeat=n)
)
#: How a label may end: its emphasis marker, then ``.``, ``:`` or ``：`` (a cheap test first).
_LABEL_ENDS = frozenset(a + b for a in "*_" for b in ".:：")
#: A sentence that is one emphasis span (``**Core idea.**``, ``*Summary*:``): a label.
_LABEL_RE = re.compile(r"(\*{1,3}|_{1,3})(?=\S)(.*?\S)\1[.:：]?", re.DOTALL)
#: Characters of the pairs that hide terminators (and backticks: code spans are opaque).
_PAIRS_RE = re.compile(r"`+|[()（）\"“”«»「」『』]")
#: The pair characters but straight quotes and backticks, and straight quotes.
_BRACKETS_RE = re.compile(r"[()（）“”«»「」『』]")
_STRAIGHT_RE = re.compile('"')
#: A character that can open a pair, and those that can close one.
_OPENING_RE = re.compile(r"[(（\"“«「『]")
_CLOSING = '")）”»」』'
_CLOSER_OF = {"(": ")", "（": "）", "“": "”", "«": "»", "「": "」", "『": "』"}
_PAREN_CLOSERS = frozenset(")）")


def _split(  # noqa: PLR0915 -- one loop over the stops, inlined: a call per stop costs
    m: str, whole: bool = False, first_only: bool = False
) -> list[tuple[int, int, bool]]:
    """Sentences of one block of masked text: ``(start, end, is_assertion)``; ``whole``: one.

    One pass, every index moving forward (linear in the block). ``first_only``: stop after the
    first assertion (its flag is final when emitted; only its end could still grow).
    """
    out: list[tuple[int, int, bool]] = []
    if whole:
        end = len(m.rstrip())
        _emit(m, out, 0, end, _is_assertion(m, 0, end, None))
        return out
    code: _CodeSpans | None = None
    #: The pairs of the block, found at the first stop that may be inside one: strictly between
    #: the first opener ``lo`` and the last closer ``hi`` (most stops are not, and most blocks
    #: never need the table).
    pairs: _Pairs | None = None
    if m.isascii():  # str.find: no pattern to run for the common case
        paren, quote = m.find("("), m.find('"')
        lo = min(paren, quote) if paren >= 0 and quote >= 0 else max(paren, quote)
        hi = max(m.rfind(")"), m.rfind('"')) if lo >= 0 else -1
    elif (opener := _OPENING_RE.search(m)) is not None:
        lo = opener.start()
        hi = max([m.rfind(c) for c in _CLOSING])
    else:
        lo = hi = -1
    search_stop = _STOP_RE.search
    #: The text the stops are searched in: ``m``, or where a terminator is followed by a quote
    #: mark and no space, ``m`` with every quote mark that closes no quotation read as ``'`` (so
    #: the search skips those in C: ``!"!"…`` has one per two characters).
    text = m
    #: Whether a stop may have only a quote mark after it (then ``_split`` checks it closes a
    #: quotation around it); most blocks have none, and skip that check at every stop.
    unspaced = _UNSPACED_QUOTE_STOP_RE.search(m) is not None
    if unspaced and lo >= 0:
        code = _CodeSpans(m)
        pairs = _Pairs(m, code)
        text = pairs.closing_quotes_only(m)
    #: The start of a run-in label waiting for the sentence it belongs to, or -1.
    label = -1
    label_end = 0
    pos = 0
    size = len(m)
    while True:
        if pos == size:
            break
        if m[pos].isspace():
            found = _NON_SPACE_RE.search(m, pos)
            if found is None:
                break
            pos = found.start()
        start = pos
        while True:
            stop = search_stop(text, pos)
            if stop is None:
                end = len(m.rstrip())
                if pairs is None and lo >= 0 and ("?" in m[start:end] or "？" in m[start:end]):
                    code = code or _CodeSpans(m)
                    pairs = _Pairs(m, code)  # a question mark may be inside a pair
                assertion = _is_assertion(m, start, end, pairs)
                pos = len(m)
            else:
                i = stop.start()
                if m[i] == "`":
                    code = code or _CodeSpans(m)
                    pos = code.end(i)
                    continue
                skip = -1
                if lo < i < hi:
                    if pairs is None:
                        code = code or _CodeSpans(m)
                        pairs = _Pairs(m, code)
                    if (skip := pairs.skip(m, stop, start)) >= 0:
                        pos = skip  # this stop is inside a parenthesis or quotation
                        continue
                if (
                    unspaced
                    and skip != _CLOSES_QUOTE
                    and stop.start("q") >= 0
                    and m[stop.end("run") - 1] not in _CJK_TERMINATORS  # those end anyway
                    and stop.end("att") == stop.end("cl")
                    and not _follows(m, stop.end("cl"))
                ):
                    pos = stop.end("run")  # a quote mark, but no quotation around it closes
                    continue
                branch = stop.lastgroup  # the last group of the alternative that matched
                if branch == "tail":
                    pos = end = stop.end("tail")
                    assertion = False
                elif branch == "att":
                    k, end = stop.span("att")
                    j = stop.end("run")
                    if j - i == 1:
                        if m[i] == "." and i and stop.start("plain") < 0:
                            c = m[i - 1]
                            if c in _LOWER:
                                # The commonest stop, decided here as ``_period_ends`` would: a
                                # word of ASCII lower-case letters with no letter, dot or digit
                                # before it, listed in none of the lists, ends its sentence unless
                                # it opens it as an enumerator with no token after its ``.``.
                                w = i - 1
                                while w and m[w - 1] in _LOWER:
                                    w -= 1
                                if (
                                    not w
                                    or (b := m[w - 1]) in _BOUNDARY
                                    or not (b.isalnum() or b == ".")
                                ) and (word := m[w:i]) not in _LISTED:
                                    if w == start and word in _ENUMERATORS and k == end:
                                        pos = j
                                        continue
                                elif not _period_ends(m, start, i, k, end):
                                    pos = j
                                    continue
                            elif (c.isalpha() or c in _WORD_DOT) and not _period_ends(
                                m, start, i, k, end
                            ):
                                pos = j
                                continue
                        question = m[i] in _QUESTION_MARKS
                    else:
                        run = m[i:j]
                        question = "?" in run or "？" in run
                    assertion = not question or (pairs is not None and pairs.inside(i))
                    pos = stop.end()
                else:
                    end = stop.end("catt")
                    run = m[i : stop.end("cjk")]
                    assertion = not ("?" in run or "？" in run) or (
                        pairs is not None and pairs.inside(i)
                    )
                    pos = stop.end()
            if (
                assertion
                and m[start] in "*_"
                and (m[end - 1] in "*_" or m[end - 2 : end] in _LABEL_ENDS)
                and _is_label(m, start, end)
            ):
                if label >= 0:  # a label followed by a label: no run-in, an assertion
                    _emit(m, out, label, label_end, True)
                label, label_end = start, end
            else:
                if label >= 0:
                    start, label = label, -1
                if m[start].isalnum():  # a sentence (``_emit``'s first test, without a call)
                    out.append((start, end, assertion))
                else:
                    _emit(m, out, start, end, assertion)
            break
        if first_only and out and out[-1][2]:
            return out
    if label >= 0:  # a label no sentence follows: exempt when it is the whole block
        _emit(m, out, label, label_end, bool(out))
    return out


def _is_label(m: str, start: int, end: int) -> bool:
    """Whether ``m[start:end]`` is one emphasis span, optionally ending in ``.`` or ``:``."""
    found = _LABEL_RE.fullmatch(m, start, end)
    return found is not None and found.group(1) not in found.group(2)


def _emit(m: str, out: list[tuple[int, int, bool]], start: int, end: int, assertion: bool) -> None:
    """Add a sentence, or fold a fragment without words into the previous sentence."""
    if m[start].isalnum() or _NO_WORDS_RE.fullmatch(m, start, end) is None:
        out.append((start, end, assertion))
    elif out:
        prev_start, _, prev_assertion = out[-1]
        out[-1] = (prev_start, end, prev_assertion)


def _is_assertion(m: str, start: int, end: int, pairs: _Pairs | None) -> bool:
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
    if any(q in m[pos:run_end] for q in _QUESTION_MARKS):
        return pairs is not None and pairs.inside(pos)  # a question inside a pair is none
    return not (pos == run_end and pos > start and m[pos - 1] in _LEAD_IN_MARKS)


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


def _period_ends(m: str, start: int, i: int, k: int, after: int) -> bool:
    """Whether a single ``.`` at ``i`` (closers up to ``k``, tokens attached up to ``after``) ends
    its sentence (which starts at ``start``), or closes an abbreviation."""
    if m[i - 1] in _DIGITS:  # ``**1. Goals:**``: a number opening a sentence enumerates
        d = i - 1
        while d > start and m[d - 1] in _DIGITS:
            d -= 1
        e = d
        while e > start and m[e - 1] in "*_":
            e -= 1
        return not (e == start and i - d <= _ENUMERATOR_DIGITS)
    w = i
    while w > 0 and (m[w - 1].isalpha() or m[w - 1] == "."):
        w -= 1
    word = m[w:i].lower()
    if not word or (w > 0 and m[w - 1].isdigit()):  # "2023." or "1st." is no abbreviation
        return True
    if after > k:  # a citation token right after the stop ends the sentence, whatever the word
        return True
    if word not in _LISTED and "." not in word and (w > start or len(word) > _ROMAN_MAX):
        # Most words: no abbreviation of any list, no initialism, no enumerator here.
        return len(word) > 1 or not m[w].isupper()
    if word in NEVER_END or (word == "al" and m[max(w - 3, 0) : w].lower() == _ET_AL):
        return False
    if len(word) == 1 and m[w].isupper():  # an initial (``James P. Johnson``)
        return False
    if w == start and _ENUMERATOR_RE.fullmatch(word):  # ``a. Traditional publishing: …``
        return False
    following = _NON_SPACE_RE.search(m, after)
    nxt = m[following.start()] if following is not None else ""
    if word in BEFORE_NUMBER:
        return not nxt.isdigit()
    if word in UNLESS_CAPITAL or _is_initialism(word):
        if following is None or not nxt.isalpha():
            return True
        return nxt.isupper() and _ACRONYM_RE.match(m, following.start()) is None
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


class _Pairs:
    """The matched parentheses and quotations of one block, as the outermost ``(open, close)``
    intervals of each: where a terminator ends nothing. Found in one pass (a stack per kind;
    straight ``"`` paired in order; code spans skipped); an opener never closed in its block
    opens nothing."""

    __slots__ = ("paren_ends", "paren_starts", "quote_ends", "quote_starts")

    def __init__(self, m: str, code: _CodeSpans) -> None:
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
        end the sentence (``_CLOSES_QUOTE``: its closers close the quotation around it). A
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
            if starts[k] != start or closed <= close or not _follows(m, closed):
                return i + 1 if colon else _last_run(m, _run_end(stop), close)
        starts = self.quote_starts
        k = bisect_right(starts, i) - 1
        if k >= 0 and starts[k] < i < (close := self.quote_ends[k]):
            if closed < 0:
                closed = _closers_end(stop)
            if closed <= close:
                return i + 1 if colon else _last_run(m, _run_end(stop), close)
            return _CLOSES_QUOTE
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
    return stop.end("run") if stop.start("run") >= 0 else stop.end("cjk")


def _last_run(m: str, j: int, close: int) -> int:
    """Where to go on from a stop that ends nothing inside a pair closing at ``close`` (its
    terminators end at ``j``): the terminator run right before the closer (closers between
    allowed), the one stop left inside that may end the sentence, else past the closer.
    Each pair is walked back once: the next stop is that run or past the pair."""
    k = close
    while k > j and m[k - 1] in _CLOSERS:
        k -= 1
    r = k
    while r > j and m[r - 1] in _TERMINATORS:
        r -= 1
    return r if r < k else close + 1


def _follows(m: str, k: int) -> bool:
    """Whether what follows ``k`` lets a terminator before it end a sentence."""
    return _FOLLOWS_RE.match(m, k) is not None


def _closers_end(stop: re.Match[str]) -> int:
    """Where the closers after a stop's terminator run end (its start for a colon)."""
    if stop.start("cl") >= 0:
        return stop.end("cl")
    if stop.start("ccl") >= 0:
        return stop.end("ccl")
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


def _is_initialism(word: str) -> bool:
    parts = word.split(".")
    return len(parts) > 1 and all(len(p) == 1 for p in parts)
