"""The stop grammar of rule 7: where an assertion sentence may end (``worker.core.claims.sentences``
documents the rules).

The abbreviation lists, the terminators and closers, the one compiled pattern that finds the next
stop of a sentence (``STOP_RE``, one C-level search per stop), and ``period_ends``, which decides
a single ``.`` after a word the pattern leaves open (an abbreviation, an initial, an enumerator).
"""

from __future__ import annotations

import itertools
import re

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

CLOSERS = "\"'”’»)]*_」』）】》〉"
TERMINATORS = ".!?…‽。！？"
#: Terminators that end a sentence with nothing after them (CJK text has no spaces).
CJK_TERMINATORS = "。！？"
QUESTION_MARKS = "?？"
LEAD_IN_MARKS = ":："
NON_SPACE_RE = re.compile(r"\S")

#: A citation token (the grammar of ``worker.core.citations.extraction``, overlong ids included).
#: The grammar
#: has no context, so the tokens of a block are exactly this pattern's matches in its text.
_TOKEN = r"\[(?:OBS|DOC|EVT)-[0-9]++\]"  # noqa: S105 -- a pattern, not a password
_CLOSER_SET = f"[{re.escape(CLOSERS)}]"
#: Closers that can close a quotation (``Pairs``), and the others.
QUOTE_CLOSERS = '"”»」』'
_QUOTE_CLOSER_SET = f"[{re.escape(QUOTE_CLOSERS)}]"
_OTHER_CLOSER_SET = "[%s]" % re.escape("".join(c for c in CLOSERS if c not in QUOTE_CLOSERS))  # noqa: UP031
_TERM_SET = f"[{re.escape(TERMINATORS)}]"
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
    ``(``, ``[`` or the start of the block before the word. Only there does ``period_ends``
    read exactly that word (it walks back over letters and dots, and a digit before makes it no
    abbreviation); anywhere else the stop is left to it."""
    out = []
    for length in sorted({len(w) for w in words}):
        alt = "|".join(_either_case(w) for w in sorted(words) if len(w) == length)
        out.append(rf"(?<=[\s(\[](?:{alt})\.)|(?<=^(?:{alt})\.)")
    return "|".join(out)


#: A single ``.`` (just consumed) that closes an abbreviation ``period_ends`` keeps open in any
#: case: one of ``NEVER_END`` with no citation token next, or of ``BEFORE_NUMBER`` with
#: whitespace and an ASCII digit next (``No. 7``). The stop pattern does not stop there, which
#: saves a Python step per such abbreviation; every other single ``.`` after a letter is still
#: decided by ``period_ends``.
_KEPT_OPEN = (
    rf"(?<=[A-Za-z]\.)(?!{_TERM_SET})"  # a cheap test first: most stops fail it
    # (each branch tests first what its every word needs: two letters or dots before the ``.``,
    # a digit after the whitespace)
    rf"(?:(?<=[A-Za-z.]{{2}}\.)(?:{_after_word(NEVER_END)})(?!{_CLOSER_SET}*+\s*+{_TOKEN})"
    rf"|(?=\s++[0-9])(?:{_after_word(BEFORE_NUMBER)}))"
)
#: A ``.`` (just consumed) after five lower-case ASCII letters that make no listed word: no
#: abbreviation, initial or enumerator can end so, so ``period_ends`` need not be asked (the
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
#:   (``q``: ``sentences._split`` keeps the stop only if that closer closes the quotation around
#:   the run, contract v4): ``att`` ends where the sentence would, the match where the next one
#:   may start (past whitespace and hard breaks);
#: - a terminator run ending in a CJK terminator (``cjk``), its closers and attached tokens
#:   (``catt``), whatever follows.
#: Any other run ends nothing. Runs are whole: the scan never starts inside one, and a match
#: only starts at a run's first terminator (``_RUN_START``), so each run is read once. Tokens
#: need no stop: they hold none of these characters, so stepping over one changes nothing.
STOP_RE = re.compile(
    # The pattern opens with the set of every first character, so ``re`` compiles it a charset
    # prefix and skips to the next candidate in C (~3 ns a character); each alternative then
    # looks back at the one character consumed. (A look-ahead first gets no prefix: the whole
    # matcher ran at every position, ~9 ns a character.)
    rf"[`:：{TERMINATORS}](?:"
    r"(?<=`)"
    rf"|(?<=[:：])(?=(?P<tail>{_CLOSER_SET}*+(?:\s*+{_TOKEN})*+)[ \t\r]*+(?:\n|\Z))"
    rf"|{_RUN_START}(?!{_KEPT_OPEN}){_PLAIN}(?P<run>{_TERM_SET}*+)"
    rf"(?P<cl>{_OTHER_CLOSER_SET}*+(?:(?P<q>{_QUOTE_CLOSER_SET}){_CLOSER_SET}*+)?)"
    rf"(?P<att>(?:\s*+{_TOKEN})++|{_FOLLOW}|(?(q)|(?!))){_GAP}"
    rf"|{_RUN_START}(?P<cjk>{_TERM_SET}*+)(?<=[{CJK_TERMINATORS}])(?P<ccl>{_CLOSER_SET}*+)"
    rf"(?P<catt>(?:\s*+{_TOKEN})*+){_GAP}"
    r")"
)
#: ``STOP_RE``'s groups by number: ``Match.start(RUN)`` skips the look-up of a group's name
#: that ``Match.start("run")`` makes (several per stop); ``Match.lastindex`` is ``TAIL``, ``ATT``
#: or ``CATT``, the last group of the alternative that matched.
TAIL, PLAIN, RUN, CL, Q, ATT, CJK, CCL, CATT = (
    STOP_RE.groupindex[name]
    for name in ("tail", "plain", "run", "cl", "q", "att", "cjk", "ccl", "catt")
)
#: A terminator whose closers hold a quote mark and no whitespace, token or break follows: the
#: one place the stop pattern's ``q`` decides (``sentences._split`` then reads only the closing
#: marks).
UNSPACED_QUOTE_STOP_RE = re.compile(
    rf"{_TERM_SET}{_OTHER_CLOSER_SET}*+{_QUOTE_CLOSER_SET}{_CLOSER_SET}*+(?!{_FOLLOWS_RE.pattern})"
)
#: Text with no letter or digit outside tokens (``[\W_]`` is exactly ``not str.isalnum()``).
NO_WORDS_RE = re.compile(rf"(?:{_TOKEN}|[\W_])*+")
DIGITS = frozenset("0123456789")
#: Before a single ``.``, what may end an abbreviation or an enumerator: a dot, an ASCII digit.
WORD_DOT = frozenset(".0123456789")
#: ASCII lower-case letters: the words the scanner decides without asking ``period_ends``.
LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
#: Common characters before a word that are no letter, dot or digit (a cheap test first).
BOUNDARY = frozenset(" \n\t([{\"'*_")
#: The longest number that enumerates when it opens a sentence (``12.``, not ``2023.``).
_ENUMERATOR_DIGITS = 3
#: A word of two or more capitals (``UTC``, ``CFO``): after ``p.m.`` or ``Inc.``, not a new
#: sentence's first word.
_ACRONYM_RE = re.compile(r"[A-Z][A-Z0-9]++(?![^\W\d_])")
#: Every word of the lists (``al`` of ``et al.`` included): any other word ends its sentence,
#: unless it is an initial or an enumerator.
LISTED = NEVER_END | BEFORE_NUMBER | UNLESS_CAPITAL | {"al"}
#: The longest roman-numeral enumerator (``viii``).
_ROMAN_MAX = 4
#: An enumerator that starts a sentence without being a list marker (``a.``, ``iv.``).
_ENUMERATOR_RE = re.compile(r"[a-z]|[ivx]{2,4}")
#: The words ``_ENUMERATOR_RE`` matches whole (a set lookup where the word is known lower-case).
ENUMERATORS = frozenset(LOWER) | frozenset(
    "".join(p) for n in range(2, _ROMAN_MAX + 1) for p in itertools.product("ivx", repeat=n)
)


#: A word that may be an enumerator opening a sentence (``a.``, ``iv.``), its ``.`` alone with
#: whitespace after it and no token attached (``sentences._split`` steps over it: see there).
OPENING_ENUMERATOR_RE = re.compile(r"[a-z]{1,4}(?=\.\s)(?!\.\s*+\[)")


def period_ends(m: str, start: int, i: int, k: int, after: int) -> bool:
    """Whether a single ``.`` at ``i`` (closers up to ``k``, tokens attached up to ``after``) ends
    its sentence (which starts at ``start``), or closes an abbreviation."""
    if m[i - 1] in DIGITS:  # ``**1. Goals:**``: a number opening a sentence enumerates
        d = i - 1
        while d > start and m[d - 1] in DIGITS:
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
    if word not in LISTED and "." not in word and (w > start or len(word) > _ROMAN_MAX):
        # Most words: no abbreviation of any list, no initialism, no enumerator here.
        return len(word) > 1 or not m[w].isupper()
    if word in NEVER_END or (word == "al" and m[max(w - 3, 0) : w].lower() == _ET_AL):
        return False
    if len(word) == 1 and m[w].isupper():  # an initial (``James P. Johnson``)
        return False
    if w == start and _ENUMERATOR_RE.fullmatch(word):  # ``a. Traditional publishing: …``
        return False
    following = NON_SPACE_RE.search(m, after)
    nxt = m[following.start()] if following is not None else ""
    if word in BEFORE_NUMBER:
        return not nxt.isdigit()
    if word in UNLESS_CAPITAL or _is_initialism(word):
        if following is None or not nxt.isalpha():
            return True
        return nxt.isupper() and _ACRONYM_RE.match(m, following.start()) is None
    return True


def follows(m: str, k: int) -> bool:
    """Whether what follows ``k`` lets a terminator before it end a sentence."""
    return _FOLLOWS_RE.match(m, k) is not None


def _is_initialism(word: str) -> bool:
    parts = word.split(".")
    return len(parts) > 1 and all(len(p) == 1 for p in parts)
