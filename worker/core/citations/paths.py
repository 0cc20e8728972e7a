"""The plain walk of an agent output: every node with its field path (``a.b``, ``a[2]``) and its
role among the contract's structured positions (``worker.core.citations.extraction`` documents
them), and every string value with its path (``walk_strings``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

#: The top-level lists whose items are units (each may hold a structured citation list).
UNIT_LISTS = frozenset({"claims", "sections", "timeline"})
#: The role of the items of a list, by the list's role.
_ITEM_ROLE = {"units": "unit", "citations": "entry", "observations": "observation"}


def join_path(parent: str, key: str) -> str:
    """``a.b``: a dict key below ``parent`` (keys are used verbatim)."""
    return f"{parent}.{key}" if parent else key


def index_path(parent: str, index: int) -> str:
    """``a[2]``: a list index below ``parent``."""
    return f"{parent}[{index}]"


def walk_strings(output: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Every string value of ``output`` with its path, in document order (keys are not yielded)."""
    for path, value, _role in walk(output):
        if isinstance(value, str):
            yield path, value


def walk(output: Mapping[str, Any]) -> Iterator[tuple[str, Any, str]]:
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
        if key in UNIT_LISTS and isinstance(child, list | tuple):
            return "units"
        if key == "grounding" and isinstance(child, Mapping):
            return "grounding"
    elif role == "unit":
        if key == "citations" and isinstance(child, list | tuple):
            return "citations"
    elif role == "grounding" and key == "observations" and isinstance(child, list | tuple):
        return "observations"
    return "data"
