"""Untrusted JSON read the way the core needs it (the draft envelope, dead letters on replay).

orjson on the fast path. orjson reads integers beyond 64 bits as floats, which would turn
a huge (dangling) id into a non-id, so input with a run of 20+ digits (19 after a minus sign:
below -2^63), and input orjson refuses,
goes to the standard library parser with hooks: an integer of more than 1,000 digits or a
non-finite number becomes an opaque marker that fails any typed field (``schema_invalid`` inside
``output``); JSON nested beyond what a parser can take has its too-deep containers replaced by
``[]`` (still deeper than 64, so the output fails ``schema_invalid`` at that path).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

#: Containers deeper than this in the raw record are replaced by ``[]`` before parsing.
PARSE_DEPTH_CAP = 200
_MAX_INT_DIGITS = 1000
#: Every ASCII digit read as NUL: a run of 20 digits is then one substring search (a C scan),
#: where a ``[0-9]{20}`` pattern tried a match at every byte (~9 ns a byte).
_DIGITS_AS_NUL = bytes.maketrans(b"0123456789", b"\0" * 10)
_TWENTY_NULS = b"\0" * 20
#: orjson reads a 19-digit integer below -2^63 as a float too: those take the slow path as well.
_MINUS_NINETEEN_NULS = b"-" + b"\0" * 19
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class Unreadable:
    """A JSON number the core will not materialise (over 1,000 digits, or not finite)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unreadable number>"


UNREADABLE = Unreadable()


def _parse_int(text: str) -> int | Unreadable:
    return UNREADABLE if len(text.lstrip("-")) > _MAX_INT_DIGITS else int(text)


def _parse_float(text: str) -> float | Unreadable:
    value = float(text)
    return value if math.isfinite(value) else UNREADABLE


def _parse_constant(_: str) -> Unreadable:
    return UNREADABLE


def cap_depth(text: str, cap: int = PARSE_DEPTH_CAP) -> str:
    """Replace every container opened deeper than ``cap`` by ``[]`` (linear, no recursion)."""
    out: list[str] = []
    depth = 0
    last = 0
    skip_from = -1
    for match in _TOKENS.finditer(text):
        tok = match.group()
        if tok in "[{":
            depth += 1
            if depth == cap + 1 and skip_from < 0:
                skip_from = match.start()
        elif tok in "]}":
            if depth == cap + 1 and skip_from >= 0:
                out.append(text[last:skip_from])
                out.append("[]")
                last = match.end()
                skip_from = -1
            depth -= 1
    out.append(text[last:])
    return "".join(out)


def _has_lone_surrogate(obj: Any) -> bool:
    stack = [obj]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def loads_json(data: bytes) -> Any:
    """Parse UTF-8 JSON as the core needs it; ``ValueError`` when it is not valid JSON."""
    text = data.decode("utf-8")
    # A raw NUL byte is no valid JSON: a false alarm here only takes the slow path.
    digits = data.translate(_DIGITS_AS_NUL)
    if _TWENTY_NULS not in digits and _MINUS_NINETEEN_NULS not in digits:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    hooks: dict[str, Any] = {
        "parse_int": _parse_int,
        "parse_float": _parse_float,
        "parse_constant": _parse_constant,
    }
    try:
        value = json.loads(text, **hooks)
    except RecursionError:
        value = json.loads(cap_depth(text), **hooks)
    if _has_lone_surrogate(value):
        raise ValueError("lone surrogate escape")
    return value


def dumps_json(obj: Any, *, indent: bool = False, sort_keys: bool = False) -> str:
    """``obj`` as JSON text for a person or a tool (``check``, ``replay``): orjson, or, for what
    it cannot write (an integer beyond 64 bits: a dangling id), the standard library, with an
    unreadable number written as ``null``."""
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(obj, option=option).decode()
    except TypeError:
        return json.dumps(
            obj,
            indent=2 if indent else None,
            sort_keys=sort_keys,
            ensure_ascii=False,
            separators=None if indent else (",", ":"),
            default=lambda value: None if isinstance(value, Unreadable) else str(value),
        )
