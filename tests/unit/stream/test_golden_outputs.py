"""Outputs are byte-identical for the same input before and after the hot-path rebuild."""

from __future__ import annotations

from golden_pipeline import load_inputs, load_outputs, run


def test_golden_batches_publish_exactly_the_recorded_records() -> None:
    expected = load_outputs()
    actual = run(load_inputs())
    assert len(actual) == len(expected)
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        assert got == want, f"output #{index} differs"
    topics = {o["topic"] for o in expected}
    assert topics == {
        "agent.regenerate",
        "answers.validated",
        "answers.could_not_ground",
        "citations.ledger",
        "agent.drafts.dlq",
    }
