"""The semantic-signal evaluation's arithmetic (``dev/bench/support_semantic.py``): thresholds are
chosen on dev under the accusation cap, and a rule flags what it says (no model needed here)."""

from __future__ import annotations

from dev.bench.support_semantic import RULES, Row, shares, tuned


def _rows() -> list[Row]:
    supported = [Row("supported", "supported", 0.9, 0.9)] * 19 + [
        Row("supported", "weak", 0.3, 0.3)
    ]
    not_supported = [
        Row("not_supported", "unsupported", 0.8, 0.8),
        Row("not_supported", "weak", 0.2, 0.2),
        Row("not_supported", "weak", 0.4, 0.4),
        Row("not_supported", "supported", 0.9, 0.9),
    ]
    return [*supported, *not_supported, Row("partially_supported", "weak", 0.25, 0.25)]


def test_the_threshold_catches_the_most_within_the_accusation_cap() -> None:
    rows = _rows()
    # 1 of 20 supported claims (5 %) may be accused, so past 0.30 (the weak supported claim
    # accused) the cap still holds; 0.41 is the lowest threshold that also catches the 0.4 one.
    t, got = tuned(rows, RULES["worker, or weak and below"], "max1")
    assert got["supported"] == 0.05
    assert got["not_supported"] == 0.75
    assert t == 0.41
    assert got["partially_supported"] == 1.0


def test_the_worker_rule_ignores_the_threshold() -> None:
    rows = _rows()
    t, got = tuned(rows, RULES["worker"], "max2")
    assert t == 0.0
    assert got == {"supported": 0.0, "not_supported": 0.25, "partially_supported": 0.0}


def test_shares_count_each_label_apart() -> None:
    rows = _rows()
    got = shares(rows, lambda r: r.level == "weak")
    assert got == {"supported": 0.05, "not_supported": 0.5, "partially_supported": 1.0}
