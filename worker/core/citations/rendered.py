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

This module is the API: the look-alike checks and the render gate; the reader's form of
characters is ``reading``, the visible text ``visible``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import ahocorasick

from worker.core.citations.evidence import CitationRef
from worker.core.citations.paths import walk_strings
from worker.core.citations.reading import (
    ASCII_BYTES,
    REORDERS,
    TABLE,
    reader_form,
    readings,
    ref_of,
    token_readings,
)
from worker.core.citations.tokens import NO_HIDDEN_TOKENS, TOKEN_RE, HiddenTokens, hidden_tokens
from worker.core.citations.visible import views

__all__ = [
    "RenderGate",
    "json_may_show_more",
    "may_show_more",
    "render_gate",
    "rendered_lookalike_paths",
    "shown_citations",
    "shows_lookalike",
    "strings_in",
]


def shown_citations(markdown: str) -> list[Counter[CitationRef]]:
    """How many times each citation shows in each view of ``markdown`` (see ``views``)."""
    return [
        Counter({ref_of(reading): n for reading, n in readings(view).items()})
        for view in views(markdown)
    ]


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
    table = TABLE
    others = text.encode().translate(None, ASCII_BYTES).decode()  # in C: the non-ASCII ones
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
    others = text.translate(None, ASCII_BYTES).decode()
    if REORDERS.search(others):  # drawn right to left, ``[10018-SBO]`` reads forwards
        return True
    table = TABLE
    return any("[" in table[c] or "]" in table[c] for c in set(map(ord, others)))


def shows_lookalike(text: str, *, always: bool = False, tokens: int | None = None) -> bool:
    """Rule 2: whether ``text`` shows a reader a citation it does not hold as a token.

    ``always``: render even where ``may_show_more`` says nothing more can show (tests of it);
    ``tokens``: its count of tokens, where the caller has it."""
    if not always and not may_show_more(text, tokens):
        return False
    own = token_readings(text)
    if any(
        count > own[reading] for view in views(text) for reading, count in readings(view).items()
    ):
        return True
    # A token where the reader never sees it (a comment, an attribute) must not pay for a
    # look-alike of its id that shows: with every token blanked, nothing may read as one.
    return bool(own) and any(readings(view) for view in views(_blank_tokens(text)))


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
    #: The hidden refs' tokens as texts: a string holding none needs no reading of its tokens.
    tokens: HiddenTokens = NO_HIDDEN_TOKENS
    #: ``titles`` in one automaton where they are many (``FEW_TITLES``), so that a string is
    #: read once for all of them, not once for each; ``None``: each is looked for alone.
    finder: ahocorasick.Automaton | None = None

    def shows(self, text: str) -> bool:
        """Whether ``text`` shows a hidden id, a look-alike or a hidden title."""
        if not text:
            return False
        if self.tokens.may_hold(text) and not self.hidden.isdisjoint(
            map(ref_of, token_readings(text))
        ):
            return True
        if not may_show_more(text):  # what shows of a citation is its own tokens
            if not self.titles:
                return False
            if _LINKED_TOKEN.search(text) is None:  # and its words are the raw text's
                return self._names_title(_raw_words(text))
        own = token_readings(text)
        for view in views(text):
            for reading, count in readings(view).items():
                if count > own[reading] or ref_of(reading) in self.hidden:
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
        return any(self._names_title([_words(view)]) for view in views(text))

    def _names_title(self, texts: list[str]) -> bool:
        finder = self.finder
        if finder is None:
            return any(title in text for text in texts for title in self.titles)
        return any(next(finder.iter(text), None) is not None for text in texts)


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
    return RenderGate(hidden, titles, hidden_tokens(hidden), _title_finder(titles))


#: At most this many hidden titles are looked for in a string one by one (a C-level scan each);
#: past it one Aho-Corasick automaton (``pyahocorasick``) finds any of them in one pass: a
#: draft may cite a thousand hidden documents, and a scan per title made a MiB cost seconds.
FEW_TITLES = 8


def _title_finder(titles: tuple[str, ...]) -> ahocorasick.Automaton | None:
    """One automaton of ``titles`` when they are more than ``FEW_TITLES``, else ``None``."""
    if len(titles) <= FEW_TITLES:
        return None
    automaton = ahocorasick.Automaton()
    for title in titles:
        automaton.add_word(title, title)
    automaton.make_automaton()
    return automaton


def titles_to_hide(hidden: Iterable[str | None], visible: Iterable[str | None]) -> tuple[str, ...]:
    """The hidden documents' titles worth searching for: long enough to name a document, and
    not also a visible cited document's title (those words are the reader's to see)."""
    seen = {_title_form(t) for t in visible if t}
    out: dict[str, None] = {}  # in order, each once
    for title in hidden:
        if not title:
            continue
        form = _title_form(title)
        if (
            len(form.replace(" ", "")) >= MIN_TITLE_CHARS
            and len(form.split()) >= MIN_TITLE_WORDS
            and form not in seen
        ):
            out[form] = None
    return tuple(out)


def _title_form(title: str) -> str:
    return _words(reader_form(title))
