"""The end-to-end benchmark's quickest path runs and reports in the agreed shape.

Only the shape is checked (the JSON's keys, the ratio line): a time is never asserted, since
figures on a shared machine are noise; ``scripts/bench`` prints them next to a baseline instead.
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


def test_quick_bench_writes_figures_and_ratio_line(
    kafka_bootstrap: str, postgres_dsn: str, mongo_url: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GW_")}
    env |= {
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "POSTGRES_DSN": postgres_dsn,
        "MONGO_URL": mongo_url,
    }
    done = subprocess.run(
        [
            str(ROOT / "scripts" / "bench"),
            "--quick",
            "--drafts",
            "200",
            "--baseline-drafts",
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
    *_, before_last, last = done.stdout.strip().splitlines()
    assert re.fullmatch(r"ratio_vs_faust_passthrough=\d+\.\d\d", last), last
    assert re.fullmatch(r"ratio_50_tenants_vs_1=\d+\.\d\d", before_last), before_last

    [result] = tmp_path.glob("bench-*.json")
    doc = json.loads(result.read_text())
    assert {"meta", "settings", "baselines", "worker", "ratios", "targets"} <= doc.keys()
    assert {"aiokafka_raw", "faust_passthrough"} <= doc["baselines"].keys()
    worker = doc["worker"]["tenants_1"]
    assert {"throughput_per_s", "store_queries_per_draft", "peak_rss_mb"} <= worker[
        "saturation"
    ].keys()
    assert worker["saturation"]["outputs_seen"] == 200
    assert [p["fraction"] for p in worker["latency"]] == [0.25, 0.5, 0.8]
    assert {"p50_ms", "p95_ms", "p99_ms"} <= worker["latency"][0].keys()
    assert doc["ratio_vs_faust_passthrough"] is not None
    many = doc["worker"]["tenants_50"]["saturation"]
    assert many["outputs_seen"] == 200
    assert "latency" not in doc["worker"]["tenants_50"]  # --quick: saturation only
    assert doc["ratios"]["many_tenants_vs_1"] is not None
    # The ledger sink runs apart, as deployed; its CPU is reported, and the ledger arrived.
    assert doc["settings"]["ledger_sink"] == "process"
    assert "CPU ms/draft (worker + ledger sink = total)" in done.stdout
    for sat in (worker["saturation"], many):
        assert sat["ledger_sink_mode"] == "process"
        assert sat["ledger_sink_cpu_ms_per_draft"] > 0
        assert 0 < sat["ledger_sink_startup_cpu_s"] <= sat["ledger_sink_cpu_s"]
        assert sat["total_cpu_ms_per_draft"] == pytest.approx(
            sat["worker_cpu_ms_per_draft"] + sat["ledger_sink_cpu_ms_per_draft"], abs=0.002
        )
        decided = sum(n for role, n in sat["outcomes"].items() if role != "dlq")
        assert sat["ledger"]["decided_drafts"] == decided == 190  # 200 less 10 malformed
        assert sat["ledger"]["drafts_with_rows_in_postgres"] == decided
        assert sat["ledger"]["batches_committed_by_sink"] == sat["ledger"]["batches_published"]
        assert sat["ledger"]["arrived"] is True
    assert list(tmp_path.glob("bench-*.png"))
