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

This module is the public API and the one-pass splitter of a block; the stop grammar (the lists,
the stop pattern, ``period_ends``) is ``stops``, the parentheses, quotations and code spans
``pairs``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from worker.core.claims.markdown import BLOCK_STARTS, blocks, mask
from worker.core.claims.pairs import CLOSES_QUOTE, CLOSING, OPENING_RE, CodeSpans, Pairs
from worker.core.claims.stops import (
    ATT,
    BOUNDARY,
    CATT,
    CJK,
    CJK_TERMINATORS,
    CL,
    CLOSERS,
    DIGITS,
    ENUMERATORS,
    LEAD_IN_MARKS,
    LISTED,
    LOWER,
    NO_WORDS_RE,
    NON_SPACE_RE,
    OPENING_ENUMERATOR_RE,
    PLAIN,
    QUESTION_MARKS,
    RUN,
    STOP_RE,
    TAIL,
    TERMINATORS,
    UNSPACED_QUOTE_STOP_RE,
    WORD_DOT,
    Q,
    follows,
    period_ends,
)


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


#: How a label may end: its emphasis marker, then ``.``, ``:`` or ``：`` (a cheap test first).
_LABEL_ENDS = frozenset(a + b for a in "*_" for b in ".:：")
#: A sentence that is one emphasis span (``**Core idea.**``, ``*Summary*:``): a label.
_LABEL_RE = re.compile(r"(\*{1,3}|_{1,3})(?=\S)(.*?\S)\1[.:：]?", re.DOTALL)


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
    code: CodeSpans | None = None
    #: The pairs of the block, found at the first stop that may be inside one: strictly between
    #: the first opener ``lo`` and the last closer ``hi`` (most stops are not, and most blocks
    #: never need the table).
    pairs: Pairs | None = None
    if m.isascii():  # str.find: no pattern to run for the common case
        paren, quote = m.find("("), m.find('"')
        lo = min(paren, quote) if paren >= 0 and quote >= 0 else max(paren, quote)
        hi = max(m.rfind(")"), m.rfind('"')) if lo >= 0 else -1
    elif (opener := OPENING_RE.search(m)) is not None:
        lo = opener.start()
        hi = max([m.rfind(c) for c in CLOSING])
    else:
        lo = hi = -1
    search_stop = STOP_RE.search
    no_words = NO_WORDS_RE.fullmatch
    #: The text the stops are searched in: ``m``, or where a terminator is followed by a quote
    #: mark and no space, ``m`` with every quote mark that closes no quotation read as ``'`` (so
    #: the search skips those in C: ``!"!"…`` has one per two characters).
    text = m
    #: Whether a stop may have only a quote mark after it (then ``_split`` checks it closes a
    #: quotation around it); most blocks have none, and skip that check at every stop.
    unspaced = UNSPACED_QUOTE_STOP_RE.search(m) is not None
    if unspaced and lo >= 0:
        code = CodeSpans(m)
        pairs = Pairs(m, code)
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
            found = NON_SPACE_RE.search(m, pos)
            if found is None:
                break
            pos = found.start()
        start = pos
        if (c := m[pos]) in LOWER:
            # The stop at the ``.`` of an enumerator opening the sentence would end nothing (as
            # below): the search starts past it (``a. a. a.``: one stop a sentence, not two).
            if m[pos + 1 : pos + 2] == ".":
                # One letter: ``OPENING_ENUMERATOR_RE``'s test without the pattern (a call per
                # sentence of ``a. a. a.``) where what follows the whitespace after the ``.`` is
                # within the five characters read, and so is no ``[`` (a token after it: the
                # stop ends the sentence).
                after = m[pos + 2 : pos + 7]
                if (
                    "[" not in after
                    and after[:1].isspace()
                    and c not in LISTED
                    and (not after.isspace() or OPENING_ENUMERATOR_RE.match(m, pos) is not None)
                    and not lo < pos + 1 < hi
                    and (not pos or m[pos - 1].isspace())
                ):
                    pos += 2
            elif (
                c in "ivx"  # cheap tests first (a token after it: the stop ends the sentence)
                and "[" not in m[pos + 2 : pos + 7]
                and (enumerator := OPENING_ENUMERATOR_RE.match(m, pos)) is not None
                and (word := enumerator.group()) in ENUMERATORS
                and word not in LISTED
                and not lo < (dot := enumerator.end()) < hi
                and (not pos or m[pos - 1].isspace())
            ):
                pos = dot + 1
        while True:
            stop = search_stop(text, pos)
            if stop is None:
                end = len(m.rstrip())
                if pairs is None and lo >= 0 and ("?" in m[start:end] or "？" in m[start:end]):
                    code = code or CodeSpans(m)
                    pairs = Pairs(m, code)  # a question mark may be inside a pair
                assertion = _is_assertion(m, start, end, pairs)
                pos = len(m)
            else:
                i = stop.start()
                if m[i] == "`":
                    code = code or CodeSpans(m)
                    pos = code.end(i)
                    continue
                skip = -1
                if lo < i < hi:
                    if pairs is None:
                        code = code or CodeSpans(m)
                        pairs = Pairs(m, code)
                    if (skip := pairs.skip(m, stop, start)) >= 0:
                        pos = skip  # this stop is inside a parenthesis or quotation
                        continue
                if (
                    unspaced
                    and skip != CLOSES_QUOTE
                    and stop.start(Q) >= 0
                    and m[stop.end(RUN) - 1] not in CJK_TERMINATORS  # those end anyway
                    and stop.end(ATT) == stop.end(CL)
                    and not follows(m, stop.end(CL))
                ):
                    pos = stop.end(RUN)  # a quote mark, but no quotation around it closes
                    continue
                branch = stop.lastindex  # the last group of the alternative that matched
                if branch == TAIL:
                    pos = end = stop.end(TAIL)
                    assertion = False
                elif branch == ATT:
                    k, end = stop.span(ATT)
                    j = stop.end(RUN)
                    if j - i == 1:
                        if m[i] == "." and i and stop.start(PLAIN) < 0:
                            c = m[i - 1]
                            if c in LOWER:
                                # The commonest stop, decided here as ``period_ends`` would: a
                                # word of ASCII lower-case letters with no letter, dot or digit
                                # before it, listed in none of the lists, ends its sentence unless
                                # it opens it as an enumerator with no token after its ``.``.
                                w = i - 1
                                while w and m[w - 1] in LOWER:
                                    w -= 1
                                if (
                                    not w
                                    or (b := m[w - 1]) in BOUNDARY
                                    or not (b.isalnum() or b == ".")
                                ) and (word := m[w:i]) not in LISTED:
                                    if w == start and word in ENUMERATORS and k == end:
                                        pos = j
                                        continue
                                elif not period_ends(m, start, i, k, end):
                                    pos = j
                                    continue
                            elif (c.isalpha() or c in WORD_DOT) and not period_ends(
                                m, start, i, k, end
                            ):
                                pos = j
                                continue
                        question = m[i] in QUESTION_MARKS
                    else:
                        run = m[i:j]
                        question = "?" in run or "？" in run
                    assertion = not question or (pairs is not None and pairs.inside(i))
                    pos = stop.end()
                else:
                    end = stop.end(CATT)
                    run = m[i : stop.end(CJK)]
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
                if m[start].isalnum() or no_words(m, start, end) is None:
                    out.append((start, end, assertion))  # a sentence (``_emit``, without a call:
                    # one a sentence where each opens with a parenthesis or a quotation mark)
                else:
                    _emit(m, out, start, end, assertion)  # a fragment without words
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
    if m[start].isalnum() or NO_WORDS_RE.fullmatch(m, start, end) is None:
        out.append((start, end, assertion))
    elif out:
        prev_start, _, prev_assertion = out[-1]
        out[-1] = (prev_start, end, prev_assertion)


def _is_assertion(m: str, start: int, end: int, pairs: Pairs | None) -> bool:
    """False for a question or a sentence ending in ``:`` (trailing tokens, closers ignored)."""
    pos = end
    while pos > start:
        if m[pos - 1].isspace():
            pos -= 1
        elif (token := _token_ending_at(m, start, pos)) is not None:
            pos = token
        elif m[pos - 1] in CLOSERS:
            pos -= 1
        else:
            break
    run_end = pos
    while pos > start and m[pos - 1] in TERMINATORS:
        pos -= 1
    if any(q in m[pos:run_end] for q in QUESTION_MARKS):
        return pairs is not None and pairs.inside(pos)  # a question inside a pair is none
    return not (pos == run_end and pos > start and m[pos - 1] in LEAD_IN_MARKS)


def _token_ending_at(m: str, start: int, pos: int) -> int | None:
    """The start of the token ``m[t:pos]`` with ``t >= start``, if there is one.

    Linear overall: the digits looked at belong to the token (skipped next), or the walk stops.
    """
    if m[pos - 1] != "]":
        return None
    d = pos - 1
    while d > start and m[d - 1] in DIGITS:
        d -= 1
    t = d - 5
    if d < pos - 1 and t >= start and m[t] == "[" and m[t + 1 : d] in ("OBS-", "DOC-", "EVT-"):
        return t
    return None
