"""``python -m bench.adversarial`` runs and prints its table: one row per shape and size, then the
maximum. The figures themselves are the script's to print (no timed test)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(
    r"^(?P<shape>\S+) +(?P<mib>\d+\.\d{3}) +(?P<outcome>grounded|regenerate|could_not_ground)"
    r"(?: \((?P<code>[a-z_]+)\))? +(?P<cpu>\d+\.\d{3}) +(?P<per>\d+\.\d{3}) +(?P<ratio>\d+|inf)$"
)


def test_the_table_has_a_row_per_shape_and_size_then_the_max() -> None:
    sizes = ["0.004", "0.008"]
    done = subprocess.run(
        [sys.executable, "-m", "bench.adversarial", "--sizes", ",".join(sizes), "--limit", "1000"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    header, *rows, last = done.stdout.splitlines()
    assert header.split() == ["shape", "MiB", "outcome", "cpu", "s", "s/MiB", "x", "decode"]
    parsed = [ROW.match(row) for row in rows]
    assert all(parsed), [r for r, m in zip(rows, parsed, strict=True) if m is None]
    shapes = list(dict.fromkeys(m["shape"] for m in parsed if m))
    assert {"backticks", "brackets", "emphasis", "a.-runs", "nested-lists", "nested-quotes",
            "table", "citations"} <= set(shapes)  # fmt: skip
    assert [m["shape"] for m in parsed if m] == [shape for shape in shapes for _ in sizes]
    for i, m in enumerate(parsed):  # each draft as large as whole pieces allow, never over
        assert m is not None
        assert 0 < float(m["mib"]) <= float(sizes[i % len(sizes)])
    top = max(float(m["cpu"]) for m in parsed if m)
    worst = [
        f"{m['cpu']} s ({m['shape']}, {m['mib']} MiB)"
        for m in parsed
        if m and float(m["cpu"]) == top
    ]
    assert last.removeprefix("max: ").removesuffix("; limit 1000.0 s; gc paused") in worst


def test_it_fails_when_a_draft_takes_longer_than_the_limit() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.adversarial",
            "--sizes",
            "0.004",
            "--shapes",
            "a.-runs",
            "--limit",
            "0",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout
    assert done.stdout.splitlines()[-1].endswith("limit 0.0 s; gc paused")
