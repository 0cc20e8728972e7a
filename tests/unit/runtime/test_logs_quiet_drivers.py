"""At GW_LOG_LEVEL=DEBUG the worker's own events go to DEBUG, the drivers' do not: PyMongo's
command log prints every reply in full, titles and texts of hidden documents included (found by
scripts/chaos, scenario 6: 125 such lines in one run)."""

from __future__ import annotations

import logging

import pytest

from worker.runtime.logs import configure_logging


@pytest.mark.parametrize("name", ["pymongo", "pymongo.command", "pymongo.connection"])
def test_debug_level_keeps_pymongo_to_warnings(name: str) -> None:
    root_level = logging.getLogger().level
    try:
        configure_logging("DEBUG", json=True)
        logging.getLogger().setLevel(logging.DEBUG)  # what Faust's worker does with its loglevel
        assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING
        assert not logging.getLogger(name).isEnabledFor(logging.DEBUG)
    finally:
        configure_logging("INFO", json=True)
        logging.getLogger().setLevel(root_level)
