"""Rule 7's sentence split of one block (contract v4), written plainly: a test oracle.

``test_sentences.py`` checks that ``worker.core.claims.sentences._split`` (one regex search per
stop,
pairs found once, labels decided as sentences are emitted) finds exactly what this finds, one
character at a time, on random blocks. Do not change it to follow the fast code: change it only
when the rules change (``worker.core.claims.sentences`` documents them).
"""

from __future__ import annotations

import re

from worker.core.citations.tokens import scan_tokens
from worker.core.claims.stops import BEFORE_NUMBER, NEVER_END, UNLESS_CAPITAL

CLOSERS = "\"'”’»)]*_」』）】》〉"
TERMINATORS = ".!?…‽。！？"
CJK_TERMINATORS = "。！？"
QUESTION_MARKS = "?？"
LEAD_IN_MARKS = ":："
OPENERS = {"(": ")", "（": "）", "“": "”", "«": "»", "「": "」", "『": "』"}
PAREN_CLOSERS = ")）"
ROMAN = re.compile(r"[ivx]{2,4}")
BREAK = re.compile(r"<[bB][rR][\s/>]")
BREAK_TAG = re.compile(r"<[bB][rR]\s*/?>")
LETTER = re.compile(r"[^\W\d_]")


class Splitter:
    """One block of text; ``split()`` gives ``(start, end, is_assertion)`` of each sentence."""

    def __init__(self, m: str) -> None:
        self.m = m
        self.token_end = {t.start: t.end for t in scan_tokens(m)}
        self.token_start = {e: s for s, e in self.token_end.items()}
        self.parens, self.quotes = self.pairs()

    # --- inline code and pairs ------------------------------------------------------------------

    def code_span_end(self, i: int) -> int:
        """Past the code span opening at ``i`` (the next run of exactly its width), or past the
        opening run when none closes it."""
        m = self.m
        j = i
        while j < len(m) and m[j] == "`":
            j += 1
        q = j
        while q < len(m):
            if m[q] != "`":
                q += 1
                continue
            r = q
            while r < len(m) and m[r] == "`":
                r += 1
            if r - q == j - i:
                return r
            q = r
        return j

    def pairs(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Matched parentheses and quotations, each kind merged into its outermost regions."""
        m = self.m
        parens: list[tuple[int, int]] = []
        quotes: list[tuple[int, int]] = []
        stacks: dict[str, list[int]] = {}
        straight: int | None = None
        i = 0
        while i < len(m):
            c = m[i]
            if c == "`":
                i = self.code_span_end(i)
                continue
            if c == '"':
                if straight is None:
                    straight = i
                else:
                    quotes.append((straight, i))
                    straight = None
            elif c in OPENERS:
                stacks.setdefault(OPENERS[c], []).append(i)
            elif stacks.get(c):
                (parens if c in PAREN_CLOSERS else quotes).append((stacks[c].pop(), i))
            i += 1
        return merge(parens), merge(quotes)

    # --- the scan -------------------------------------------------------------------------------

    def split(self) -> list[tuple[int, int, bool]]:
        m = self.m
        raw: list[tuple[int, int, bool]] = []
        start: int | None = None
        i = 0
        while i < len(m):
            if start is None:
                while i < len(m) and m[i].isspace():
                    i += 1
                if i == len(m):
                    break
                start = i
            c = m[i]
            if i in self.token_end:
                i = self.token_end[i]
            elif c == "`":
                i = self.code_span_end(i)
            elif c in TERMINATORS:
                end, i = self.terminator(start, i)
                if end is not None:
                    raw.append((start, end, self.question_free(start, end)))
                    start = None
            elif c in LEAD_IN_MARKS:
                end, i = self.colon(i)
                if end is not None:
                    raw.append((start, end, False))
                    start = None
            else:
                i += 1
        if start is not None:
            end = len(m.rstrip())
            raw.append((start, end, self.final_is_assertion(start, end)))
        return self.labels(raw)

    def terminator(self, start: int, i: int) -> tuple[int | None, int]:
        """``(sentence end or None, where to go on)`` for the terminator run at ``i``."""
        m = self.m
        j = i
        while j < len(m) and m[j] in TERMINATORS:
            j += 1
        k = j
        while k < len(m) and m[k] in CLOSERS:
            k += 1
        cjk = m[j - 1] in CJK_TERMINATORS
        spaced = (
            k == len(m)
            or m[k].isspace()
            or k in self.token_end
            or BREAK.match(m, k) is not None
            or m[k : k + 2] == "\\\n"
        )
        quote = region(self.quotes, i)
        # v4: a run whose closers close the quotation around it ends the sentence, whatever
        # follows (``注："……也。"这表明`` is two); one inside a quotation that stays open, nothing.
        closes_quote = quote is not None and k > quote[1]
        if not (cjk or spaced or closes_quote):
            return None, j
        paren = region(self.parens, i)
        if paren is not None and (paren[0] != start or k <= paren[1] or not spaced):
            return None, j
        if quote is not None and not closes_quote:
            return None, j
        if j - i == 1 and m[i] == "." and not cjk and not self.period_ends(start, i, k):
            return None, j
        end = self.attach_tokens(k)
        return end, self.gap(end)

    def colon(self, i: int) -> tuple[int | None, int]:
        """A ``:`` or ``：`` ends a sentence only at the end of its line (closers and tokens
        allowed after it), and never inside a pair."""
        m = self.m
        if region(self.parens, i) is not None or region(self.quotes, i) is not None:
            return None, i + 1
        k = i + 1
        while k < len(m) and m[k] in CLOSERS:
            k += 1
        end = self.attach_tokens(k)
        rest = end
        while rest < len(m) and m[rest] in " \t\r":
            rest += 1
        if rest == len(m) or m[rest] == "\n":
            return end, end
        return None, i + 1

    def gap(self, pos: int) -> int:
        """Past whitespace and hard breaks (``<br>``, a backslash before a newline)."""
        m = self.m
        while pos < len(m):
            if m[pos].isspace():
                pos += 1
            elif (tag := BREAK_TAG.match(m, pos)) is not None:
                pos = tag.end()
            elif m[pos : pos + 2] == "\\\n":
                pos += 1
            else:
                break
        return pos

    def attach_tokens(self, k: int) -> int:
        """The end of the citation tokens (whitespace between allowed) from ``k`` on."""
        m = self.m
        end = pos = k
        while True:
            while pos < len(m) and m[pos].isspace():
                pos += 1
            if pos not in self.token_end:
                return end
            pos = end = self.token_end[pos]

    def period_ends(self, start: int, i: int, k: int) -> bool:
        """Whether the single ``.`` at ``i`` (closers up to ``k``) ends its sentence."""
        m = self.m
        if i > 0 and "0" <= m[i - 1] <= "9":  # a number: an enumerator if it opens the sentence
            d = i - 1
            while d > start and "0" <= m[d - 1] <= "9":
                d -= 1
            before = m[start:d]
            return not (before.strip("*_") == "" and i - d <= 3)
        if i == 0 or not (m[i - 1].isalpha() or m[i - 1] == "."):
            return True
        w = i
        while w > 0 and (m[w - 1].isalpha() or m[w - 1] == "."):
            w -= 1
        word = m[w:i].lower()
        if not word or (w > 0 and m[w - 1].isdigit()):
            return True
        after = self.attach_tokens(k)
        if after > k:  # a token right after the stop
            return True
        if word in NEVER_END or (word == "al" and m[max(w - 3, 0) : w].lower() == "et "):
            return False
        if len(word) == 1 and m[w].isupper():
            return False
        if w == start and ((len(word) == 1 and "a" <= word <= "z") or ROMAN.fullmatch(word)):
            return False
        while after < len(m) and m[after].isspace():
            after += 1
        nxt = m[after] if after < len(m) else ""
        if word in BEFORE_NUMBER:
            return not nxt.isdigit()
        parts = word.split(".")
        if word in UNLESS_CAPITAL or (len(parts) > 1 and all(len(p) == 1 for p in parts)):
            if not nxt.isalpha():
                return True
            return nxt.isupper() and not self.acronym(after)
        return True

    def acronym(self, at: int) -> bool:
        """A word of two or more ASCII capitals or digits, starting with a capital, at ``at``."""
        m = self.m
        if not ("A" <= m[at] <= "Z"):
            return False
        e = at + 1
        while e < len(m) and ("A" <= m[e] <= "Z" or "0" <= m[e] <= "9"):
            e += 1
        if e - at < 2:
            return False
        return e == len(m) or LETTER.match(m, e) is None

    # --- what a sentence is ---------------------------------------------------------------------

    def inside(self, i: int) -> bool:
        return region(self.parens, i) is not None or region(self.quotes, i) is not None

    def question_free(self, start: int, end: int) -> bool:
        """A sentence ended by a terminator: False when its run (outside pairs) has ``?``."""
        m = self.m
        pos = end
        while pos > start:  # back over tokens, whitespace and closers to the run
            if m[pos - 1].isspace():
                pos -= 1
            elif pos in self.token_start and self.token_start[pos] >= start:
                pos = self.token_start[pos]
            elif m[pos - 1] in CLOSERS:
                pos -= 1
            else:
                break
        run_start = pos
        while run_start > start and m[run_start - 1] in TERMINATORS:
            run_start -= 1
        run = m[run_start:pos]
        return not any(q in run for q in QUESTION_MARKS) or self.inside(run_start)

    def final_is_assertion(self, start: int, end: int) -> bool:
        """The block's last sentence, which no terminator needed to end."""
        m = self.m
        pos = end
        while pos > start:
            if m[pos - 1].isspace():
                pos -= 1
            elif pos in self.token_start and self.token_start[pos] >= start:
                pos = self.token_start[pos]
            elif m[pos - 1] in CLOSERS:
                pos -= 1
            else:
                break
        run_end = pos
        while pos > start and m[pos - 1] in TERMINATORS:
            pos -= 1
        if any(q in m[pos:run_end] for q in QUESTION_MARKS):
            return self.inside(pos)
        return not (pos == run_end and pos > start and m[pos - 1] in LEAD_IN_MARKS)

    def has_words(self, start: int, end: int) -> bool:
        i = start
        while i < end:
            if i in self.token_end and self.token_end[i] <= end:
                i = self.token_end[i]
            elif self.m[i].isalnum():
                return True
            else:
                i += 1
        return False

    def is_label(self, start: int, end: int) -> bool:
        """One emphasis span (``*``, ``**``, ``***`` or ``_`` runs), optionally then ``.``,
        ``:`` or ``：``; the first reading that fits, as a regular expression would find it."""
        text = self.m[start:end]
        for width in (3, 2, 1):
            delim = text[:width]
            if len(delim) < width or delim not in ("*" * width, "_" * width):
                continue
            for cut in (1, 0) if text[-1:] in ".:：" else (0,):
                body = text[: len(text) - cut]
                inner = body[width : len(body) - width]
                if (
                    len(body) >= 2 * width + 1
                    and body.endswith(delim)
                    and not inner[:1].isspace()
                    and not inner[-1:].isspace()
                    and inner
                ):
                    return delim not in inner
        return False

    def labels(self, raw: list[tuple[int, int, bool]]) -> list[tuple[int, int, bool]]:
        """Run-in labels join the sentence after them; a label alone in its block is exempt;
        fragments without words join the sentence before them."""
        out: list[tuple[int, int, bool]] = []

        def emit(start: int, end: int, assertion: bool) -> None:
            if self.has_words(start, end):
                out.append((start, end, assertion))
            elif out:
                out[-1] = (out[-1][0], end, out[-1][2])

        label: tuple[int, int] | None = None
        for first, end, assertion in raw:
            if assertion and self.m[first] in "*_" and self.is_label(first, end):
                if label is not None:
                    emit(label[0], label[1], True)
                label = (first, end)
                continue
            emit(first if label is None else label[0], end, assertion)
            label = None
        if label is not None:
            emit(label[0], label[1], bool(out))
        return out


def merge(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping intervals merged into one."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(pairs):
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def region(regions: list[tuple[int, int]], i: int) -> tuple[int, int] | None:
    """The region ``i`` is strictly inside, if any."""
    for s, e in regions:
        if s < i < e:
            return s, e
    return None


def split(m: str) -> list[tuple[int, int, bool]]:
    return Splitter(m).split()
