"""The shell's layers: Faust lives in ``worker/stream`` only, and nothing else reaches into it.

- ``worker/kafka`` (records, dead letters, control records, topic specs, clients) imports no
  Faust, so the tools and the ledger sink can use it without starting a Faust app.
- ``worker/tools`` and ``worker/ledger`` import neither ``worker.stream`` nor Faust.
- ``worker/cli/`` reaches ``worker.stream`` only for ``run`` (``worker.stream.main``).
- One front door per use case: the stream pipeline and ``check`` decide a batch only through
  ``plan_batch``/``plan_record`` and ``decide_batch``, never through the per-draft steps or the
  turn machine's transitions behind it.
- The core has one face: code outside ``worker/core`` (the product package and the development
  packages and scripts) imports ``worker.core`` and names on its ``__all__`` only (an allow-list);
  the core's own modules never import the face, so importing one of them cannot cycle.
- No module imports a private name (a leading underscore) from another package.

Checked statically (every import statement, including the deferred ones inside functions) and at
run time (importing every module of those packages in a fresh interpreter loads neither).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).resolve().parents[3] / "worker"
FAUST = ("faust", "mode")
FAUST_FREE = ("kafka", "tools", "ledger")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in the file (absolute imports only)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _offends(module: str) -> bool:
    return (
        module.split(".", maxsplit=1)[0] in FAUST
        or module == "worker.stream"
        or (module.startswith("worker.stream."))
    )


def _modules(package: str) -> list[Path]:
    return sorted((WORKER / package).glob("*.py"))


def test_faust_free_packages_import_neither_stream_nor_faust() -> None:
    checked = [p for package in FAUST_FREE for p in _modules(package)]
    assert len(checked) >= 15
    offenders = {
        str(p.relative_to(WORKER)): sorted(m for m in _imports(p) if _offends(m)) for p in checked
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_cli_reaches_the_stream_only_to_run_the_worker() -> None:
    reached = sorted(
        m
        for p in (WORKER / "cli").glob("*.py")
        for m in _imports(p)
        if m.startswith("worker.stream")
    )
    assert reached == ["worker.stream.main", "worker.stream.main.run_worker"]


def test_importing_the_faust_free_packages_loads_no_faust() -> None:
    names = [
        f"worker.{package}.{p.stem}" if p.stem != "__init__" else f"worker.{package}"
        for package in FAUST_FREE
        for p in _modules(package)
    ]
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}: importlib.import_module(n)\n"
        "print(sorted(m for m in sys.modules"
        f" if m.split('.')[0] in {FAUST!r} or m.startswith('worker.stream')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


#: The steps behind the batch door that the face shows the benchmarks and generators: a shell
#: that calls one decides something of its own. (The others are not on the face at all.)
BEHIND_THE_DOOR = {
    f"worker.core.{name}"
    for name in (
        "admit",
        "judge",
        "decide",
        "on_deadline",
        "evaluate",
        "prepare",
        "parse_envelope",
        "parse_traceparent",
    )
}


def test_the_shells_decide_a_batch_only_through_the_core_batch_door() -> None:
    for shell in ("stream/processing/pipeline.py", "tools/check.py"):
        imported = _imports(WORKER / shell)
        assert "worker.core.decide_batch" in imported, shell
        assert sorted(imported & BEHIND_THE_DOOR) == [], shell
        assert not any(m.startswith("worker.core.") and m.count(".") > 2 for m in imported), shell


# --- the core's face -------------------------------------------------------------------------

ROOT = WORKER.parent
#: The development wing and the scripts' entry points.
DEV_DIRS = ("dev", "scripts")
#: Imports of a core submodule outside the face, each with its reason: the route benchmark
#: replays the core's answers by patching the names the batch module calls.
FACE_EXCEPTIONS = {("route.py", "worker.core", "batch")}


def _outside_the_core() -> list[Path]:
    """Every Python file outside ``worker/core``: the product package, the development ones."""
    files = [p for p in WORKER.rglob("*.py") if CORE not in p.parents]
    for name in DEV_DIRS:
        if (ROOT / name).is_dir():
            files += (ROOT / name).rglob("*.py")
    return sorted(p for p in files if "__pycache__" not in p.parts)


def _absolute(path: Path, node: ast.ImportFrom) -> str | None:
    """The module a ``from`` import names, a relative one resolved against ``path``'s package."""
    if node.level == 0:
        return node.module
    package = path.relative_to(ROOT).parent.parts
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _face_offences(path: Path, face: set[str]) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("worker.core.")]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            if module is None:
                continue
            if module.startswith("worker.core."):
                found.append(module)
            elif module == "worker.core":
                found += [
                    f"worker.core.{a.name}"
                    for a in node.names
                    if a.name not in face and (path.name, module, a.name) not in FACE_EXCEPTIONS
                ]
    return found


def test_code_outside_the_core_imports_only_its_face() -> None:
    import worker.core  # noqa: PLC0415 - the face's names, read once

    face = set(worker.core.__all__)
    files = _outside_the_core()
    assert len(files) >= 100
    offences = {str(p.relative_to(ROOT)): _face_offences(p, face) for p in files}
    assert {k: v for k, v in offences.items() if v} == {}


def test_the_face_names_exist_and_the_cores_modules_never_import_it() -> None:
    import worker.core  # noqa: PLC0415

    assert [n for n in worker.core.__all__ if not hasattr(worker.core, n)] == []
    assert len(set(worker.core.__all__)) == len(worker.core.__all__)
    through_the_face = sorted(
        str(p.relative_to(CORE))
        for p in CORE.rglob("*.py")
        if p.name != "__init__.py" or p.parent != CORE
        if {"worker.core"} & {m for m in _imports(p) if m.count(".") <= 1}
        or any(
            isinstance(n, ast.ImportFrom) and n.level > 0
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        )
    )
    assert through_the_face == []


def test_the_face_loads_each_name_from_the_module_it_imports_it_from() -> None:
    """What mypy reads (the ``TYPE_CHECKING`` imports) and what runs (``_HOME``, read on first
    use) name the same module for every name of ``__all__``."""
    import worker.core  # noqa: PLC0415

    tree = ast.parse((CORE / "__init__.py").read_text(encoding="utf-8"))
    guarded = next(n for n in tree.body if isinstance(n, ast.If))
    imported = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == worker.core._HOME
    assert sorted(imported) == sorted(worker.core.__all__)


def test_importing_one_core_module_does_not_load_the_whole_core() -> None:
    code = (
        "import sys\n"
        "import worker.core.contract\n"
        "from worker.core import ErrorClass\n"
        "print(sorted(m for m in sys.modules if m.startswith('worker.core')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "['worker.core', 'worker.core.contract']"


def _package_of(module: str) -> str:
    """``worker.stream.app`` -> ``worker.stream``; a package is its own."""
    path = ROOT.joinpath(*module.split("."))
    return module if path.is_dir() else module.rpartition(".")[0]


FIRST_PARTY = ("worker", *DEV_DIRS)


def test_no_module_imports_a_private_name_from_another_package() -> None:
    offences: list[str] = []
    for path in _outside_the_core() + sorted(CORE.rglob("*.py")):
        home = ".".join(path.relative_to(ROOT).parent.parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                offences += [
                    f"{path.relative_to(ROOT)}: import {a.name}"
                    for a in node.names
                    if a.name.split(".")[0] in FIRST_PARTY
                    and any(part.startswith("_") for part in a.name.split("."))
                ]
            elif isinstance(node, ast.ImportFrom):
                module = _absolute(path, node)
                if module is None or module.split(".")[0] not in FIRST_PARTY:
                    continue
                private = [
                    a.name
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
                if private and _package_of(module) != home:
                    offences.append(f"{path.relative_to(ROOT)}: from {module} import {private}")
    assert offences == []


# --- the core's packages ---------------------------------------------------------------------

CORE = WORKER / "core"
#: The core's packages and top modules, lowest first: each imports only those before it (the
#: vocabulary and the one IO seam at the bottom, the batch's front door at the top).
CORE_LAYERS = (
    "contract",
    "failures",
    "citations",
    "outputs",
    "messages",
    "evidence_store",
    "claims",
    "envelope",
    "cited_sources",
    "verdict",
    "turns",
    "grounding",
    "batch_values",
    "batch",
)


def _core_part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["worker", "core"] else None


def test_the_cores_packages_import_only_those_below_them() -> None:
    found = {p.name.removesuffix(".py") for p in CORE.iterdir() if p.suffix == ".py" or p.is_dir()}
    assert found - {"__init__", "__pycache__"} == set(CORE_LAYERS)
    upward: dict[str, list[str]] = {}
    for path in sorted(CORE.rglob("*.py")):
        part = path.relative_to(CORE).parts[0].removesuffix(".py")
        if part == "__init__":
            continue
        below = set(CORE_LAYERS[: CORE_LAYERS.index(part)])
        for module in _imports(path):
            target = _core_part(module)
            if target is not None and target != part and target not in below:
                upward.setdefault(str(path.relative_to(CORE)), []).append(module)
    assert upward == {}
