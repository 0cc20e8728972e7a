"""scripts/bench's figures: batch stages from two scrapes of the worker's metrics, and rates."""

from __future__ import annotations

import pytest

from dev.bench.report import _stages_cell, median, median_run, rate_cell
from dev.bench.scenarios import _stages_between, saturated_rate


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


def test_a_repeated_scenario_reports_its_median_run_whole_and_every_rate() -> None:
    runs = [
        {"throughput_per_s": 2486.0, "process_cpu_ms_per_draft": 0.457, "tenants": 1},
        {"throughput_per_s": 1930.5, "process_cpu_ms_per_draft": 0.539, "tenants": 1},
        {"throughput_per_s": 2192.0, "process_cpu_ms_per_draft": 0.499, "tenants": 1},
    ]
    got = median_run(runs)
    # One real run's figures, never a mix: the 2,192/s run's CPU goes with its rate.
    assert got["throughput_per_s"] == 2192.0
    assert got["process_cpu_ms_per_draft"] == 0.499
    assert [r["throughput_per_s"] for r in got["runs"]] == [2486.0, 1930.5, 2192.0]
    assert "runs" not in runs[2]  # the run itself is not changed
    assert rate_cell(got) == "2192 (median of 3: 1930-2486)"


def test_an_even_count_takes_the_lower_middle_and_a_single_run_has_no_range() -> None:
    runs = [{"throughput_per_s": v} for v in (4.0, 1.0, 3.0, 2.0)]
    assert median_run(runs)["throughput_per_s"] == 2.0
    assert median([4.0, None, 1.0, 3.0, 2.0]) == 2.0
    assert median([None]) is None
    single = median_run([{"throughput_per_s": 9837.4}])
    assert "runs" not in single
    assert rate_cell(single) == "9837"
