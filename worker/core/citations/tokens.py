"""Citation tokens: the grammar ``[OBS-12]`` and finding its tokens in one string (contract §3.3).

Decisions:

- Grammar ``\\[(OBS|DOC|EVT)-([0-9]+)\\]`` with ASCII digits only (``re``'s ``\\d`` would also match
  Arabic-Indic and other Unicode digits, which the seed's JS regex does not).
- Leading zeros are insignificant: ``[OBS-007]`` is OBS id 7 (the seed's validator does ``+m[2]``).
- An id with more than ``MAX_ID_DIGITS`` significant digits is *overlong*: it is never turned into
  an ``int`` (CPython refuses more than 4,300 digits by default, and str→int is quadratic), so it is
  not a ``TokenMatch`` and not an ``Occurrence``.
  ``worker.core.citations.extraction.find_overlong_ids``
  reports the strings holding one; redaction still removes such tokens (``scan_tokens`` yields them
  with ``ref=None``). Ids above ``MAX_SOURCE_ID`` but within the digit limit are ordinary refs.
- Linear time: the pattern uses a possessive quantifier (``[0-9]++``, Python 3.11+), so an attempt
  never gives digits back; an attempt only gets past its first character at a ``[``, and the digit
  runs after different ``[`` are disjoint, so every character is examined O(1) times.
  ``python -m dev.bench.extract`` shows it.
- Speed: what most callers need of a string is the refs of its tokens, in order, without their
  places. ``Tokens.refs`` gets them with one C-level ``findall`` and a per-draft table from token
  text to ref (a token repeated in a draft is read once); spans are found only where something is
  cut (redaction), and never shared between drafts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple

from worker.core.citations.evidence import CitationRef, EvidenceKind

#: More significant digits than this and an id is not converted to ``int`` (see module docstring).
MAX_ID_DIGITS = 1000

#: The citation token; possessive ``++`` so a failed attempt never backtracks through digits.
TOKEN_RE = re.compile(r"\[(OBS|DOC|EVT)-([0-9]++)\]")
#: The same grammar without groups: ``findall`` returns each token's text, built in C.
TOKEN_TEXT_RE = re.compile(r"\[(?:OBS|DOC|EVT)-[0-9]++\]")
_findall = TOKEN_TEXT_RE.findall

_KINDS = {k.value: k for k in EvidenceKind}
#: The longest token whose digits may go to ``int`` as they are: ``[OBS-`` + 1,000 digits + ``]``.
_LONGEST_PLAIN = 6 + MAX_ID_DIGITS
#: ``tuple.__new__``: builds a NamedTuple from already-checked parts without its Python ``__new__``.
_new = tuple.__new__


class TokenMatch(NamedTuple):
    """One inline token whose id could be held."""

    ref: CitationRef
    #: ``text[start:end]`` is the whole token, brackets included.
    start: int
    end: int


class RawToken(NamedTuple):
    """Any token of the grammar, overlong ones included (what redaction must remove)."""

    #: ``None`` when the id has more than ``MAX_ID_DIGITS`` significant digits.
    ref: CitationRef | None
    start: int
    end: int


def parse_id(digits: str) -> int | None:
    """The id of an ASCII digit string, or ``None`` when it is overlong."""
    if len(digits) <= MAX_ID_DIGITS:
        return int(digits)  # leading zeros are fine for int(); at most 1,000 digits
    significant = digits.lstrip("0")
    if len(significant) > MAX_ID_DIGITS:
        return None
    return int(significant) if significant else 0


def token_ref(token: str) -> CitationRef | None:
    """The ref of one token's text (``[OBS-12]``), ``None`` when its id is overlong."""
    ident = parse_id(token[5:-1])
    return None if ident is None else _new(CitationRef, (_KINDS[token[1:4]], ident))


def scan_tokens(text: str) -> list[RawToken]:
    """Every token of the grammar in ``text``, left to right, in linear time."""
    if "[" not in text:  # a C-level scan: most strings hold no token at all
        return []
    out: list[RawToken] = []
    for m in TOKEN_RE.finditer(text):
        ident = parse_id(m[2])
        start, end = m.span()
        ref = None if ident is None else _new(CitationRef, (_KINDS[m[1]], ident))
        out.append(_new(RawToken, (ref, start, end)))
    return out


def find_tokens(text: str) -> list[TokenMatch]:
    """The tokens of ``text`` whose ids can be held, in order (overlong ones are left out)."""
    return _find(text)[0]


def _find(text: str) -> tuple[list[TokenMatch], bool]:
    """``find_tokens(text)``, and whether that is every token of the grammar (none overlong)."""
    if "[" not in text:  # a C-level scan: most strings hold no token at all
        return [], True
    out: list[TokenMatch] = []
    every = True
    for m in TOKEN_RE.finditer(text):
        digits = m[2]
        ident = int(digits) if len(digits) <= MAX_ID_DIGITS else parse_id(digits)
        if ident is None:
            every = False
        else:
            start, end = m.span()
            out.append(_new(TokenMatch, (_new(CitationRef, (_KINDS[m[1]], ident)), start, end)))
    return out, every


def has_overlong_token(text: str) -> bool:
    """Whether ``text`` holds a token with an overlong id."""
    return any(t.ref is None for t in scan_tokens(text))


class Tokens:
    """The tokens of the strings of one draft, read once and shared.

    Extraction, claim units and redaction all need the tokens of the same strings; one instance
    per draft (made by ``prepare``) keeps the work to one scan per distinct string, one ``int``
    per distinct token text, and one read of each structured citation list. Keyed by the string's
    value (lists: by identity, the list kept alive), so it is correct whatever object a caller
    passes. Callers must not mutate a returned list. It holds only what can be derived from the
    output, so any two memos compare equal: a ``Prepared`` compares by its values.
    """

    __slots__ = ("_by_token", "_entries", "_found", "_overlong", "_refs")

    def __init__(self) -> None:
        self._found: dict[str, tuple[list[TokenMatch], bool]] = {}
        self._refs: dict[str, list[CitationRef]] = {}
        #: Token text -> its ref (``None``: overlong).
        self._by_token: dict[str, CitationRef | None] = {}
        #: ``id`` of a structured citation list -> the list (kept alive) and its refs.
        self._entries: dict[int, tuple[Sequence[Any], list[CitationRef]]] = {}
        self._overlong = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokens)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"<Tokens of {len(self._refs) + len(self._found)} strings>"

    def _get(self, text: str) -> tuple[list[TokenMatch], bool]:
        found = self._found.get(text)
        if found is None:
            found = self._found[text] = _find(text)
        return found

    def __call__(self, text: str) -> list[TokenMatch]:
        """``find_tokens(text)``, from the memo when ``text`` was scanned before."""
        return self._get(text)[0]

    def spans(self, text: str) -> list[tuple[int, int]] | None:
        """The spans of every token of the grammar in ``text``; ``None`` if one is overlong
        (then only ``scan_tokens`` has them all)."""
        matches, every = self._get(text)
        return [(t.start, t.end) for t in matches] if every else None

    def refs(self, text: str) -> list[CitationRef]:
        """``[t.ref for t in find_tokens(text)]``: the refs of its tokens in order, repeats kept."""
        got = self._refs.get(text)
        if got is None:
            got = self._refs[text] = self._read(_findall(text)) if "[" in text else []
        return got

    def distinct_refs_between(self, text: str, start: int, end: int) -> tuple[CitationRef, ...]:
        """The refs of the tokens lying wholly inside ``text[start:end]``, in order, without
        repeats (first occurrence kept): a sentence's refs.

        When every token found was read before (``refs(text)`` read all of ``text``'s) and none
        is overlong, the refs are looked up, de-duplicated and gathered in C.
        """
        found = _findall(text, start, end)
        if not found:
            return ()
        if not self._overlong:
            try:
                # No None in the table: no overlong token was read.
                lookup = self._by_token.__getitem__
                return tuple(dict.fromkeys(map(lookup, found)))  # type: ignore[arg-type]
            except KeyError:  # a token not read yet: read them (and remember them) below
                pass
        return tuple(dict.fromkeys(self._read(found)))

    def distinct_refs_of_spans(
        self, text: str, spans: Sequence[tuple[int, int]]
    ) -> list[tuple[CitationRef, ...]]:
        """``[distinct_refs_between(text, s, e) for s, e in spans]`` in one call: a sentence
        unit's refs for every sentence of a text, the per-span steps in one loop."""
        if "[" not in text:
            return [()] * len(spans)
        findall = _findall
        if not self._overlong:
            lookup = self._by_token.__getitem__
            fromkeys = dict.fromkeys
            try:
                # No None in the table: no overlong token was read.
                return [
                    tuple(fromkeys(map(lookup, found)))  # type: ignore[arg-type]
                    if (found := findall(text, s, e))
                    else ()
                    for s, e in spans
                ]
            except KeyError:  # a token not read yet: read them (and remember them) below
                pass
        between = self.distinct_refs_between
        return [between(text, s, e) for s, e in spans]

    def _read(self, tokens: list[str]) -> list[CitationRef]:
        table = self._by_token
        for token in tokens:
            if token not in table:
                if len(token) <= _LONGEST_PLAIN:  # at most MAX_ID_DIGITS digits: int() it
                    table[token] = _new(CitationRef, (_KINDS[token[1:4]], int(token[5:-1])))
                elif table.setdefault(token, token_ref(token)) is None:
                    self._overlong = True
        refs = [table[t] for t in tokens]
        if self._overlong:
            return [r for r in refs if r is not None]
        return refs  # type: ignore[return-value]  # no None: no overlong token was read

    def entry_refs(self, entries: Sequence[Any]) -> list[CitationRef] | None:
        """The refs a structured citation list was read as (``remember_entries``), if it was."""
        cached = self._entries.get(id(entries))
        return cached[1] if cached is not None and cached[0] is entries else None

    def remember_entries(self, entries: Sequence[Any], refs: list[CitationRef]) -> None:
        """Record the refs of a structured citation list (checked ``{kind, id}`` entries)."""
        self._entries[id(entries)] = (entries, refs)


#: At most this many hidden ids are looked for in a text one by one (a C-level scan of it each,
#: cheaper than reading its tokens when they are few, as in most drafts); past it the text's
#: tokens are read once instead, so the test stays linear in the text however many ids a draft
#: hides (it may cite a thousand: one scan each made a MiB cost seconds).
FEW_HIDDEN = 8


class HiddenTokens(NamedTuple):
    """The tokens of hidden refs as texts, and a test of whether a string holds one."""

    #: Each hidden ref's token as written without leading zeros (``[DOC-9]``).
    texts: frozenset[str]
    #: ``texts`` and ``-0`` (a token written with leading zeros), searched for one by one, when
    #: they are few (``FEW_HIDDEN``); else empty, and the string's tokens are read.
    marks: tuple[str, ...]

    def may_hold(self, text: str) -> bool:
        """Whether ``text`` may hold a hidden token (``False`` is sure), linear in ``text``."""
        if "[" not in text:
            return False
        if self.marks:
            return any(mark in text for mark in self.marks)
        return holds_token_of(text, self.texts)


def hidden_tokens(refs: Iterable[CitationRef]) -> HiddenTokens:
    """The ``HiddenTokens`` of ``refs``."""
    texts = frozenset(f"[{ref.kind.value}-{ref.id}]" for ref in refs)
    return HiddenTokens(texts, (*texts, "-0") if len(texts) <= FEW_HIDDEN else ())


def holds_token_of(text: str, texts: AbstractSet[str]) -> bool:
    """Whether ``text`` holds a token whose text, without leading zeros, is one of ``texts``: one
    C-level pass over its tokens (an overlong id is compared as text, never turned into an int)."""
    found = set(_findall(text))
    if not found.isdisjoint(texts):
        return True
    return "-0" in text and any(
        token[5] == "0" and without_zeros(token) in texts for token in found
    )


def without_zeros(token: str) -> str:
    """A token's text with its id's leading zeros read off (``[DOC-009]`` is ``[DOC-9]``),
    compared as text: an overlong id is never turned into an int."""
    return f"{token[:5]}{token[5:-1].lstrip('0') or '0'}]"


#: No hidden ref: only a token written with leading zeros is looked at.
NO_HIDDEN_TOKENS = HiddenTokens(frozenset(), ("-0",))
