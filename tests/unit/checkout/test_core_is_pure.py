"""The core imports nothing from Faust, aiokafka, asyncpg or pymongo, nor the clock or logging.

Checked twice: statically (every import statement of worker/core) and at run time (importing
every core module in a fresh interpreter pulls in none of the IO libraries).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[3] / "worker" / "core"
IO_LIBRARIES = ("faust", "mode", "aiokafka", "kafka", "asyncpg", "pymongo", "bson", "motor")
#: The core is pure: values in, values out. Time comes in as an argument; nothing logs.
FORBIDDEN_STDLIB = ("logging", "structlog", "time", "socket", "asyncio", "os", "subprocess")


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_core_module_imports_io_or_clock() -> None:
    modules = sorted(CORE.rglob("*.py"))
    assert len(modules) >= 10
    offenders = {
        str(p.relative_to(CORE)): sorted(_imported_roots(p) & {*IO_LIBRARIES, *FORBIDDEN_STDLIB})
        for p in modules
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_importing_the_core_loads_no_io_library() -> None:
    names = [
        "worker.core." + ".".join(p.relative_to(CORE).with_suffix("").parts)
        for p in sorted(CORE.rglob("*.py"))
        if p.stem != "__init__"
    ]
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}: importlib.import_module(n)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {IO_LIBRARIES!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
