"""The capacity the deploy files size themselves by is the one docs/benchmarks.md last measured.

``docs/benchmarks.md`` states one replica's capacity once, between ``<!-- capacity -->`` markers;
the StatefulSet's resources comment, the ScaledObject's lag target and ``docs/operations.md`` quote
it. A new measurement that changes it fails here until they are updated, instead of leaving stale
sizing in the manifests.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
QUOTING = [
    "deploy/k8s/statefulset-worker.yaml",
    "deploy/k8s/scaledobject.yaml",
    "docs/operations.md",
]
RATE = re.compile(r"~([\d,]+) drafts/s")
CPU = re.compile(r"~(\d+(?:\.\d+)?) ms of (?:worker )?CPU per")


def measured() -> tuple[str, str]:
    text = (ROOT / "docs/benchmarks.md").read_text()
    block = re.search(r"<!-- capacity -->(.*?)<!-- /capacity -->", text, re.S)
    assert block is not None, "docs/benchmarks.md lost its capacity line"
    (rate,) = RATE.findall(block.group(1))
    (cpu,) = CPU.findall(block.group(1).replace("\n", " ").replace("**", ""))
    return rate, cpu


@pytest.mark.parametrize("path", QUOTING)
def test_every_quoted_rate_is_the_measured_one(path: str) -> None:
    rate, _ = measured()
    quoted = RATE.findall((ROOT / path).read_text().replace("\n          # ", " "))
    assert quoted, f"{path} quotes no capacity"
    assert set(quoted) == {rate}, f"{path} quotes {quoted}, docs/benchmarks.md says ~{rate}"


def test_the_resources_comment_quotes_the_measured_cpu() -> None:
    _, cpu = measured()
    text = (ROOT / "deploy/k8s/statefulset-worker.yaml").read_text().replace("\n          # ", " ")
    assert CPU.findall(text) == [cpu]
