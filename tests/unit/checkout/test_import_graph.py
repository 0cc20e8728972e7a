"""The product's import graph has no cycle (docs/decisions.md, code layout).

Drawn from the AST as Python runs it at import time: every module-level ``import worker...`` and
``from worker... import`` of every module under ``worker/`` (imports inside functions run later,
when both modules are loaded; ``if TYPE_CHECKING:`` blocks never run). A package's ``__init__``
is a module like any other, so a submodule importing its own package's face while the face
imports it is a cycle too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "worker"


def module_names() -> dict[str, Path]:
    names: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        names[".".join(parts)] = path
    return names


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _top_level(tree: ast.Module) -> list[ast.stmt]:
    """The statements that run when the module is imported (``try``/``if`` bodies included)."""
    out: list[ast.stmt] = []
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" in ast.unparse(node.test):
                todo.extend(node.orelse)
                continue
            todo.extend([*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            todo.extend([*node.body, *node.orelse, *node.finalbody])
            for handler in node.handlers:
                todo.extend(handler.body)
        else:
            out.append(node)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in _top_level(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for target in targets:
                if target == "worker" or target.startswith("worker."):
                    owner = _owner(target, modules)
                    if owner is not None and owner != name:
                        edges.add(owner)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_is_drawn_from_every_module() -> None:
    graph = import_graph()
    assert "worker.core.batch" in graph
    assert "worker.core.contract" in graph["worker.core.batch"] or any(
        "worker.core" in edge for edge in graph["worker.core.batch"]
    )
    assert len(graph) > 100


def test_the_finder_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_product_import_graph_has_no_cycle() -> None:
    assert cycles(import_graph()) == []
