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
from collections.abc import Callable, Iterator, Mapping
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
    The walk is ``_walk``'s, minus the nodes that cannot hold a citation: a string without ``[``
    and a scalar in a plain data position are never pushed, and a path is only built for what is.
    """
    found: list[Occurrence] = []
    stack: list[tuple[str, Any, str]] = [("", output, "root")]
    while stack:
        path, value, role = stack.pop()
        if role == "entry":
            found.append(_new(Occurrence, (entry_ref(value, path), path, False)))
        elif role == "observation":
            found.append(_new(Occurrence, (observation_ref(value, path), path, False)))
        if isinstance(value, str):
            found.extend(_new(Occurrence, (t.ref, path, True)) for t in tokens(value))
            continue
        children: list[tuple[str, Any, str]] = []
        if isinstance(value, Mapping):
            for key, child in value.items():
                if isinstance(child, str):
                    if "[" in child:
                        children.append((join_path(path, str(key)), child, "data"))
                elif isinstance(child, list | tuple | Mapping):
                    child_role = _child_role(role, key, child)
                    children.append((join_path(path, str(key)), child, child_role))
        elif isinstance(value, list | tuple):
            item_role = _ITEM_ROLE.get(role, "data")
            every = item_role in _LEAF_ROLES
            for i, child in enumerate(value):
                if every or _may_cite(child):
                    children.append((f"{path}[{i}]", child, item_role))
        stack.extend(reversed(children))
    return found


def _may_cite(value: Any) -> bool:
    """Whether a plain data value could hold a citation: a container, or a string with ``[``."""
    if isinstance(value, str):
        return "[" in value
    return isinstance(value, list | tuple | Mapping)


def find_overlong_ids(output: Mapping[str, Any]) -> list[IdTooLong]:
    """Paths of the strings that hold a token whose id has too many digits to be read."""
    return [IdTooLong(path) for path, text in walk_strings(output) if has_overlong_token(text)]


def entry_ref(value: Any, path: str) -> CitationRef:
    """The ref of a structured ``{kind, id}`` entry; ``ValueError`` if it is not schema-valid."""
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
            return CitationRef(_KINDS[kind], ident)
    raise ValueError(f"structured citation at {path} is not a valid {{kind, id}}")


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
