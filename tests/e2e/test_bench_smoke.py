"""The end-to-end benchmark's quickest path runs and reports in the agreed shape.

Tiny sizes: the floors (Faust on the worker's transport, raw aiokafka) and the worker saturated,
the open-loop fixed-rate path at 500 drafts/s for the floor and the worker (1 and 50 tenants).
Only the shape is checked (the JSON's keys, the final line, figures present and positive): a
time is never asserted, since figures on a shared machine are noise; ``scripts/bench`` prints them
next to the floor measured in the same run instead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e

HEADLINE = re.compile(r"cpu_ratio_vs_floor=(\d+\.\d\d) p99_ms_at_500=(\d+) p99_ms_at_500_50t=(\d+)")


def test_quick_bench_writes_figures_and_the_headline_line(
    kafka_bootstrap: str, postgres_dsn: str, mongo_url: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GW_")}
    env |= {
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "POSTGRES_DSN": postgres_dsn,
        "MONGO_URL": mongo_url,
        # The development venv: no second venv to build in CI (scripts/bench's default is a venv
        # on Debian's python3.11 when there is one).
        "BENCH_PYTHON": ".venv",
    }
    done = subprocess.run(
        [
            str(ROOT / "scripts" / "bench"),
            "--quick",
            "--drafts",
            "200",
            "--floor-drafts",
            "300",
            "--latency-seconds",
            "1",
            "--out",
            str(tmp_path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    *_, last = done.stdout.strip().splitlines()
    found = HEADLINE.fullmatch(last)
    assert found, last
    ratio, p99, p99_many = (float(g) for g in found.groups())
    assert ratio > 0
    assert p99 > 0
    assert p99_many > 0
    assert "interpreter: " in done.stdout

    [result] = tmp_path.glob("bench-*.json")
    doc = json.loads(result.read_text())
    assert {"meta", "settings", "floor", "worker", "ratios", "headline", "targets"} <= doc.keys()
    assert doc["meta"]["interpreter"]["real"]
    assert doc["settings"]["rates_per_s"] == [500.0]
    assert doc["headline"]["cpu_ratio_vs_floor"] == pytest.approx(ratio, abs=0.005)
    assert doc["headline"]["p99_ms_at_500"] == p99
    assert doc["headline"]["p99_ms_at_500_50t"] == p99_many
    # The floor publishes the worker's records: ~2.9 a draft (a dead letter: its output alone).
    records = doc["floor_records"]
    assert 2.5 < records["records_per_draft"] < 3.0
    assert set(records["mean_bytes"]) == {
        "validated", "regenerate", "could_not_ground", "dlq", "ledger", "changelog",
    }  # fmt: skip
    for floor in (doc["floor"]["faust"], doc["floor"]["aiokafka_raw"]):
        assert floor["outputs_seen"] == 300
        assert floor["cpu_ms_per_draft_saturated"] > 0
    cpu = doc["cpu_ms_per_draft_saturated"]
    assert cpu["worker"] > 0
    assert cpu["floor"] > 0
    assert ratio == pytest.approx(cpu["worker"] / cpu["floor"], abs=0.01)
    # The fixed-rate points: the floor's and the worker's, at 1 and 50 tenants.
    for points in (
        doc["floor"]["latency"],
        doc["worker"]["tenants_1"]["latency"],
        doc["worker"]["tenants_50"]["latency"],
    ):
        [point] = points
        assert point["offered_per_s"] == 500.0
        assert point["drafts"] == 500
        assert point["complete"] is True
        assert 0 <= point["p50_ms"] <= point["p99_ms"] <= point["max_ms"]
        assert point["max_ms"] > 0
        assert point["pauses_over_1000ms"] >= 0
        assert point["cpu_ms_per_draft"] > 0
    assert "saturation" not in doc["worker"]["tenants_50"]  # --quick: latency only
    assert doc["worker"]["tenants_1"]["latency"][0]["cpu_vs_floor"] > 0

    sat = doc["worker"]["tenants_1"]["saturation"]
    assert sat["outputs_seen"] == 200
    assert sat["cpu_ms_per_draft_saturated"] > 0
    # The ledger sink runs apart, as deployed; its CPU is reported apart, and the ledger arrived.
    assert doc["settings"]["ledger_sink"] == "process"
    assert sat["ledger_sink_mode"] == "process"
    assert sat["ledger_sink_cpu_ms_per_draft"] > 0
    decided = sum(n for role, n in sat["outcomes"].items() if role != "dlq")
    assert sat["ledger"]["decided_drafts"] == decided == 190  # 200 less 10 malformed
    assert sat["ledger"]["drafts_with_rows_in_postgres"] == decided
    assert sat["ledger"]["arrived"] is True

    [plot] = tmp_path.glob("bench-*.svg")
    svg = plot.read_text()
    assert svg.startswith("<svg")
    assert "floor p99" in svg
    assert "worker 1t p99" in svg
    assert "worker 50t p99" in svg
