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
``\\x5b``), NFKC, case folding, a small table of Latin look-alike letters (Cyrillic and Greek
``О``, ``С``, ``Е``, ``Т``, ``В``, ``Ѕ``…) and bracket/dash look-alikes (``【``, ``〔``, ``⟦``,
``–``, ``—``, ``−``…), and *dropping* format characters (zero-width spaces and joiners, soft
hyphens, bidi controls: category ``Cf``) and combining marks (``Mn``) — the text holds
``[`` kind ``-`` digits ``]``, where the kind is ``obs``, ``doc`` or ``evt``, the dash may be
missing, whitespace may stand around the parts and the digits are any decimal digits; and the
original text at that place is not exactly a token of the grammar (a ``\\`` escaping its ``[`` is
allowed: ``\\[DOC-5]`` renders as the token it contains, which is extracted).

Linear time: one pass builds the decoded text with a map back to the original offsets, and one
possessive pattern scans it. A string with none of the characters a look-alike needs (a ``[`` or
a bracket look-alike, ``&`` or ``\\``) is rejected by one C-level search: the common case.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from html import unescape
from typing import Any

from worker.core.citations import TOKEN_RE, walk_strings

#: Bracket and dash look-alikes NFKC leaves alone.
_FOLD = str.maketrans(
    {
        **dict.fromkeys("【〔〖〘〚⟦⁅❲⦋⦍⦏⟬⟮⸢⸤", "["),
        **dict.fromkeys("】〕〗〙〛⟧⁆❳⦌⦎⦐⟭⟯⸣⸥", "]"),
        **dict.fromkeys("‐‑‒–—―−⁃﹘", "-"),
        # Latin look-alikes of the letters of OBS, DOC and EVT (case-folded targets).
        **dict.fromkeys("ОоΟοՕօ", "o"),
        **dict.fromkeys("СсϹϲ", "c"),
        **dict.fromkeys("ЕеΕ", "e"),
        **dict.fromkeys("ТтΤτ", "t"),
        **dict.fromkeys("ВвΒβ", "b"),
        **dict.fromkeys("Ѕѕ", "s"),
        **dict.fromkeys("ԀԁᎠ", "d"),
        **dict.fromkeys("ѴѵνⅤⅴ", "v"),
    }
)
#: An ASCII ``[`` that does not open a real token (the look-ahead keeps real tokens, the common
#: case, out of the Python loop). One literal-prefix search: alternatives would cost ~5 x more.
#: What can never follow the ``[`` of a look-alike (JSON's own arrays start ``[{``, ``["``,
#: ``[[``, ``[1``) is left out the same way.
_OPEN = re.compile(r"\[(?!(?:OBS|DOC|EVT)-[0-9]++\]|[{\"\[\]0-9,])")
_OPEN_BYTES = re.compile(_OPEN.pattern.encode())
_BACKSLASH, _LETTER_U = ord("\\"), ord("u")
#: Other characters a look-alike may start with: a reference, an escape, a bracket look-alike.
_ASCII_STARTS = "&\\"
_OTHER_STARTS = "\uff3b\ufe47【〔〖〘〚⟦⁅❲⦋⦍⦏⟬⟮⸢⸤"
#: One character reference or backslash escape of the text, decoded as a unit.
_ESCAPE = re.compile(
    r"&(?:#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8}|[A-Za-z][A-Za-z0-9]{1,31});?"
    r"|\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[!-/:-@\[-`{-~])"
)
#: A JSON string escape (in an output's JSON text, where a literal backslash is ``\\\\``).
_JSON_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
_JSON_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", '"': '"', "/": "/"}
_KINDS = frozenset({"obs", "doc", "evt"})
#: Inline Markdown a renderer turns into formatting, not text, inside a look-alike.
_INLINE_MARKS = frozenset("*~`")
_DROP = frozenset({"Cf", "Mn"})
_folded: dict[str, str] = {}


def lookalike_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` in ``text`` of every citation look-alike, in order, not overlapping."""
    spans: list[tuple[int, int]] = []
    after = 0
    for at in _candidates(text):
        if at < after:
            continue  # inside the previous look-alike
        end = _match_at(text, at, json=False)
        if end is not None:
            if text.startswith("\\[", at) and TOKEN_RE.fullmatch(text, at + 1, end) is not None:
                continue  # ``\[DOC-5]`` renders as the token it holds, which is extracted
            spans.append((at, end))
            after = end
    return spans


def lookalike_paths(output: Mapping[str, Any]) -> list[str]:
    """Paths of the strings of ``output`` that hold a citation look-alike, in document order."""
    return [path for path, text in walk_strings(output) if lookalike_spans(text)]


def json_may_hold(text: bytes) -> bool:
    """Whether some string of an output's compact JSON ``text`` may hold a look-alike.

    ``False`` is certain: every look-alike of a string shows in its JSON text, except through a
    literal backslash (``\\\\`` in JSON), which answers ``True``. One C-level search rejects
    the common case; each candidate is then tried as in ``lookalike_spans``, with JSON's own
    escapes (``\\n``, ``\\u0009``…) read as the characters they stand for. A look-alike starts
    with something that folds to ``[``, which no JSON escape but ``\\u`` can stand for: the
    others (every newline of a Markdown answer is one) are not tried.
    """
    unicode_escape = False
    at = text.find(b"\\")  # the escapes, left to right (one C-level search each)
    while at >= 0:
        # An int; a backslash ending the text (no JSON) counts as a literal one: fail safe.
        escaped = text[at + 1] if at + 1 < len(text) else _BACKSLASH
        if escaped == _BACKSLASH:
            return True
        unicode_escape = unicode_escape or escaped == _LETTER_U
        at = text.find(b"\\", at + 2)
    if text.isascii() and not unicode_escape and b"&" not in text and not _OPEN_BYTES.search(text):
        return False  # no candidate at all (see ``_candidates``): the common case, on the bytes
    decoded = text.decode("utf-8")
    for at in _candidates(decoded):
        if decoded[at] == "\\" and not decoded.startswith("u", at + 1):
            continue
        if _match_at(decoded, at, json=True) is not None:
            return True
    return False


def _candidates(text: str) -> list[int]:
    """Every place a look-alike may start, in order (C-level searches only)."""
    found = [m.start() for m in _OPEN.finditer(text)]
    starts = _ASCII_STARTS if text.isascii() else _ASCII_STARTS + _OTHER_STARTS
    extra = False
    for c in starts:
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
    stretches (a ``[`` ends any try): linear overall.
    """
    state, kind, i, n = 0, "", at, len(text)
    line_start, last = False, ""
    while i < n:
        unit_end, chars = _unit(text, i, json)
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
                line_start = line_start or c == "\n"
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


def _unit(text: str, i: int, json: bool) -> tuple[int, str]:
    """The end of the unit at ``i`` and its decoded, folded characters (ignorable ones left out)."""
    c = text[i]
    if c == "\\" and json:
        m = _JSON_ESCAPE.match(text, i)
        if m is None:
            return i + 1, c
        unit = m.group()
        raw = chr(int(unit[2:], 16)) if unit[1] == "u" else _JSON_SIMPLE.get(unit[1], unit[1])
        return m.end(), _fold(raw)
    if c in "&\\":
        m = _ESCAPE.match(text, i)
        if m is not None:
            return m.end(), _fold(_unescape(m.group()))
    return i + 1, _fold(c)


def _unescape(unit: str) -> str:
    if unit[0] == "&":
        return unescape(unit)
    if unit[1] in "ux" and len(unit) in (4, 6):
        return chr(int(unit[2:], 16))
    return unit[1:]


def _fold(piece: str) -> str:
    """NFKC, case folding and the look-alike table; format characters and marks dropped."""
    if piece.isascii():
        return piece.lower()
    out = _folded.get(piece)
    if out is None:
        parts = []
        for ch in piece:
            if unicodedata.category(ch) in _DROP:
                continue
            f = unicodedata.normalize("NFKC", ch.translate(_FOLD)).casefold().translate(_FOLD)
            parts.append("".join(x for x in f if unicodedata.category(x) not in _DROP))
        out = "".join(parts)
        if len(_folded) < 4096:
            _folded[piece] = out
    return out
