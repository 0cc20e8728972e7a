"""scripts/bench's floor and fixed-rate figures: pauses, CPU windows, the floor's records, the
final line."""

from __future__ import annotations

from typing import Any

import pytest

from dev.bench.floor import records_for
from dev.bench.procs import CpuSampler
from dev.bench.report import headline_line, svg
from dev.bench.scenarios import pauses

TOPICS = {
    "validated": "v",
    "regenerate": "r",
    "could_not_ground": "c",
    "dlq": "d",
    "ledger": "l",
    "changelog": "app-turns-changelog",
}


def test_a_process_that_falls_behind_without_stopping_has_no_pause() -> None:
    # Latencies grow to 3 s, but an output comes at least every 500 ms.
    drafts = [(i * 100, i * 100 + 10 * i * 30) for i in range(100)]
    assert max(out - at for at, out in drafts) > 2000
    assert pauses(drafts) == 0


def test_a_silent_stretch_with_drafts_waiting_is_one_pause() -> None:
    drafts = [(0, 10), (100, 110), (200, 1800), (300, 1810), (400, 1820), (2000, 2010)]
    assert pauses(drafts) == 1


def test_an_idle_stretch_with_nothing_waiting_is_no_pause() -> None:
    assert pauses([(0, 10), (5000, 5010)]) == 0


def test_the_first_output_late_after_the_first_draft_is_a_pause() -> None:
    assert pauses([(0, 1500), (10, 1510)]) == 1
    assert pauses([(0, 900), (10, 910)]) == 0


def test_two_stalls_count_twice() -> None:
    drafts = [(0, 10), (20, 1300), (1310, 1320), (1330, 2600), (2610, 2620)]
    assert pauses(drafts) == 2


def test_cpu_between_two_wall_times_is_interpolated() -> None:
    sampler = CpuSampler({})
    sampler.samples["p"] = [(10.0, 1.0), (11.0, 1.5), (12.0, 3.5)]
    assert sampler.at("p", 9.0) is None
    assert sampler.at("p", 10.5) == pytest.approx(1.25)
    assert sampler.between("p", 10.5, 11.5) == pytest.approx(2.5 - 1.25)
    assert sampler.at("p", 20.0) == 3.5


def test_the_floor_publishes_the_templates_records_for_a_draft() -> None:
    templates = [
        [("validated", b"V" * 40), ("ledger", b"L" * 20), ("changelog", b"C" * 30)],
        [("dlq", b"D" * 10)],
    ]
    headers = [("traceparent", b"00-1")]
    first = records_for(templates, 0, b"turn-1", headers, 3, TOPICS)
    assert first == [
        ("v", b"turn-1", b"V" * 40, (("traceparent", b"00-1"),), None),
        ("l", b"turn-1", b"L" * 20, (("traceparent", b"00-1"),), None),
        ("app-turns-changelog", b"turn-1", b"C" * 30, (), 3),
    ]
    # Cycled: the third draft gets the first template again.
    assert records_for(templates, 1, b"t", headers, 0, TOPICS) == [
        ("d", b"t", b"D" * 10, (("traceparent", b"00-1"),), None)
    ]
    assert records_for(templates, 2, b"t", headers, 0, TOPICS)[0][2] == b"V" * 40


def test_the_final_line_has_two_places_for_the_ratio_and_whole_milliseconds() -> None:
    line = headline_line(
        {"cpu_ratio_vs_floor": 2.345, "p99_ms_at_500": 37.0, "p99_ms_at_500_50t": 41.6}
    )
    assert line == "cpu_ratio_vs_floor=2.35 p99_ms_at_500=37 p99_ms_at_500_50t=42"
    assert headline_line({"cpu_ratio_vs_floor": None, "p99_ms_at_500": float("nan")}) == (
        "cpu_ratio_vs_floor=nan p99_ms_at_500=nan"
    )


def _point(rate: float, p50: float, p99: float) -> dict[str, Any]:
    return {"offered_per_s": rate, "p50_ms": p50, "p99_ms": p99}


def test_the_plot_draws_every_series_and_the_targets() -> None:
    doc = {
        "meta": {"mode": "full", "started": "2026-12-04T08:00:00+00:00"},
        "floor": {"latency": [_point(250, 3, 8), _point(500, 4, 12)]},
        "worker": {
            "tenants_1": {"latency": [_point(250, 6, 20), _point(500, 9, 35)]},
            "tenants_50": {"latency": [_point(250, 8, 30), _point(500, 12, 80)]},
        },
    }
    out = svg(doc)
    assert out.startswith("<svg")
    assert out.rstrip().endswith("</svg>")
    for name in ("floor", "worker 1t", "worker 50t"):
        assert f">{name} p50<" in out
        assert f">{name} p99<" in out
    assert out.count("<polyline") == 6
    assert "p99 target 40" in out
