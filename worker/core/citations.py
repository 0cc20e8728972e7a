"""Finding citations: inline ``[OBS-12]`` tokens in text, and every citation of an agent output.

Decisions (contract §3.3):

- Grammar ``\\[(OBS|DOC|EVT)-([0-9]+)\\]`` with ASCII digits only (``re``'s ``\\d`` would also match
  Arabic-Indic and other Unicode digits, which the seed's JS regex does not).
- Leading zeros are insignificant: ``[OBS-007]`` is OBS id 7 (the seed's validator does ``+m[2]``).
- An id with more than ``MAX_ID_DIGITS`` significant digits is *overlong*: it is never turned into
  an ``int`` (CPython refuses more than 4,300 digits by default, and str→int is quadratic), so it is
  not a ``TokenMatch`` and not an ``Occurrence``. ``find_overlong_ids`` reports the paths of the
  strings holding one, for the caller to fail as ``schema_invalid``; redaction still removes such
  tokens (``scan_tokens`` yields them with ``ref=None``). Ids above ``MAX_SOURCE_ID`` but within the
  digit limit are ordinary refs (dangling later).
- Linear time: the pattern uses a possessive quantifier (``[0-9]++``, Python 3.11+), so an attempt
  never gives digits back; an attempt only gets past its first character at a ``[``, and the digit
  runs after different ``[`` are disjoint, so every character is examined O(1) times.
  ``scripts/bench_extract.py`` shows it.
- ``extract`` walks the output with an explicit stack (no recursion limit) in document order. Only
  the contract's structured paths are structured (``citations[i]``, ``claims[i].citations[j]``,
  ``sections[i].citations[j]``, ``timeline[i].citations[j]``, ``grounding.observations[k]``); a
  ``citations`` key elsewhere is plain data whose strings are still scanned. A structured entry
  that is not a valid ``{kind, id}`` (or bare int for observations) raises ``ValueError``: the
  output must be schema-valid first, and skipping it would hide a citation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from worker.core.evidence import CitationRef, EvidenceKind

#: More significant digits than this and an id is not converted to ``int`` (see module docstring).
MAX_ID_DIGITS = 1000

#: The citation token; possessive ``++`` so a failed attempt never backtracks through digits.
TOKEN_RE = re.compile(r"\[(OBS|DOC|EVT)-([0-9]++)\]")

_KINDS = {k.value: k for k in EvidenceKind}
#: ``tuple.__new__``: builds a NamedTuple from already-checked parts without its Python ``__new__``.
_new = tuple.__new__
_UNIT_LISTS = frozenset({"claims", "sections", "timeline"})
#: The role of the items of a list, by the list's role.
_ITEM_ROLE = {"units": "unit", "citations": "entry", "observations": "observation"}
#: Item roles that are citations themselves, whatever their value.
_LEAF_ROLES = frozenset({"entry", "observation"})


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


class Occurrence(NamedTuple):
    """One citation of an output, where it sits, and whether it is inline or structured."""

    ref: CitationRef
    #: ``answer_markdown``, ``claims[0].text``, ``sections[1].citations[0]``, ``patch.fields.note``…
    path: str
    #: True: a token inside a string; False: an entry of a structured array.
    inline: bool


class IdTooLong(NamedTuple):
    """A string holding a token whose id has more than ``MAX_ID_DIGITS`` significant digits."""

    path: str


def parse_id(digits: str) -> int | None:
    """The id of an ASCII digit string, or ``None`` when it is overlong."""
    if len(digits) <= MAX_ID_DIGITS:
        return int(digits)  # leading zeros are fine for int(); at most 1,000 digits
    significant = digits.lstrip("0")
    if len(significant) > MAX_ID_DIGITS:
        return None
    return int(significant) if significant else 0


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


class Tokens:
    """The ``find_tokens`` of each string of one draft, scanned once and shared.

    Extraction, claim units and redaction all need the tokens of the same strings; one instance
    per draft (``Prepared.tokens``) keeps the scan to one per distinct string. Keyed by the
    string's value, so it is correct whatever object a caller passes. Callers must not mutate a
    returned list. It holds only what can be derived from the strings, so any two memos compare
    equal: a ``Prepared`` compares by its values.
    """

    __slots__ = ("_found",)

    def __init__(self) -> None:
        self._found: dict[str, tuple[list[TokenMatch], bool]] = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokens)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"<Tokens of {len(self._found)} strings>"

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


def has_overlong_token(text: str) -> bool:
    """Whether ``text`` holds a token with an overlong id."""
    return any(t.ref is None for t in scan_tokens(text))


def join_path(parent: str, key: str) -> str:
    """``a.b``: a dict key below ``parent`` (keys are used verbatim)."""
    return f"{parent}.{key}" if parent else key


def index_path(parent: str, index: int) -> str:
    """``a[2]``: a list index below ``parent``."""
    return f"{parent}[{index}]"


def walk_strings(output: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Every string value of ``output`` with its path, in document order (keys are not yielded)."""
    for path, value, _role in _walk(output):
        if isinstance(value, str):
            yield path, value


def extract(
    output: Mapping[str, Any], tokens: Callable[[str], list[TokenMatch]] = find_tokens
) -> list[Occurrence]:
    """Every citation of a schema-valid output, in document order, with its field path.

    Overlong tokens are left out: call ``find_overlong_ids`` first and fail the draft on any.
    ``tokens`` finds the tokens of one string (a per-draft ``Tokens`` memo shares the scan).
    The walk is ``_walk``'s, minus the nodes that cannot hold a citation (a string without ``[``,
    a scalar in a plain data position), with one function per structured role: the contract's
    positions are a few fixed levels (root, unit list, unit, citation list, grounding), so only
    plain data needs the general walk (an explicit stack: no recursion limit).
    """
    found: list[Occurrence] = []
    if _shape(output) is _MAP:
        _root(found, tokens, output)
    else:
        _data(found, tokens, "", output)
    return found


_Found = list[Occurrence]
_Scan = Callable[[str], list[TokenMatch]]
#: What the walk needs to know of a value: string, list-like, mapping, or anything else.
_STR, _SEQ, _MAP, _SCALAR = "str", "seq", "map", "scalar"
_SHAPES: dict[type, str] = {
    str: _STR,
    list: _SEQ,
    tuple: _SEQ,
    dict: _MAP,
    int: _SCALAR,
    float: _SCALAR,
    bool: _SCALAR,
    type(None): _SCALAR,
}


def _shape(value: Any) -> str:
    """``_STR``, ``_SEQ`` (list or tuple), ``_MAP`` (any Mapping) or ``_SCALAR``; the exact JSON
    types by one lookup, anything else by ``isinstance`` (subclasses, other mappings)."""
    shape = _SHAPES.get(type(value))
    if shape is not None:
        return shape
    if isinstance(value, str):
        return _STR
    if isinstance(value, list | tuple):
        return _SEQ
    return _MAP if isinstance(value, Mapping) else _SCALAR


def _inline(found: _Found, tokens: _Scan, path: str, text: str) -> None:
    if "[" in text:
        found.extend([_new(Occurrence, (t[0], path, True)) for t in tokens(text)])


def _root(found: _Found, tokens: _Scan, output: Mapping[Any, Any]) -> None:
    for key, child in output.items():
        shape = _shape(child)
        if shape is _STR:
            _inline(found, tokens, str(key), child)
        elif shape is _SEQ:
            if key == "citations":
                _entries(found, tokens, str(key), child)
            elif key in _UNIT_LISTS:
                _units(found, tokens, str(key), child)
            else:
                _data(found, tokens, str(key), child)
        elif shape is _MAP:
            if key == "grounding":
                _grounding(found, tokens, str(key), child)
            else:
                _data(found, tokens, str(key), child)


def _entries(found: _Found, tokens: _Scan, path: str, items: Sequence[Any]) -> None:
    """A structured citation list: every item is an entry (its strings are plain data)."""
    for i, item in enumerate(items):
        at = f"{path}[{i}]"
        found.append(_new(Occurrence, (entry_ref(item, at), at, False)))
        for key, child in item.items():  # a Mapping: entry_ref checked it
            shape = _shape(child)
            if shape is _STR:
                if "[" in child:
                    _inline(found, tokens, f"{at}.{key!s}", child)
            elif shape is not _SCALAR:
                _data(found, tokens, f"{at}.{key!s}", child)


def _units(found: _Found, tokens: _Scan, path: str, items: Sequence[Any]) -> None:
    """``claims``/``sections``/``timeline``: each item may hold a structured citation list."""
    for i, item in enumerate(items):
        shape = _shape(item)
        if shape is _MAP:
            at = f"{path}[{i}]"
            for key, child in item.items():
                inner = _shape(child)
                if inner is _STR:
                    if "[" in child:  # the path is built only for a string that may cite
                        _inline(found, tokens, f"{at}.{key!s}", child)
                elif inner is _SEQ and key == "citations":
                    _entries(found, tokens, f"{at}.{key!s}", child)
                elif inner is _SEQ or inner is _MAP:
                    _data(found, tokens, f"{at}.{key!s}", child)
        elif shape is _STR:
            if "[" in item:
                _inline(found, tokens, f"{path}[{i}]", item)
        elif shape is _SEQ:
            _data(found, tokens, f"{path}[{i}]", item)


def _grounding(found: _Found, tokens: _Scan, path: str, grounding: Mapping[Any, Any]) -> None:
    """A proposal's grounding: ``observations`` are bare OBS ids."""
    for key, child in grounding.items():
        shape = _shape(child)
        if shape is _STR:
            _inline(found, tokens, f"{path}.{key!s}", child)
        elif shape is _SEQ and key == "observations":
            for k, value in enumerate(child):
                at = f"{path}.{key!s}[{k}]"
                found.append(_new(Occurrence, (observation_ref(value, at), at, False)))
        elif shape is _SEQ or shape is _MAP:
            _data(found, tokens, f"{path}.{key!s}", child)


def _data(found: _Found, tokens: _Scan, path: str, value: Any) -> None:
    """Plain data: the tokens of every string below ``value``, in document order."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        path, value = stack.pop()
        shape = _shape(value)
        if shape is _STR:
            _inline(found, tokens, path, value)
        elif shape is _MAP:
            stack.extend(
                reversed([(join_path(path, str(k)), v) for k, v in value.items() if _may_cite(v)])
            )
        elif shape is _SEQ:
            stack.extend(
                reversed([(f"{path}[{i}]", v) for i, v in enumerate(value) if _may_cite(v)])
            )


def _may_cite(value: Any) -> bool:
    """Whether a plain data value could hold a citation: a container, or a string with ``[``."""
    shape = _shape(value)
    if shape is _STR:
        return "[" in value
    return shape is not _SCALAR


def find_overlong_ids(output: Mapping[str, Any]) -> list[IdTooLong]:
    """Paths of the strings that hold a token whose id has too many digits to be read."""
    return [IdTooLong(path) for path, text in walk_strings(output) if has_overlong_token(text)]


def entry_ref(value: Any, path: str) -> CitationRef:
    """The ref of a structured ``{kind, id}`` entry; ``ValueError`` if it is not schema-valid."""
    ref = entry_ref_or_none(value)
    if ref is None:
        raise ValueError(f"structured citation at {path} is not a valid {{kind, id}}")
    return ref


def entry_ref_or_none(value: Any) -> CitationRef | None:
    """``entry_ref`` without the path: ``None`` if ``value`` is not a valid ``{kind, id}``
    (for callers that build the path only to report that)."""
    if type(value) is dict:  # the JSON case, checked with exact types first
        kind = value.get("kind")
        ident = value.get("id")
        if type(kind) is str and type(ident) is int and ident >= 0 and kind in _KINDS:
            return _new(CitationRef, (_KINDS[kind], ident))
    if isinstance(value, Mapping):
        kind = value.get("kind")
        ident = value.get("id")
        if (
            isinstance(kind, str)
            and kind in _KINDS
            and isinstance(ident, int)
            and not isinstance(ident, bool)
            and ident >= 0
        ):
            return _new(CitationRef, (_KINDS[kind], ident))
    return None


def observation_ref(value: Any, path: str) -> CitationRef:
    """The OBS ref of a ``grounding.observations`` entry; ``ValueError`` if it is not an id."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return CitationRef(EvidenceKind.OBS, value)
    raise ValueError(f"observation at {path} is not a non-negative integer")


def _walk(output: Mapping[str, Any]) -> Iterator[tuple[str, Any, str]]:
    """Pre-order walk yielding ``(path, value, role)``; role names the structured positions.

    Roles: ``root``, ``units`` (top-level claims/sections/timeline list), ``unit`` (one of their
    items), ``citations`` (a structured citation list), ``entry`` (one ``{kind, id}``),
    ``grounding``, ``observations``, ``observation`` (a bare OBS id), ``data`` (anything else).
    """
    stack: list[tuple[str, Any, str]] = [("", output, "root")]
    while stack:
        path, value, role = stack.pop()
        yield path, value, role
        children: list[tuple[str, Any, str]] = []
        if isinstance(value, Mapping):
            for key, child in value.items():
                children.append((join_path(path, str(key)), child, _child_role(role, key, child)))
        elif isinstance(value, list | tuple):
            item_role = _ITEM_ROLE.get(role, "data")
            children.extend(
                (index_path(path, i), child, item_role) for i, child in enumerate(value)
            )
        stack.extend(reversed(children))


def _child_role(role: str, key: object, child: Any) -> str:
    if not isinstance(child, list | tuple | Mapping):
        return "data"
    if role == "root":
        if key == "citations" and isinstance(child, list | tuple):
            return "citations"
        if key in _UNIT_LISTS and isinstance(child, list | tuple):
            return "units"
        if key == "grounding" and isinstance(child, Mapping):
            return "grounding"
    elif role == "unit":
        if key == "citations" and isinstance(child, list | tuple):
            return "citations"
    elif role == "grounding" and key == "observations" and isinstance(child, list | tuple):
        return "observations"
    return "data"
