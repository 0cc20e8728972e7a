"""The checkout's layout: a short root, one product package, the development wing apart.

The measure (docs/architecture.md, docs/decisions.md): ``git ls-files | cut -d/ -f1 | sort -u``
lists at most 13 entries, and ``pip install .`` installs ``worker`` alone (the wing ``dev`` is
imported from the checkout).
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def tracked_files() -> list[str]:
    git = shutil.which("git")
    assert git is not None, "git is needed to list the tracked files"
    out = subprocess.run(
        [git, "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [line for line in out.splitlines() if line]


def test_the_root_lists_at_most_thirteen_entries() -> None:
    entries = {path.split("/", 1)[0] for path in tracked_files()}
    assert entries == {
        ".ci",
        ".gitignore",
        "LICENSE",
        "README.md",
        "deploy",
        "dev",
        "docs",
        "pyproject.toml",
        "schemas",
        "scripts",
        "tests",
        "topics",
        "worker",
    }
    assert len(entries) <= 13


def test_pip_install_installs_the_product_package_alone() -> None:
    find = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["packages"]["find"]
    # setuptools' find on a clean checkout: every directory holding an __init__.py whose dotted
    # name matches `include`.
    inits = [path for path in tracked_files() if path.endswith("/__init__.py")]
    dotted = [path.removesuffix("/__init__.py").replace("/", ".") for path in inits]
    packages = [p for p in dotted if any(fnmatch(p, pattern) for pattern in find["include"])]
    assert "worker" in packages
    assert "worker.core" in packages
    assert sorted({p.split(".", 1)[0] for p in packages}) == ["worker"]


def test_the_development_wing_is_one_package() -> None:
    wing = sorted(p.parent.name for p in (ROOT / "dev").glob("*/__init__.py"))
    assert wing == ["bench", "generators", "harness", "testbed"]
    assert (ROOT / "dev" / "__init__.py").is_file()
    assert (ROOT / "dev" / "testbed" / "services" / "kafka" / "pom.xml").is_file()
