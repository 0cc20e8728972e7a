"""The lock files pin a version of every declared dependency that pyproject.toml allows.

``deploy/requirements/dev.lock`` is what CI and ``scripts/test`` install,
``deploy/requirements/runtime.lock`` what the image installs; ``scripts/lock`` rewrites both. A
dependency added, removed or narrowed in pyproject.toml without re-locking fails here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[3]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^ \\;]+)", re.M)


def pins(lock: str) -> dict[str, str]:
    text = (ROOT / "deploy" / "requirements" / lock).read_text()
    return {canonicalize_name(name): version for name, version in PIN.findall(text)}


def declared(*extras: str) -> list[Requirement]:
    found = [Requirement(r) for r in PROJECT["dependencies"]]
    for extra in extras:
        found += [Requirement(r) for r in PROJECT["optional-dependencies"][extra]]
    return [r for r in found if canonicalize_name(r.name) != "grounding-worker"]


@pytest.mark.parametrize(
    ("lock", "extras"), [("dev.lock", ("otel", "dev")), ("runtime.lock", ("otel",))]
)
def test_every_declared_dependency_is_pinned_within_its_range(
    lock: str, extras: tuple[str, ...]
) -> None:
    pinned = pins(lock)
    for requirement in declared(*extras):
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{name} is declared but not in {lock}: scripts/lock"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"{name}=={pinned[name]} in {lock} is outside {requirement.specifier}"
        )


def test_the_runtime_lock_carries_no_dev_tool() -> None:
    pinned = pins("runtime.lock")
    for tool in ("pytest", "mypy", "ruff", "hypothesis", "testcontainers"):
        assert tool not in pinned


def test_every_pin_carries_hashes() -> None:
    for lock in ("dev.lock", "runtime.lock"):
        text = (ROOT / "deploy" / "requirements" / lock).read_text()
        blocks = re.split(r"\n(?=[A-Za-z0-9._-]+==)", text)
        for block in blocks[1:]:
            assert "--hash=sha256:" in block, block.splitlines()[0]
