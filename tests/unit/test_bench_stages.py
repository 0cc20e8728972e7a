"""scripts/bench's figures: batch stages from two scrapes of the worker's metrics, and rates."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from bench_e2e.report import _stages_cell
from bench_e2e.scenarios import _stages_between, saturated_rate


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


def test_a_rate_over_outputs_that_share_one_millisecond_is_finite() -> None:
    # A fast worker can put a small smoke run's outputs in one millisecond: not a zero span.
    assert saturated_rate([5_000] * 200) == pytest.approx(189 / 0.001)  # 5 % warm-up left out
    assert saturated_rate([i * 10 for i in range(101)]) == pytest.approx(95 / 0.95)
