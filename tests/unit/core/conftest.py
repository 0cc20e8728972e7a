"""Fixtures of the pure core's tests."""

from __future__ import annotations

from collections.abc import Iterator
from unittest.mock import patch

import pytest


@pytest.fixture(params=["one by one", "in one pass"])
def hidden_lookups(request: pytest.FixtureRequest) -> Iterator[str]:
    """Hidden ids and titles looked for one by one (the few most drafts hide), then as for a
    draft that hides many (a string's tokens read once, the titles in one automaton): the
    thresholds at 0, so that every hidden ref and title takes that path."""
    if request.param == "one by one":
        yield request.param
        return
    with (
        patch("worker.core.citations.tokens.FEW_HIDDEN", 0),
        patch("worker.core.claims.redacted.FEW_HIDDEN", 0),
        patch("worker.core.citations.rendered.FEW_TITLES", 0),
    ):
        yield request.param
