"""What a reader sees of a published string: the last check of rules 2 and 5 (contract §3.2, §3.5).

A string is rendered by the reference renderer (cmark-gfm, GFM tables, raw HTML allowed: the
worst case of a UI) and its visible text is read as a reader reads it; that text, not the raw
string, is searched for citations. Every earlier pass works on the raw text or on the parsed
structure; this one is the last word, so a shape they miss (link syntax inside a token, inline
HTML, a confusable digit, a right-to-left override) is still caught here.

The visible text (decided, ``docs/decisions.md``): cmark-gfm's HTML with every tag-like
construct removed the way the most lenient reader removes it — a tag, a processing instruction,
a declaration or CDATA ends at its first ``>`` (a browser's bogus comment; a quoted ``>`` inside
an attribute ends nothing earlier than that), a comment at its first ``-->`` or ``--!>`` — then
character references decoded. That leaves at least what any browser shows (it hides script and
style elements; this shows them), so the search can only see more than a reader does, never
less. An image shows its ``alt`` text in its place, and ``title`` attributes count as shown.

The reader's form of that text: Unicode bidi reordering (ICU), NFKC, format, combining and
other default-ignorable characters dropped, every decimal digit of any script read as its
value, bracket and dash look-alikes folded, then each character's UTS #39 confusable skeleton
(ICU's ``SpoofChecker``, which carries Unicode's ``confusables.txt``) and case folding. In that
form a citation reads ``[`` kind ``-``? digits ``]`` (whitespace allowed around the parts), where
the digits are the skeletons of ``0``-``9`` (so ``O`` reads as zero and ``l`` as one).

- ``shows_lookalike``: the string shows a citation that it does not hold as a token of the
  grammar (``[DOC-[](#)3002]``, ``[DOC-ЗОО2]``, ``&#91;DOC-3002]``): rule 2's look-alike.
- ``shows_hidden``: the string shows a hidden id, any look-alike, or a hidden document's title:
  what rule 5 never lets through to a reader.

Linear: one C-level render, one C-level strip and one translation of the text, then one regex.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from html import unescape
from typing import Any, NamedTuple

import cmarkgfm
import icu

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.citations.extraction import TOKEN_RE, walk_strings

__all__ = [
    "SKELETON_SOURCE",
    "RenderGate",
    "json_may_show_more",
    "may_show_more",
    "reader_form",
    "render_gate",
    "rendered_lookalike_paths",
    "shown_citations",
    "shows_lookalike",
    "strings_in",
    "visible_text",
]

#: Where the confusable skeletons come from (``docs/decisions.md`` records it).
SKELETON_SOURCE = f"ICU {icu.ICU_VERSION} (Unicode {icu.UNICODE_VERSION}) SpoofChecker"

_OPTIONS = cmarkgfm.Options.CMARK_OPT_UNSAFE  # raw HTML passes through: the worst case
_EXTENSIONS = ("table",)
#: cmark-gfm's own tags (the source held no ``<``): those with an ``alt`` or ``title``, and all.
_SHOWING_TAG = re.compile(r"<[^>]*\s(?:alt|title)=[^>]*>")
_PLAIN_TAG = re.compile(r"<[^>]*>")
#: An ``alt`` (shown in an image's place) or ``title`` (shown apart, as a tooltip) attribute,
#: as cmark-gfm writes it (double quotes) or a raw HTML author may (single quotes, none).
_SHOWN_ATTRIBUTE = re.compile(
    r"""\s(alt|title)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE
)
_BIDI = icu.Bidi.DO_MIRRORING | icu.Bidi.REMOVE_BIDI_CONTROLS
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
_TABLE = _ReaderTable()
for _code in range(128):  # ASCII up front, one character each (``m`` is no ``rn`` here)
    _form = _reader_char(chr(_code))
    _TABLE[_code] = _form if len(_form) == 1 else chr(_code).casefold()
#: The same for ASCII text as a byte table: ``bytes.translate`` runs in C, one step a byte.
_ASCII_TABLE = bytes(ord(_TABLE[_code]) for _code in range(128)) + bytes(range(128, 256))
#: The digits in the reader's form, and the value each one reads as.
_DIGIT_OF = {_TABLE[ord(d)]: d for d in "0123456789"}
_DIGITS = "".join(sorted(_DIGIT_OF))
#: A citation as the reader's form shows it.
_READING = re.compile(rf"\[\s*(obs|doc|evt)\s*(?:-\s*)?([{re.escape(_DIGITS)}]+)\s*\]")
_KINDS = {"obs": EvidenceKind.OBS, "doc": EvidenceKind.DOC, "evt": EvidenceKind.EVT}
_TO_ASCII_DIGITS = str.maketrans(_DIGIT_OF)
_READER_DIGITS = str.maketrans({d: r for r, d in _DIGIT_OF.items()})
_ASCII_BYTES = bytes(range(128))
_RUNS = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]+")
#: Characters that can make a line's drawn order differ from its logical order: right-to-left
#: letters and digits (Hebrew, Arabic, Syriac, Thaana, N'Ko...) and the explicit bidi controls.
#: Without any, a left-to-right paragraph is drawn in logical order.
_REORDERS = re.compile(
    "[\u0590-\u08ff\u200e\u200f\u202a-\u202e\u2066-\u2069\ufb1d-\ufdff\ufe70-\ufefc"
    "\U00010800-\U00010fff\U0001e800-\U0001efff]"
)


def reader_form(text: str) -> str:
    """``text`` as a reader reads it, for comparison (see the module docstring)."""
    if text.isascii():
        return text.encode().translate(_ASCII_TABLE).decode()
    # ASCII runs in C, the rest through the table (most text is mostly ASCII).
    return "".join(
        run.encode().translate(_ASCII_TABLE).decode() if run.isascii() else run.translate(_TABLE)
        for run in _RUNS.findall(unicodedata.normalize("NFKC", text))
    )


def visible_text(markdown: str) -> str:
    """What cmark-gfm's rendering of ``markdown`` shows, markup removed as the most lenient
    reader removes it (see the module docstring)."""
    return _visible(_render(markdown), raw="<" in markdown)[0]


def _render(markdown: str) -> str:
    html: str = cmarkgfm.markdown_to_html_with_extensions(
        markdown, options=_OPTIONS, extensions=_EXTENSIONS
    )
    return html


def _visible(html: str, *, raw: bool = True) -> list[str]:
    """The texts ``html`` shows: markup removed leniently and, where raw HTML may hold a quoted
    ``>``, as a browser's tokenizer removes it; references decoded; ``title`` values after a
    NUL (no citation reads across one). ``raw``: the source may hold raw HTML (a ``<``);
    without, every tag is cmark-gfm's own, closed and quoting nothing but escaped text, and
    two C-level substitutions remove them."""
    if "<" not in html:
        return [unescape(html) if "&" in html else html]
    if not raw:
        titles: list[str] = []

        def shown(match: re.Match[str]) -> str:
            alt: list[str] = []
            for name, a, b, c in _SHOWN_ATTRIBUTE.findall(match.group()):
                (alt if name.lower() == "alt" else titles).append(a or b or c)
            return "".join(alt)

        text = _PLAIN_TAG.sub("", _SHOWING_TAG.sub(shown, html))
        text = "\0".join([text, *titles])
        return [unescape(text) if "&" in text else text]
    readings = [False]
    if "'" in html or '"' in html:  # cmark-gfm's own attributes hold no ``>``: one reading
        readings.append(True)
    out: list[str] = []
    for quoted in readings:
        pieces, titles = _strip(html, quoted=quoted)
        text = "\0".join(["".join(pieces), *titles])
        out.append(unescape(text) if "&" in text else text)
    return out


class _Next:
    """The next place of a needle at or after a position, found with ``str.find`` and kept, so
    that the searches of one scan never read a stretch twice (linear however many openers lack
    their closer: once a needle is absent after a place, it is absent after every later one)."""

    __slots__ = ("at", "needle", "text")

    def __init__(self, text: str, needle: str) -> None:
        self.text, self.needle, self.at = text, needle, -2  # -2: not searched yet

    def __call__(self, pos: int) -> int:
        at = self.at
        if at == -1 or at >= pos:
            return at
        self.at = self.text.find(self.needle, pos)
        return self.at


def _strip(html: str, *, quoted: bool) -> tuple[list[str], list[str]]:
    """The text of ``html`` outside markup (see the module docstring), and its ``title`` values.
    A comment ends at its first ``-->`` or ``--!>`` (or at once: ``<!-->``, ``<!--->``); any
    other construct a browser reads as markup (``<`` then a letter, ``/``, ``!`` or ``?``) at
    its first ``>`` or, ``quoted``, at its first ``>`` outside a quoted attribute value. One
    without its end stays text. One pass: every search goes forward (``_Next``)."""
    pieces: list[str] = []
    titles: list[str] = []
    find = html.find
    greater = _Next(html, ">")
    comment_end, bang_end = _Next(html, "-->"), _Next(html, "--!>")
    quotes = {'"': _Next(html, '"'), "'": _Next(html, "'")}
    tries = _PATTERN_TRIES
    match = _QUOTED_TAG.match
    pos = scan = 0
    while (lt := find("<", scan)) >= 0:
        after = html[lt + 1 : lt + 2]
        end = -1
        if after == "!" and html.startswith("<!--", lt):
            if html.startswith(">", lt + 4) or html.startswith("->", lt + 4):
                end = lt + 5 if html[lt + 4] == ">" else lt + 6
            else:
                ends = [
                    e + k for e, k in ((comment_end(lt + 4), 3), (bang_end(lt + 4), 4)) if e >= 0
                ]
                end = min(ends) if ends else -1
        elif after in _TAG_STARTS:
            if not quoted or after in "!?":  # a declaration or PI is a bogus comment
                end = _after(greater(lt + 1))
            elif tries > 0 and (whole := match(html, lt)) is not None:
                end = whole.end()  # a well-formed tag, read in C
            else:
                # The scanner: where the pattern fails (an unclosed value), and for every tag
                # once it failed often (a failing match may read to the end: bounded tries).
                tries -= 1
                end = _tag_end(html, lt, greater, quotes)
        if end < 0:  # text: no construct here
            scan = lt + 1
            continue
        if lt > pos:
            pieces.append(html[pos:lt])
        if "=" in html[lt:end] and after != "!":
            markup = html[lt:end]
            if _SHOWS.search(markup):
                for name, a, b, c in _SHOWN_ATTRIBUTE.findall(markup):
                    (pieces if name.lower() == "alt" else titles).append(a or b or c)
        pos = scan = end
    pieces.append(html[pos:])
    return pieces, titles


#: What may follow ``<`` in markup a browser reads: an ASCII letter, ``/``, ``!`` or ``?``.
_TAG_STARTS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/!?")


#: A well-formed tag as a browser's tokenizer reads it (quoted values may hold ``>``), and how
#: many times ``_strip`` may see it fail before it reads every tag with the scanner.
_QUOTED_TAG = re.compile(r"""</?[A-Za-z][^\s/>]*+(?:[^>"']++|"[^"]*+"|'[^']*+')*+>""")
_PATTERN_TRIES = 64
#: An ``alt`` or ``title`` attribute may be in a tag.
_SHOWS = re.compile(r"(?i)(?:alt|title)\s*=")


def _after(at: int) -> int:
    return at + 1 if at >= 0 else -1


def _tag_end(html: str, lt: int, greater: _Next, quotes: dict[str, _Next]) -> int:
    """Where the tag at ``lt`` ends as a browser's tokenizer ends it: at the first ``>`` outside
    a quoted attribute value (a value opens with a quote right after ``=`` and blanks); ``-1``
    where it does not end (an unclosed value or no ``>``)."""
    if html[lt + 1] in "!?":  # a declaration or processing instruction: a bogus comment
        return _after(greater(lt + 1))
    at = lt + 1
    while True:
        gt = greater(at)
        if gt < 0:
            return -1
        eq = html.find("=", at, gt)
        if eq < 0:
            return gt + 1
        value = eq + 1
        while value < gt and html[value] in " \t\n\r\f":
            value += 1
        quote = html[value]
        if value < gt and quote in quotes:
            close = quotes[quote](value + 1)
            if close < 0:
                return -1
            at = close + 1
        else:  # unquoted (it holds no ``>``) or empty: read on from the value
            at = max(value, eq + 1)


def _views(markdown: str) -> list[str]:
    """The reader's forms of what ``markdown`` shows: in logical order and, for text that may
    hold right-to-left characters or bidi controls, in the order it is drawn."""
    views: list[str] = []
    for shown in _visible(_render(markdown), raw="<" in markdown):
        views.append(reader_form(shown))
        if not shown.isascii() and _REORDERS.search(shown):
            bidi = icu.Bidi()
            bidi.setPara(icu.UnicodeString(shown), icu.Bidi.DEFAULT_LTR)
            drawn = str(bidi.writeReordered(_BIDI))
            if drawn != shown:
                views.append(reader_form(drawn))
    return views


def shown_citations(markdown: str) -> list[Counter[CitationRef]]:
    """How many times each citation shows in each view of ``markdown`` (see ``_views``)."""
    return [
        Counter({_ref(reading): n for reading, n in _readings(view).items()})
        for view in _views(markdown)
    ]


#: A citation read in the reader's form: its kind and its digits, both in that form.
_Reading = tuple[str, str]


def _readings(view: str) -> Counter[_Reading]:
    return Counter(_READING.findall(view)) if "[" in view else Counter()


def _ref(reading: _Reading) -> CitationRef:
    kind, digits = reading
    return CitationRef(_KINDS[kind], int(digits.translate(_TO_ASCII_DIGITS)))


def _tokens(text: str) -> Counter[_Reading]:
    """The tokens of ``text`` as readings (so a token and what shows of it compare equal)."""
    if "[" not in text:
        return Counter()
    return Counter(
        (kind.lower(), digits.translate(_READER_DIGITS)) for kind, digits in TOKEN_RE.findall(text)
    )


def may_show_more(text: str, tokens: int | None = None) -> bool:
    """Whether the rendering of ``text`` may show a citation other than its own tokens.

    ``False`` is certain. A reading needs a ``[`` and a ``]`` in the reader's form. Where the
    text holds no ``&``, ``<`` or ``\\`` (nothing can spell a bracket or hide a character), no
    character but ``[`` and ``]`` reads as a bracket, and its only ``[`` are its tokens', each
    bracket a reader sees is a token's, and a token holds no markup: rendering shows it whole
    (one reading, itself) or drops its brackets (link text). Bidi reordering cannot change
    that: a reading needs a ``[`` before a ``]``, which reordering takes from a token only by
    reversing it (``[3002-COD]``, no reading). ``tokens``: how many tokens ``text`` holds, where
    the caller counted them already.
    """
    if "&" in text or "<" in text or "\\" in text:
        return True
    brackets = text.count("[")
    if brackets and brackets != (len(TOKEN_RE.findall(text)) if tokens is None else tokens):
        return True
    if text.isascii():
        return False
    table = _TABLE
    others = text.encode().translate(None, _ASCII_BYTES).decode()  # in C: the non-ASCII ones
    for code in set(map(ord, others)):
        form = table[code]
        if "[" in form or "]" in form:
            return True
    return False


#: A ``[`` in an output's compact JSON text after which no reading can start: a token's, or an
#: array's (``]``, ``{``, ``"``, a digit but ``0``, which reads as ``o``, ``-``, ``t``, ``f``,
#: ``n``). In a string, ``"`` would be escaped (a backslash: never cleared), and none of these
#: is markup a renderer removes, whitespace, or a letter a kind's name starts with.
_OPEN_READING_JSON = re.compile(rb'\[(?!(?:OBS|DOC|EVT)-[0-9]++\]|[\]{"1-9tfn-])')


def json_may_show_more(text: bytes) -> bool:
    """Whether some string of an output whose compact JSON text is ``text`` may show a citation
    other than its tokens when rendered (``may_show_more`` of each string at once; ``False`` is
    sure). A reading needs a ``[`` followed, once rendered, by a kind's letters: in the source
    by those, whitespace, or markup a renderer removes. A string that holds none of ``&``,
    ``<`` or a literal backslash (``\\\\`` in JSON), no non-ASCII character that reads as a
    bracket, and whose every ``[`` is a token's or followed by what only an array's can be
    (whitespace after one is a JSON escape: a backslash), shows nothing more, unless it holds
    right-to-left characters or bidi controls (which can draw ``[`` and digits in another
    order)."""
    if b"&" in text or b"<" in text or b"\\\\" in text:  # a literal backslash: ``\\\\``
        return True
    if _OPEN_READING_JSON.search(text) is not None:
        return True
    if text.isascii():
        return False
    others = text.translate(None, _ASCII_BYTES).decode()
    if _REORDERS.search(others):  # drawn right to left, ``[10018-SBO]`` reads forwards
        return True
    table = _TABLE
    return any("[" in table[c] or "]" in table[c] for c in set(map(ord, others)))


def shows_lookalike(text: str, *, always: bool = False, tokens: int | None = None) -> bool:
    """Rule 2: whether ``text`` shows a reader a citation it does not hold as a token.

    ``always``: render even where ``may_show_more`` says nothing more can show (tests of it);
    ``tokens``: its count of tokens, where the caller has it."""
    if not always and not may_show_more(text, tokens):
        return False
    own = _tokens(text)
    if any(
        count > own[reading] for view in _views(text) for reading, count in _readings(view).items()
    ):
        return True
    # A token where the reader never sees it (a comment, an attribute) must not pay for a
    # look-alike of its id that shows: with every token blanked, nothing may read as one.
    return bool(own) and any(_readings(view) for view in _views(_blank_tokens(text)))


def _blank_tokens(text: str) -> str:
    """``text`` with each token's characters turned into ``x`` (same length; no bracket left to
    open or close a link or a reading)."""
    return TOKEN_RE.sub(lambda token: "x" * len(token.group()), text)


def rendered_lookalike_paths(
    output: Mapping[str, Any],
    strings: Iterable[str] | None = None,
    count: Callable[[str], int] | None = None,
) -> list[str]:
    """Paths of the strings of ``output`` that show a look-alike when rendered (rule 2): the
    strings (``strings_in(output)``, or as given) are read without their paths first, and paths
    are made only when one shows one. ``count``: each string's number of tokens, if known."""
    texts = strings_in(output) if strings is None else strings
    if count is None:
        if not any(shows_lookalike(text) for text in texts):
            return []
    elif not any(shows_lookalike(text, tokens=count(text) if "[" in text else 0) for text in texts):
        return []
    return [path for path, text in walk_strings(output) if shows_lookalike(text)]


def strings_in(value: Any) -> list[str]:
    """Every string value inside ``value`` (not keys), in document order (rule 2 bounds
    nesting; one list, no generator frame per value)."""
    out: list[str] = []
    _collect(value, out)
    return out


def _collect(value: Any, out: list[str]) -> None:
    if value.__class__ is str:
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            if item.__class__ is str:
                out.append(item)
            else:
                _collect(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            if item.__class__ is str:
                out.append(item)
            else:
                _collect(item, out)
    elif isinstance(value, str):
        out.append(value)


class RenderGate(NamedTuple):
    """Rule 5's last check of a published string: what must not show (see ``shows``). Made by
    ``render_gate``."""

    hidden: frozenset[CitationRef]
    #: Hidden documents' titles as padded runs of words in the reader's form (long enough to
    #: name a document: ``titles_to_hide``).
    titles: tuple[str, ...]
    #: A text one of which every hidden token holds (``-0``: written with leading zeros).
    marks: tuple[str, ...] = ("-0",)

    def shows(self, text: str) -> bool:
        """Whether ``text`` shows a hidden id, a look-alike or a hidden title."""
        if not text:
            return False
        if (
            "[" in text
            and any(mark in text for mark in self.marks)
            and not self.hidden.isdisjoint(map(_ref, _tokens(text)))
        ):
            return True
        if not may_show_more(text):  # what shows of a citation is its own tokens
            if not self.titles:
                return False
            if _LINKED_TOKEN.search(text) is None:  # and its words are the raw text's
                return self._names_title(_raw_words(text))
        own = _tokens(text)
        for view in _views(text):
            for reading, count in _readings(view).items():
                if count > own[reading] or _ref(reading) in self.hidden:
                    return True
            if self.titles and self._names_title([_words(view)]):
                return True
        return False

    def names_title(self, text: str) -> bool:
        """Whether ``text`` shows a hidden title (all ``shows`` asks of a string the agent wrote
        and redaction left alone: rule 2 read its citations already, and it holds no hidden
        token, or redaction would have cut it)."""
        if not self.titles or not text:
            return False
        if not may_show_more(text) and _LINKED_TOKEN.search(text) is None:
            return self._names_title(_raw_words(text))
        return any(self._names_title([_words(view)]) for view in _views(text))

    def _names_title(self, texts: list[str]) -> bool:
        return any(title in text for text in texts for title in self.titles)


#: A token a renderer may read as a link (its brackets then show not): followed by a
#: destination, a label or a definition's colon.
_LINKED_TOKEN = re.compile(r"\[(?:OBS|DOC|EVT)-[0-9]+\](?=[(\[:])")
#: Marks that may format (never shown) or be shown as they are, between two letters.
_MARKS_OUT = str.maketrans(dict.fromkeys("*~`"))
_MARKS_APART = str.maketrans(dict.fromkeys("*~`", " "))
_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> str:
    """A text's words (letters and digits of the reader's form), space-separated and padded:
    a title is looked for as a run of whole words, whatever punctuation or markup stands
    between them."""
    return " " + " ".join(_WORD.findall(text)) + " "


def _raw_words(text: str) -> list[str]:
    """The words a renderer can show of a text that ``may_show_more`` clears and whose tokens
    no link takes: nothing in it decodes, hides or joins letters but inline marks (``*``, ``~``,
    a backtick), read both as formatting (gone) and as shown (apart); block markers, pipes and
    tokens only separate words."""
    form = reader_form(text)
    if "*" not in form and "~" not in form and "`" not in form:
        return [_words(form)]
    return [_words(form.translate(_MARKS_OUT)), _words(form.translate(_MARKS_APART))]


#: A title names a document when it has at least this many words and characters (reader's
#: form): shorter ones ("Q3", "Notes") would hide ordinary words (``docs/decisions.md``).
MIN_TITLE_WORDS = 2
MIN_TITLE_CHARS = 10


def render_gate(hidden: frozenset[CitationRef], titles: tuple[str, ...]) -> RenderGate:
    """The gate of ``hidden`` refs and ``titles`` (``titles_to_hide``)."""
    marks = (*{f"[{ref.kind.value}-{ref.id}]" for ref in hidden}, "-0")
    return RenderGate(hidden, titles, marks)


def titles_to_hide(hidden: Iterable[str | None], visible: Iterable[str | None]) -> tuple[str, ...]:
    """The hidden documents' titles worth searching for: long enough to name a document, and
    not also a visible cited document's title (those words are the reader's to see)."""
    seen = {_title_form(t) for t in visible if t}
    out: list[str] = []
    for title in hidden:
        if not title:
            continue
        form = _title_form(title)
        if (
            len(form.replace(" ", "")) >= MIN_TITLE_CHARS
            and len(form.split()) >= MIN_TITLE_WORDS
            and form not in seen
            and form not in out
        ):
            out.append(form)
    return tuple(out)


def _title_form(title: str) -> str:
    return _words(reader_form(title))
