"""``scripts/`` holds entry points that import packages; nothing is reached by a path.

A script that edits ``sys.path`` or a test that executes a file by its path hides that code from
mypy and ruff's import rules, and breaks when the file moves. The benchmarks' scripts are
packaged on their own and are left out here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
BENCHMARKS = ("bench", "measure_memory")
#: Ways to reach code by a file path (spelled in pieces so this file does not match itself).
BY_PATH = re.compile(
    "|".join(["spec_from_" + "file_location", "Source" + "FileLoader", "run" + "py"])
)
SYS_PATH = re.compile(r"sys\.path\.(insert|append)|PYTHON" + "PATH")


def python_scripts() -> list[Path]:
    """The Python entry points under scripts/ (with or without the .py suffix)."""
    found = []
    for path in sorted(SCRIPTS.rglob("*")):
        if not path.is_file() or path.name.startswith(BENCHMARKS) or "node_modules" in path.parts:
            continue
        if any(part.startswith(BENCHMARKS) for part in path.relative_to(SCRIPTS).parts):
            continue
        head = path.read_bytes()[:64]
        if path.suffix == ".py" or head.startswith(b"#!/usr/bin/env python"):
            found.append(path)
    return found


def test_scripts_import_packages_without_editing_the_path() -> None:
    scripts = python_scripts()
    assert {"services", "gen_schemas.py", "promql_names.py"} <= {p.name for p in scripts}
    offenders = [
        str(p.relative_to(ROOT)) for p in scripts if SYS_PATH.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_no_test_executes_a_file_by_its_path() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "tests").rglob("*.py"))
        if BY_PATH.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_generators_entry_points_are_thin() -> None:
    """Each generator script only calls its module's ``main``: the code lives in generators/."""
    for path in sorted(SCRIPTS.glob("gen_*.py")):
        text = path.read_text(encoding="utf-8")
        assert f"from generators.{path.stem.removeprefix('gen_')} import main" in text, path.name
        assert len(text.splitlines()) < 20, path.name
