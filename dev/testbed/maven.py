"""Class paths copied from Maven Central with `mvn dependency:copy-dependencies`, once per pom."""

from __future__ import annotations

import shutil
from pathlib import Path

from dev.testbed.cache import digest
from dev.testbed.layout import CACHE, say
from dev.testbed.process import require_tool, run


def class_path(service: str, pom: Path, cache_name: str) -> Path:
    """The directory of ``pom``'s runtime jars, copied once per version of the pom and kept in
    the download cache as ``<cache_name>-<digest>/lib``; ``service`` names it in the progress."""
    lib = CACHE / f"{cache_name}-{digest(pom)}" / "lib"
    if (lib / ".complete").exists():
        return lib
    require_tool("mvn", "maven")
    require_tool("java", "openjdk-17-jre-headless")
    say(f"{service}: fetching the class path with Maven (cached afterwards)")
    tmp = lib.with_name("lib.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    run(
        [
            "mvn", "-B", "-q", "-f", str(pom), "dependency:copy-dependencies",
            f"-DoutputDirectory={tmp}", "-DincludeScope=runtime",
        ]
    )  # fmt: skip
    (tmp / ".complete").touch()
    shutil.rmtree(lib, ignore_errors=True)
    tmp.rename(lib)
    return lib
