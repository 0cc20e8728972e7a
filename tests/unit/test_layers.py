"""The shell's layers: Faust lives in ``worker/stream`` only, and nothing else reaches into it.

- ``worker/kafka`` (records, dead letters, control records, topic specs, clients) imports no
  Faust, so the tools and the ledger sink can use it without starting a Faust app.
- ``worker/tools`` and ``worker/ledger`` import neither ``worker.stream`` nor Faust.
- ``worker/cli.py`` reaches ``worker.stream`` only for ``run`` (``worker.stream.main``).
- One front door per use case: the stream pipeline and ``check`` decide a batch only through
  ``worker.core.batch`` (``plan_batch``/``plan_record`` and ``decide_batch``), never through the
  per-draft steps or the turn machine's transitions behind it.

Checked statically (every import statement, including the deferred ones inside functions) and at
run time (importing every module of those packages in a fresh interpreter loads neither).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).resolve().parents[2] / "worker"
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
    reached = sorted(m for m in _imports(WORKER / "cli.py") if m.startswith("worker.stream"))
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


#: The steps behind the batch door: a shell that calls one decides something of its own.
BEHIND_THE_DOOR = {
    "worker.core.grounding.admit",
    "worker.core.grounding.admit_draft",
    "worker.core.grounding.judge",
    "worker.core.turns.machine.decide",
    "worker.core.turns.machine.on_deadline",
    "worker.core.turns.machine.expired",
    "worker.core.turns.control.parse_control",
    "worker.core.turns.control.is_control",
    "worker.core.messages.tracecontext.parse_traceparent",
    "worker.core.verdict.evaluate",
    "worker.core.envelope.draft.parse_envelope",
}


def test_the_shells_decide_a_batch_only_through_the_core_batch_door() -> None:
    for shell in ("stream/pipeline.py", "tools/check.py"):
        imported = _imports(WORKER / shell)
        assert "worker.core.batch.decide_batch" in imported, shell
        assert sorted(imported & BEHIND_THE_DOOR) == [], shell


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
    "verdict",
    "turns",
    "grounding",
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
