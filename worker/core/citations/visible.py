"""What cmark-gfm's rendering of a string shows (``worker.core.citations.rendered`` documents
the decision): the markup stripped as the most lenient reader strips it, character references
decoded, ``alt`` and ``title`` values kept; and the reader's forms of that text, in logical and
in drawn order (``views``).
"""

from __future__ import annotations

import re
from html import unescape

import cmarkgfm
import icu

from worker.core.citations.reading import REORDERS, reader_form

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


def visible_text(markdown: str) -> str:
    """What cmark-gfm's rendering of ``markdown`` shows, markup removed as the most lenient
    reader removes it (see the module docstring)."""
    return visible_texts(render(markdown), raw="<" in markdown)[0]


def render(markdown: str) -> str:
    html: str = cmarkgfm.markdown_to_html_with_extensions(
        markdown, options=_OPTIONS, extensions=_EXTENSIONS
    )
    return html


def visible_texts(html: str, *, raw: bool = True) -> list[str]:
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
        if not quoted and "=" not in html and "<!--" not in html:
            # No attribute and no comment: every construct ends at its first ``>``, as
            # ``_strip`` reads it, and none shows a value; removed in C (one HTML block of many
            # tags took a Python step per tag).
            text = _MARKUP.sub("", html)
            out.append(unescape(text) if "&" in text else text)
            continue
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


#: Markup a browser reads, to its first ``>`` (``_strip`` without ``quoted``), but a comment.
_MARKUP = re.compile(r"<[A-Za-z/!?][^>]*+>")
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


def views(markdown: str) -> list[str]:
    """The reader's forms of what ``markdown`` shows: in logical order and, for text that may
    hold right-to-left characters or bidi controls, in the order it is drawn."""
    views: list[str] = []
    for shown in visible_texts(render(markdown), raw="<" in markdown):
        views.append(reader_form(shown))
        if not shown.isascii() and REORDERS.search(shown):
            bidi = icu.Bidi()
            bidi.setPara(icu.UnicodeString(shown), icu.Bidi.DEFAULT_LTR)
            drawn = str(bidi.writeReordered(_BIDI))
            if drawn != shown:
                views.append(reader_form(drawn))
    return views
