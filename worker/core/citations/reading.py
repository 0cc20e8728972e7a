"""The reader's form of text (``worker.core.citations.rendered`` documents it): ICU's confusable
skeletons, NFKC, digits of any script and bracket and dash look-alikes folded, as one
``str.translate`` table filled on first sight of a character; and citations as that form shows
them (``readings``), beside a text's own tokens read the same way (``token_readings``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import icu

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.citations.tokens import TOKEN_RE

#: Where the confusable skeletons come from (``docs/decisions.md`` records it).
SKELETON_SOURCE = f"ICU {icu.ICU_VERSION} (Unicode {icu.UNICODE_VERSION}) SpoofChecker"

_SPOOF = icu.SpoofChecker()
#: Bracket look-alikes NFKC and the skeletons leave apart from ``[`` and ``]``.
_OPEN_LIKE = "【〔〖〘〚⟦⁅❲⦋⦍⦏⟬⟮⸢⸤︗︹︻﹝"
_CLOSE_LIKE = "】〕〗〙〛⟧⁆❳⦌⦎⦐⟭⟯⸣⸥︘︺︼﹞"
#: Dashes and what is drawn as one (Unicode's ``Pd``, minus signs, box-drawing rules, the
#: modifier minus, the prolonged sound mark the skeletons map ``—`` to).
DASH_LIKE = (
    "-\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015\u2e17\u2e1a\u2e3a\u2e3b"
    "\u2e40\u2e5d\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead"
    "\u2212\u02d7\u2500\u2501\u2043\u30fc\uff70\u2796\u23af\u2014\u207b\u208b"
)
#: Default-ignorable code points that are neither format characters nor marks (drawn as
#: nothing): the Hangul fillers, unassigned ones.
_IGNORABLE = re.compile("[\u115f\u1160\u3164\uffa0\u2065\ufff0-\ufff8\U000e0000-\U000e0fff]")
_DROP = frozenset({"Cf", "Mn", "Me"})


def _skeleton(c: str) -> str:
    """One character's confusable skeleton, case-folded (twice: folding may change which
    prototype applies, ``I`` -> ``l`` must come before folding)."""
    once = _SPOOF.getSkeleton(0, c).casefold()
    return "".join(_SPOOF.getSkeleton(0, x).casefold() for x in once)


def _reader_char(c: str) -> str:
    """The reader's form of one character (see the module docstring)."""
    normal = unicodedata.normalize("NFKC", c)
    if normal != c:
        return "".join(map(_reader_char, normal))
    if c == "\n":
        return "\n"
    if c.isspace() or c == "\u2800":  # a Braille blank is drawn as a space
        return " "
    if unicodedata.category(c) in _DROP or _IGNORABLE.match(c):
        return ""
    if c in _OPEN_LIKE:
        return "["
    if c in _CLOSE_LIKE:
        return "]"
    if c in DASH_LIKE:
        return "-"
    digit = unicodedata.decimal(c, None)
    if digit is not None:
        c = str(digit)
    folded = _skeleton(c)
    return "".join("-" if x in _DASH_FORMS else x for x in folded)


class _ReaderTable(dict[int, str]):
    """``str.translate``'s table of the reader's form, filled on first sight of a character."""

    def __missing__(self, code: int) -> str:
        form = _reader_char(chr(code))
        self[code] = form
        return form


_DASH_FORMS = frozenset(_skeleton(c) for c in DASH_LIKE) - {""}
TABLE = _ReaderTable()
for _code in range(128):  # ASCII up front, one character each (``m`` is no ``rn`` here)
    _form = _reader_char(chr(_code))
    TABLE[_code] = _form if len(_form) == 1 else chr(_code).casefold()
#: The same for ASCII text as a byte table: ``bytes.translate`` runs in C, one step a byte.
_ASCII_TABLE = bytes(ord(TABLE[_code]) for _code in range(128)) + bytes(range(128, 256))
#: The digits in the reader's form, and the value each one reads as.
_DIGIT_OF = {TABLE[ord(d)]: d for d in "0123456789"}
_DIGITS = "".join(sorted(_DIGIT_OF))
#: A citation as the reader's form shows it.
_READING = re.compile(rf"\[\s*(obs|doc|evt)\s*(?:-\s*)?([{re.escape(_DIGITS)}]+)\s*\]")
_KINDS = {"obs": EvidenceKind.OBS, "doc": EvidenceKind.DOC, "evt": EvidenceKind.EVT}
_TO_ASCII_DIGITS = str.maketrans(_DIGIT_OF)
_READER_DIGITS = str.maketrans({d: r for r, d in _DIGIT_OF.items()})
ASCII_BYTES = bytes(range(128))
_RUNS = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]+")
#: Characters that can make a line's drawn order differ from its logical order: right-to-left
#: letters and digits (Hebrew, Arabic, Syriac, Thaana, N'Ko...) and the explicit bidi controls.
#: Without any, a left-to-right paragraph is drawn in logical order.
REORDERS = re.compile(
    "[\u0590-\u08ff\u200e\u200f\u202a-\u202e\u2066-\u2069\ufb1d-\ufdff\ufe70-\ufefc"
    "\U00010800-\U00010fff\U0001e800-\U0001efff]"
)


def reader_form(text: str) -> str:
    """``text`` as a reader reads it, for comparison (see the module docstring)."""
    if text.isascii():
        return text.encode().translate(_ASCII_TABLE).decode()
    # ASCII runs in C, the rest through the table (most text is mostly ASCII).
    return "".join(
        run.encode().translate(_ASCII_TABLE).decode() if run.isascii() else run.translate(TABLE)
        for run in _RUNS.findall(unicodedata.normalize("NFKC", text))
    )


#: A citation read in the reader's form: its kind and its digits, both in that form.
Reading = tuple[str, str]


def readings(view: str) -> Counter[Reading]:
    return Counter(_READING.findall(view)) if "[" in view else Counter()


def ref_of(reading: Reading) -> CitationRef:
    kind, digits = reading
    return CitationRef(_KINDS[kind], int(digits.translate(_TO_ASCII_DIGITS)))


def token_readings(text: str) -> Counter[Reading]:
    """The tokens of ``text`` as readings (so a token and what shows of it compare equal)."""
    if "[" not in text:
        return Counter()
    return Counter(
        (kind.lower(), digits.translate(_READER_DIGITS)) for kind, digits in TOKEN_RE.findall(text)
    )
