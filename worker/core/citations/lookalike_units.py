"""How a look-alike's text is read, one unit at a time: an HTML character reference or a
backslash escape decoded, an inline tag dropped, and each character folded (NFKD, case folding,
the look-alike table; format characters, marks and other default-ignorable ones dropped).

``worker.core.citations.lookalikes`` scans for look-alikes with these; ``fold`` is also what
makes its regexes' character classes.
"""

from __future__ import annotations

import re
import unicodedata
from html import unescape

#: Bracket and dash look-alikes NFKC leaves alone.
FOLD = str.maketrans(
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
        # Small capitals, and Cherokee, Lisu and Coptic letters drawn like the Latin ones.
        **dict.fromkeys("ᴅꓓ", "d"),
        **dict.fromkeys("ᴏꓳⲞⲟ", "o"),
        **dict.fromkeys("ᴄᏟꓚⲤⲥ", "c"),
        **dict.fromkeys("ᴇᎬꓰ", "e"),
        **dict.fromkeys("ᴛᎢꓔⲦ", "t"),
        **dict.fromkeys("ᴠᏙꓦ", "v"),
        **dict.fromkeys("ʙᏴꓐ", "b"),
        **dict.fromkeys("ꜱᏚꓢ", "s"),
        # A blank a renderer draws as a space.
        "\u2800": " ",
    }
)

#: Default-ignorable code points (Unicode's ``Default_Ignorable_Code_Point``, drawn as nothing)
#: that are neither format characters nor marks: the Hangul fillers and unassigned ones.
IGNORABLE = re.compile("[\u115f\u1160\u3164\uffa0\u2065\ufff0-\ufff8\U000e0000-\U000e0fff]")

#: One character reference or backslash escape of the text, decoded as a unit.
REFERENCE = r"&(?:#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8}|[A-Za-z][A-Za-z0-9]{1,31});?"

ESCAPE = re.compile(REFERENCE + r"|\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[!-/:-@\[-`{-~]|\r?\n)")

#: Inline HTML a renderer draws as nothing (a tag, a comment) inside a look-alike:
#: ``[DOC-<b>5</b>]`` shows ``[DOC-5]``. Bounded, and holding no bracket, so a try that skips
#: one never reads past a place another try starts from (see ``_match_at``).
_TAG_BODY = r"[^<>\[\]\n]"

_HTML = re.compile(
    rf"</?[A-Za-z][A-Za-z0-9-]{{0,31}}(?:[\s/]{_TAG_BODY}{{0,256}})?>"
    rf"|<!--(?:-?>|{_TAG_BODY}{{0,256}}-->)"
)

#: The same in an output's JSON text, where the tag's characters may be escaped (at most six
#: characters each, ``\u0001``): never misses what ``_HTML`` finds in the string.
_HTML_JSON = re.compile(
    rf"</?[A-Za-z][A-Za-z0-9-]{{0,31}}(?:[\s/]{_TAG_BODY}{{0,1536}})?>"
    rf"|<!--(?:-?>|{_TAG_BODY}{{0,1536}}-->)"
)

#: A JSON string escape (in an output's JSON text, where a literal backslash is ``\\\\``).
_JSON_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')

_JSON_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", '"': '"', "/": "/"}

DROP = frozenset({"Cf", "Mn"})

_folded: dict[str, str] = {}


def read_unit(text: str, i: int, json: bool) -> tuple[int, str]:
    """The end of the unit at ``i`` and its decoded, folded characters (ignorable ones left out)."""
    c = text[i]
    if c == "\\" and json:
        m = _JSON_ESCAPE.match(text, i)
        if m is None:
            return i + 1, c
        unit = m.group()
        raw = chr(int(unit[2:], 16)) if unit[1] == "u" else _JSON_SIMPLE.get(unit[1], unit[1])
        return m.end(), fold(raw)
    if c in "&\\":
        m = ESCAPE.match(text, i)
        if m is not None:
            return m.end(), fold(_unescape(m.group()))
    elif c == "<":
        m = (_HTML_JSON if json else _HTML).match(text, i)
        if m is not None:
            return m.end(), ""
    return i + 1, fold(c)


def _unescape(unit: str) -> str:
    if unit[0] == "&":
        return unescape(unit)
    if unit[1] in "ux" and len(unit) in (4, 6):
        return chr(int(unit[2:], 16))
    return unit[1:]


def fold(piece: str) -> str:
    """NFKD, case folding and the look-alike table; format characters, marks (so accents:
    ``Ö`` is ``o``) and other default-ignorable characters dropped."""
    if piece.isascii():
        return piece.lower()
    out = _folded.get(piece)
    if out is None:
        parts = []
        for ch in piece:
            if unicodedata.category(ch) in DROP or IGNORABLE.match(ch):
                continue
            f = unicodedata.normalize("NFKD", ch.translate(FOLD)).casefold().translate(FOLD)
            f = unicodedata.normalize("NFKD", f)  # case folding may compose again
            parts.append("".join(x for x in f if unicodedata.category(x) not in DROP))
        out = "".join(parts)
        if len(_folded) < 4096:
            _folded[piece] = out
    return out
