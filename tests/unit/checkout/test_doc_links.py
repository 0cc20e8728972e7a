"""Every relative link in the repository's Markdown resolves in a fresh clone.

Links to other files (``docs/contract.md``, ``../schemas/typescript/README.md``) must name a file or
directory tracked by git; a ``#fragment`` on a Markdown file must name one of its headings (GitHub's
anchor rule: lower case, punctuation dropped, spaces to dashes). External URLs are not fetched.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LINK = re.compile(r"(?<!\!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def tracked_markdown() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [ROOT / line for line in out.splitlines() if "node_modules" not in line]


def anchors(path: Path) -> set[str]:
    found = set()
    for line in FENCE.sub("", path.read_text()).splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            title = re.sub(r"[^\w\- ]", "", title)
            found.add(title.replace(" ", "-"))
    return found


def broken_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text())
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("<"):
            continue  # https:, mailto: ... not fetched
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif ROOT in path.parents and not dest.is_relative_to(ROOT):
            broken.append(f"{target} (outside the repository: dead in a clone)")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target} (no heading #{fragment})")
    return broken


@pytest.mark.parametrize("path", tracked_markdown(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_the_checker_sees_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\n[ok](#title) [gone](b.md) [bad](#nope)\n")
    assert broken_links(tmp_path / "a.md") == ["b.md (no such file)", "#nope (no heading #nope)"]
