"""Code is reached by importing packages; nothing is reached by a path.

A file that edits ``sys.path`` (or the import path in the environment) or a test that executes a
file by its path hides that code from mypy and ruff's import rules, and breaks when the file
moves. So: the scripts under ``scripts/`` are entry points that import packages, the benchmarks
are modules of ``bench`` (``python -m dev.bench.core``), the e2e harness is the package ``harness``,
and pytest finds both through ``pythonpath``; every package at the checkout's root is under mypy
strict and ruff.
"""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = ROOT / "scripts"
#: Ways to reach code by a file path (spelled in pieces so this file does not match itself).
BY_PATH = re.compile(
    "|".join(["spec_from_" + "file_location", "Source" + "FileLoader", "run" + "py"])
)
#: Ways to edit the import path (spelled in pieces so this file does not match itself).
SYS_PATH = re.compile(
    "|".join(
        [
            r"sys\." + r"path\s*(\.(insert|append|extend)|\[|\+?=)",
            "site" + r"\.addsitedir",
            "PYTHON" + "PATH",
        ]
    )
)
#: The packages at the checkout's root (each a directory with an ``__init__.py``).
PACKAGES = sorted(p.parent.name for p in ROOT.glob("*/__init__.py"))


def text_files(top: Path) -> list[Path]:
    """Every text file under ``top``, node_modules and bytecode aside."""
    return [
        p
        for p in sorted(top.rglob("*"))
        if p.is_file()
        and "node_modules" not in p.parts
        and "__pycache__" not in p.parts
        and b"\0" not in p.read_bytes()[:1024]
    ]


def python_scripts() -> list[Path]:
    """The Python entry points under scripts/ (with or without the .py suffix)."""
    return [
        p
        for p in text_files(SCRIPTS)
        if p.suffix == ".py" or p.read_bytes()[:64].startswith(b"#!/usr/bin/env python")
    ]


def path_edits(files: list[Path]) -> list[str]:
    return [
        str(p.relative_to(ROOT))
        for p in files
        if SYS_PATH.search(p.read_text(encoding="utf-8", errors="replace"))
    ]


def test_the_root_packages_are_the_expected_ones() -> None:
    assert PACKAGES == ["dev", "worker"]


def test_nothing_under_scripts_edits_the_import_path() -> None:
    """Python and shell alike: every file of the tree, the benchmark's entry point included."""
    files = text_files(SCRIPTS)
    assert {"services", "bench", "gen_schemas.py", "lib/services-venv.sh"} <= {
        str(p.relative_to(SCRIPTS)) for p in files
    }
    assert path_edits(files) == []


def test_no_package_and_no_test_edits_the_import_path() -> None:
    files = [p for top in (*PACKAGES, "tests") for p in text_files(ROOT / top)]
    assert ROOT / "dev" / "harness" / "__init__.py" in files
    assert ROOT / "tests" / "chaos" / "conftest.py" in files
    assert ROOT / "tests" / "unit" / "stream" / "golden_pipeline.py" in files
    assert path_edits(files) == []


def test_no_test_executes_a_file_by_its_path() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "tests").rglob("*.py"))
        if BY_PATH.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_benchmarks_are_modules_of_bench_not_scripts() -> None:
    """``scripts/bench`` is the one benchmark entry point under scripts/; the others run as
    ``python -m dev.bench.<name>``, each with a ``main`` and a ``__main__`` guard."""
    assert sorted(p.name for p in SCRIPTS.glob("*bench*")) == ["bench"]
    assert not list(SCRIPTS.glob("measure_*"))
    for name in ("core", "edges", "extract", "memory", "produce", "recovery", "route"):
        text = (ROOT / "dev" / "bench" / f"{name}.py").read_text(encoding="utf-8")
        assert "\ndef main() -> " in text or "\nasync def main() -> " in text, name
        assert '\nif __name__ == "__main__":\n' in text, name
        assert f"-m dev.bench.{name}" in text, name  # its usage line names how it is run


def test_the_docs_name_the_benchmarks_as_modules() -> None:
    """The current docs say ``python -m dev.bench.<name>``; the dated history keeps its own words
    (and says where the scripts went)."""
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *text_files(ROOT / "deploy")]
    gone = re.compile(r"scripts/(bench_\w+|measure_memory)\.py|golden_pipeline\.py --write")
    stale = [
        str(p.relative_to(ROOT))
        for p in docs
        if p.name != "benchmarks-history.md" and gone.search(p.read_text(encoding="utf-8"))
    ]
    assert stale == []


def test_the_benchmark_entry_point_runs_the_package() -> None:
    lines = (SCRIPTS / "bench").read_text(encoding="utf-8").splitlines()
    assert lines[-1] == '"$py" -m dev.bench "$@"'


def test_every_root_package_and_python_script_is_type_checked() -> None:
    files = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"][
        "files"
    ]
    assert set(PACKAGES) <= set(files)
    unchecked = [
        str(p.relative_to(ROOT))
        for p in python_scripts()
        if not any(fnmatch(str(p.relative_to(ROOT)), pattern) for pattern in files)
    ]
    assert unchecked == []


def test_every_root_package_is_linted_in_ci() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    [lint] = [line for line in ci.splitlines() if "ruff check" in line]
    [fmt] = [line for line in ci.splitlines() if "ruff format --check" in line]
    for package in PACKAGES:
        assert f" {package}" in lint.split("ruff check", 1)[1], package
        assert f" {package}" in fmt.split("ruff format --check", 1)[1], package


def test_the_generators_entry_points_are_thin() -> None:
    """Each generator script only runs its module from the root; the code is in dev/generators/."""
    for path in sorted(SCRIPTS.glob("gen_*.py")):
        text = path.read_text(encoding="utf-8")
        assert f'"dev.generators.{path.stem.removeprefix("gen_")}"' in text, path.name
        assert (ROOT / "dev" / "generators" / f"{path.stem.removeprefix('gen_')}.py").is_file()
        assert len(text.splitlines()) < 20, path.name
