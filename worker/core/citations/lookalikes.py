"""Citation look-alikes: text a reader takes for a citation token that the grammar does not match.

``[DOC-７３００２]`` (full-width digits), ``［DOC-73002］``, ``[DOC-7\u200b3002]`` (a zero-width
space), ``&#91;DOC-73002&#93;``, ``\\[DOC-73002\\]`` (Markdown renders it ``[DOC-73002]``),
``\\u005bDOC-73002\\u005d`` and ``[doc 73002]`` all show an id to a reader, yet none is a token of
``\\[(OBS|DOC|EVT)-([0-9]+)\\]``: none would be resolved, so none would be redacted. The worker
therefore finds them and treats them as the agent's error (``schema_invalid`` with the path: the
agent must write the real token), and removes them from every string it publishes, like a hidden
token (contract §3.5).

What counts (decided, and recorded in ``docs/decisions.md``): after *decoding* — HTML character
references (``&#91;``, ``&#x5B;``, ``&lsqb;`` …), backslash escapes (``\\[``, ``\\u005b``,
``\\x5b``), NFKD, case folding, a small table of Latin look-alike letters (Cyrillic and Greek
``О``, ``С``, ``Е``, ``Т``, ``В``, ``Ѕ``…) and bracket/dash look-alikes (``【``, ``〔``, ``⟦``,
``–``, ``—``, ``−``…), and *dropping* format characters (zero-width spaces and joiners, soft
hyphens, bidi controls: category ``Cf``), combining marks (``Mn``, so accents), other
default-ignorable characters, inline Markdown emphasis and code markers, inline HTML tags and a
block quote's ``>`` after a line break — the text holds
``[`` kind ``-`` digits ``]``, where the kind is ``obs``, ``doc`` or ``evt``, the dash may be
missing, whitespace may stand around the parts and the digits are any decimal digits; and the
original text at that place is not exactly a token of the grammar (a ``\\`` escaping its ``[`` is
allowed: ``\\[DOC-5]`` renders as the token it contains, which is extracted).

Linear time, mostly in C: one search over the whole string (real tokens blanked) says whether a
look-alike may be there at all, the common answer being no; ``_plain_patterns`` gives the regexes
(exact on text with nothing to decode, a superset elsewhere). Only places a regex cannot decide
run the Python automaton ``_match_at``, and no two of its reads overlap. Decided list and
figures: ``docs/decisions.md``, ``python -m dev.bench.adversarial``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from worker.core.citations.lookalike_units import (
    DROP,
    FOLD,
    IGNORABLE,
    REFERENCE,
    fold,
    read_unit,
)
from worker.core.citations.paths import walk_strings
from worker.core.citations.tokens import TOKEN_RE

#: An ASCII ``[`` that does not open a real token (the look-ahead keeps real tokens, the common
#: case, out of the Python loop). One literal-prefix search: alternatives would cost ~5 x more.
#: What can never follow the ``[`` of a look-alike (JSON's own arrays start ``[{``, ``["``,
#: ``[[``, ``[1``) is left out the same way.
_OPEN = re.compile(r"\[(?!(?:OBS|DOC|EVT)-[0-9]++\]|[{\"\[\]0-9,])")
_OPEN_BYTES = re.compile(_OPEN.pattern.encode())
#: A token of the grammar, of any length (``x`` stands for one where no look-alike may hold it).
_REAL_TOKEN = re.compile(r"\[(?:OBS|DOC|EVT)-[0-9]++\]")
#: Every character but ``[`` that ``fold`` turns into one or more ``[`` (a test enumerates them).
_OTHER_STARTS = (
    "\uff3b\ufe47【〔〖〘〚⟦⁅❲⦋⦍⦏⟬⟮⸢⸤\ufe17\ufe39\ufe3b\ufe5d\U0001f12a"
    "\U0001f240\U0001f241\U0001f242\U0001f243\U0001f244\U0001f245\U0001f246\U0001f247"
    "\U0001f248"
)
#: Every character but ``]`` that ``fold`` turns into ``]`` (the same test).
_OTHER_ENDS = (
    "\uff3d\ufe48】〕〗〙〛⟧⁆❳⦌⦎⦐⟭⟯⸣⸥\ufe18\ufe3a\ufe3c\ufe5e\U0001f12a" + _OTHER_STARTS[-9:]
)
#: Every character that reads as a square bracket once folded: a text without any of these (nor
#: ``&`` and ``\\``, which can spell one) holds no look-alike.
BRACKET_LIKE = "[]" + _OTHER_STARTS + _OTHER_ENDS
#: Where a character reference or escape can spell a bracket. Names: every HTML5 entity whose
#: character folds to one; numbers: every BMP code point that does (a test checks both lists).
_OPEN_CODES = [ord("[")] + [ord(c) for c in _OTHER_STARTS if ord(c) <= 0xFFFF]
_CLOSE_CODES = [ord("]")] + [ord(c) for c in _OTHER_ENDS if ord(c) <= 0xFFFF]
_OPEN_NAMES = "LeftDoubleBracket|lbbrk|lbrack|lbrke|lbrksld|lbrkslu|loang|lobrk|lsqb"
_CLOSE_NAMES = "RightDoubleBracket|rbbrk|rbrack|rbrke|rbrksld|rbrkslu|roang|robrk|rsqb"


def _refs(codes: list[int], names: str) -> str:
    """A pattern of the character references of ``codes`` and of the entities ``names``."""
    dec = "|".join(str(c) for c in codes)
    hexa = "|".join(f"{c:x}" for c in codes)
    return rf"&(?:#0*(?:{dec})(?![0-9]);?|#[xX]0*(?i:{hexa})(?![0-9a-fA-F]);?|(?:{names});)"


_OPEN_REFS = _refs(_OPEN_CODES, _OPEN_NAMES)
_CLOSE_REFS = _refs(_CLOSE_CODES, _CLOSE_NAMES)
_OPEN_HEX4 = "(?i:" + "|".join(f"{c:04x}" for c in _OPEN_CODES) + ")"
_CLOSE_HEX4 = "(?i:" + "|".join(f"{c:04x}" for c in _CLOSE_CODES) + ")"
#: A reference or escape that spells an opening bracket: the only ones a look-alike starts with
#: (so every try reads a ``[`` first).
_ESCAPED_OPEN = re.compile(rf"{_OPEN_REFS}|\\(?:\[|u{_OPEN_HEX4}|x5[bB])")
#: The same in JSON text: a reference, or JSON's own ``\\u`` escape of an opening bracket.
_ESCAPED_OPEN_JSON = re.compile(rf"{_OPEN_REFS}|\\u{_OPEN_HEX4}")
_KINDS = frozenset({"obs", "doc", "evt"})
#: How many tries ``json_may_hold`` runs in Python before it answers "maybe".
_JSON_TRIES = 64
#: Inline Markdown a renderer turns into formatting, not text, inside a look-alike.
_INLINE_MARKS = frozenset("*~`")


def _plain_patterns(json: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """``_match_at`` as C-level regexes: ``full`` and ``viable``.

    ``full`` matches exactly the look-alikes ``_match_at`` finds in plain text (ASCII but ``&``
    and ``\\``, with HTML tags), opening with a one-character bracket: ``_`` emphasises unless
    it follows a letter of the kind, ``>`` continues a block quote after a line break,
    whitespace never splits the kind. ``viable`` is a superset of every look-alike: an opening
    bracket (or a reference or escape of one), then units a look-alike may hold (plain ones,
    tags, references and escapes, non-ASCII characters but brackets), then a closing bracket.
    A try ``full`` does not match runs in Python only when ``viable`` does. In JSON text,
    whitespace and non-ASCII characters may be JSON escapes (``\\n``, ``\\u000b``...).
    """
    tag_max = 1536 if json else 256  # a JSON escape is at most six characters
    body = r"[^<>\[\]\n]"
    tag = (
        rf"(?:</?[A-Za-z][A-Za-z0-9-]{{0,31}}(?:[\s/]{body}{{0,{tag_max}}})?>"
        rf"|<!--(?:-?>|{body}{{0,{tag_max}}}-->))"
    )
    if json:
        spi = r"(?:[ ]|\\[tf]|\\u00(?:0[9bBcC]|1[c-fC-F]))"
        nl = r"(?:\\[nr]|\\u000[aAdD])"
        closing = rf"(?:{_CLOSE_REFS}|\\u{_CLOSE_HEX4})"
        escape = r"\\(?:[bfnrt\"/]|u[0-9a-fA-F]{4})"
    else:
        spi = "[ \t\x0b\x0c\x1c-\x1f\x85\u1680\u2028\u2029]"  # what NFKD leaves a space
        nl = "[\n\r]"
        closing = rf"(?:{_CLOSE_REFS}|\\(?:\]|u{_CLOSE_HEX4}|x5[dD]))"
        escape = r"\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[!-/:-@\[-`{-~]|\r?\n)"
    sp = f"(?:{spi}|{nl})"
    line = rf"(?:{nl}(?:[*~`_>]|{sp}|{tag})*+)?"  # after a line break, a quote's ``>`` too
    free = rf"(?:[*~`_]|{spi}|{tag})*+{line}"  # after a character that is no letter or digit
    in_kind = rf"{tag}*+(?:[*~`](?:[*~`_]|{tag})*+)?"  # no space; ``_`` only after a mark
    after_kind = rf"{tag}*+(?:(?:[*~`]|{spi})(?:[*~`_]|{spi}|{tag})*+)?{line}"
    kind = (
        rf"(?:[oO]{in_kind}[bB]{in_kind}[sS]|[dD]{in_kind}[oO]{in_kind}[cC]"
        rf"|[eE]{in_kind}[vV]{in_kind}[tT])"
    )
    opens = "\\[" + "".join(c for c in _OTHER_STARTS if fold(c) == "[")
    digit = "[0-9]" if json else r"\d"  # ``isdecimal``: any script's decimal digits
    digits = rf"{digit}(?:(?:[*~`_]|{tag})*+{digit})*+"
    full = rf"[{opens}]{free}{kind}{after_kind}(?:-{free})?{digits}{free}\]"
    brackets = "".join(c for c in _OTHER_STARTS + _OTHER_ENDS if c not in "[]")
    # ``full`` reads plain units exactly; a try of plain units only is decided by it alone.
    plain = rf"(?:[A-Za-z0-9*~`_>-]|{sp}|{tag})"
    # A bracket, or a reference or escape of one, is never a unit: it ends every try but its
    # own (so tries read disjoint stretches, as ``_match_at``'s do).
    escaped_open = (_ESCAPED_OPEN_JSON if json else _ESCAPED_OPEN).pattern
    not_bracket = f"(?!{closing}|{escaped_open})"
    decoded = rf"(?:[^\x00-\x7f{brackets}]|{not_bracket}{REFERENCE}|{not_bracket}{escape})"
    unit = f"(?:{plain}|{decoded})"
    ends = "".join(c for c in _OTHER_ENDS if fold(c) == "]")
    end = rf"(?:\]|[{ends}]|{closing})"
    odd_opens = opens.removeprefix("\\[")
    viable = (
        rf"(?:[{odd_opens}]|{escaped_open}){unit}*+{end}"
        rf"|\[{plain}*+(?:{decoded}{unit}*+{end}|[{ends}]|{closing})"
    )
    return re.compile(full), re.compile(viable)


def lookalike_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` in ``text`` of every citation look-alike, in order, not overlapping."""
    return list(_spans(text))


def lookalike_paths(output: Mapping[str, Any]) -> list[str]:
    """Paths of the strings of ``output`` that hold a citation look-alike, in document order."""
    return [path for path, text in walk_strings(output) if next(_spans(text), None) is not None]


def _spans(text: str) -> Iterator[tuple[int, int]]:
    """``lookalike_spans``, one at a time (a caller that needs one stops at the first)."""
    # One or two C-level searches say whether any look-alike may be there (real tokens
    # blanked); the common answer is no. With nothing to decode but characters, ``full`` over
    # the folded text is exact; else ``viable`` is a superset.
    blank = _REAL_TOKEN.sub("x", text) if "[" in text else text
    if "&" not in text and "\\" not in text and "<" not in text:
        if _FULL.search(blank if blank.isascii() else _fold_all(blank)) is None:
            return
    elif _FULL.search(blank) is None and _VIABLE.search(blank) is None:
        return
    after = 0
    for at in _candidates(text, json=False):
        if at < after:
            continue  # inside the previous look-alike
        end = _try(text, at, json=False)
        if end is not None:
            if text.startswith("\\[", at) and TOKEN_RE.fullmatch(text, at + 1, end) is not None:
                continue  # ``\[DOC-5]`` renders as the token it holds, which is extracted
            yield at, end
            after = end


def json_may_hold(text: bytes) -> bool:
    """Whether some string of an output's compact JSON ``text`` may hold a look-alike.

    ``False`` is certain: every look-alike of a string shows in its JSON text, except through a
    literal backslash (``\\\\`` in JSON), which answers ``True``. One C-level search rejects
    the common case; each candidate is then tried as in ``lookalike_spans``, with JSON's own
    escapes (``\\n``, ``\\u0009``…) read as the characters they stand for. A look-alike starts
    with something that folds to ``[``, which no JSON escape but ``\\u`` can stand for: the
    others (every newline of a Markdown answer is one) are not tried.
    """
    # The escapes, read left to right, hold a literal backslash exactly where two backslashes
    # meet (the first of a run always opens an escape); else every backslash opens one. A
    # backslash ending the text (no JSON) counts as a literal one: fail safe. (C-level
    # searches: a step per escape was 0.2 s for a 1 MiB draft of quotation marks.)
    if b"\\\\" in text or text.endswith(b"\\"):
        return True
    unicode_escape = b"\\u" in text
    if text.isascii() and not unicode_escape and b"&" not in text and not _OPEN_BYTES.search(text):
        return False  # no candidate at all (see ``_candidates``): the common case, on the bytes
    decoded = text.decode("utf-8")
    blank = _REAL_TOKEN.sub("x", decoded)  # as in ``_spans``: C-level searches first
    if _FULL_JSON.search(blank) is None and _VIABLE_JSON.search(blank) is None:
        return False
    budget = _JSON_TRIES
    for at in _candidates(decoded, json=True):
        if _FULL_JSON.match(decoded, at):
            return True
        plain_or_escaped = decoded[at] in _PLAIN_OPENS or decoded[at] in "&\\"
        if plain_or_escaped and not _VIABLE_JSON.match(decoded, at):
            continue
        budget -= 1
        if budget < 0:
            return True  # many tries for Python: the strings' own scan decides, once
        if _match_at(decoded, at, json=True) is not None:
            return True
    return False


def _try(text: str, at: int, *, json: bool) -> int | None:
    """The end of the look-alike at candidate ``at``, if one starts there: the C-level
    ``full`` and ``viable`` first, ``_match_at`` (Python) only where they cannot tell."""
    if text[at] in _PLAIN_OPENS:
        plain = (_FULL_JSON if json else _FULL).match(text, at)
        if plain is not None:
            return plain.end()
    if text[at] in _PLAIN_OPENS or text[at] in "&\\":
        viable = (_VIABLE_JSON if json else _VIABLE).match(text, at)
        if viable is None:
            return None
        stretch = text[at : viable.end()]
        if not json and "&" not in stretch and "\\" not in stretch and "<" not in stretch:
            # Nothing to decode but characters: fold them all in C, and ``full`` decides. It
            # ends where ``viable`` does (at the first closing bracket), as ``_match_at`` would.
            return viable.end() if _FULL.match(_fold_all(stretch)) else None
    return _match_at(text, at, json=json)


_drop_table: dict[int, None] = {}


def _fold_all(text: str) -> str:
    """``fold`` of every character of ``text`` in one go: the same characters, since each step
    maps characters one by one (NFKD only reorders marks, which go)."""
    if not _drop_table:  # built on first use: one pass over the code points (~0.1 s)
        category = unicodedata.category
        for cp in range(0x80, 0x110000):
            c = chr(cp)
            if category(c) in DROP or IGNORABLE.match(c):
                _drop_table[cp] = None
    nfkd = unicodedata.normalize
    folded = nfkd("NFKD", text.translate(FOLD)).casefold().translate(FOLD)
    return nfkd("NFKD", folded).translate(_drop_table)


def _candidates(text: str, *, json: bool) -> list[int]:
    """Every place a look-alike may start, in order (C-level searches only): an ASCII ``[``
    that opens no token, a bracket look-alike, a reference or escape that spells a ``[``."""
    found = [m.start() for m in _OPEN.finditer(text)]
    extra = False
    if "&" in text or "\\" in text:
        escaped = (_ESCAPED_OPEN_JSON if json else _ESCAPED_OPEN).finditer(text)
        found.extend(m.start() for m in escaped)
        extra = len(found) > 0
    if not text.isascii():
        for c in _OTHER_STARTS:
            if c not in text:  # far cheaper than a ``find`` that finds nothing
                continue
            at = text.find(c)
            while at >= 0:
                found.append(at)
                extra = True
                at = text.find(c, at + 1)
    if extra:
        found.sort()
    return found


def _match_at(text: str, at: int, *, json: bool) -> int | None:
    """The end of the look-alike starting at ``at``, if one does.

    A small automaton over decoded, folded characters (ignorable ones skipped): ``[``, spaces,
    three letters naming a kind, spaces, an optional dash, spaces, digits, spaces, ``]``. It stops
    at the first character that cannot continue, so tries from different places read disjoint
    stretches: every try reads ``[`` first (or stops there), and a ``[`` ends any other try;
    skipped HTML holds no bracket. Linear overall.
    """
    state, kind, i, n = 0, "", at, len(text)
    line_start, last = False, ""
    while i < n:
        unit_end, chars = read_unit(text, i, json)
        if state == 0 and not chars:
            # The first unit must read ``[``: a try from an ignorable unit (``&#8203;``) would
            # read on over every ignorable one after it, and a run of them would make every
            # try do so (quadratic). A ``[`` after it is a candidate of its own.
            return None
        for c in chars:
            prev, last = last, c
            if state == 0:
                if c != "[":
                    return None
                state = 1
            elif (
                c in _INLINE_MARKS  # ``[DOC-*5*]`` renders as ``[DOC-5]``, emphasised
                # ``_`` emphasises unless it stands between word characters (then it is text)
                or (c == "_" and (not prev.isalnum() or state in (3, 4)))
                or (line_start and c == ">")  # a block quote's marker: the line goes on
            ):
                continue
            elif c.isspace():
                line_start = line_start or c in "\n\r"
                if state == 1 and kind:  # no space inside the kind's name
                    return None
                if state == 3:  # spaces after digits: only ``]`` may follow
                    state = 4
            elif state == 1:
                line_start = False
                kind += c
                if not _KINDS_PREFIX(kind):
                    return None
                if len(kind) == 3:
                    state = 5
            elif state == 5:  # after the kind: spaces (above), a dash, or digits
                line_start = False
                if c == "-":
                    state = 6
                elif c.isdecimal():
                    state = 3
                else:
                    return None
            elif state == 6:
                line_start = False
                if c.isdecimal():
                    state = 3
                elif not c.isspace():
                    return None
            elif state == 3 and c.isdecimal():
                line_start = False
            elif state in (3, 4) and c == "]":
                return unit_end
            else:
                return None
        i = unit_end
    return None


def _KINDS_PREFIX(kind: str) -> bool:  # noqa: N802 - reads as the set it tests
    return any(k.startswith(kind) for k in _KINDS)


_FULL, _VIABLE = _plain_patterns(json=False)
_FULL_JSON, _VIABLE_JSON = _plain_patterns(json=True)
#: The characters the fast path opens with: ``[`` and its one-character look-alikes.
_PLAIN_OPENS = frozenset(c for c in "[" + _OTHER_STARTS if fold(c) == "[")
