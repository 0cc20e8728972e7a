"""scripts/bench's batch-stage figures: the difference of two scrapes of the worker's metrics."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from bench_e2e.report import _stages_cell
from bench_e2e.scenarios import _stages_between


def test_stage_means_are_per_batch_between_the_two_scrapes() -> None:
    before = {
        "sum": {"window": 1.0, "evidence": 2.0},
        "count": {"window": 10.0, "evidence": 10.0},
        "size": {"grounding_batch_size_sum": 100.0, "grounding_batch_size_count": 10.0},
    }
    after = {
        "sum": {"window": 1.2, "evidence": 2.5, "decide": 0.04, "publish": 0.1},
        "count": {"window": 30.0, "evidence": 30.0, "decide": 20.0, "publish": 20.0},
        "size": {"grounding_batch_size_sum": 500.0, "grounding_batch_size_count": 30.0},
    }
    got = _stages_between(before, after)
    assert got == {
        "batches": 20,
        "mean_batch_size": 20.0,
        "stage_ms_per_batch": {"window": 10.0, "evidence": 25.0, "decide": 2.0, "publish": 5.0},
    }
    assert _stages_cell(got["stage_ms_per_batch"]) == "10 / 25 / 2 / 5"


def test_no_batch_between_the_scrapes_gives_no_figures() -> None:
    same = {"sum": {}, "count": {}, "size": {"grounding_batch_size_count": 3.0}}
    assert _stages_between(same, same) == {}
    assert _stages_cell(None) == "-"
