"""Configured table names are spliced into SQL only after validation and quoting."""

from __future__ import annotations

import pytest

from worker.settings import Settings
from worker.stores.identifiers import InvalidIdentifierError, quote_identifier
from worker.stores.postgres import PostgresEvidence


@pytest.mark.parametrize("name", ["observations", "_x", "events_2026", "a" * 63])
def test_plain_lower_case_names_are_quoted(name: str) -> None:
    assert quote_identifier(name) == f'"{name}"'


@pytest.mark.parametrize(
    "name",
    [
        "", "Observations", "obs;drop table x", 'obs"', "public.observations", "1obs",
        "obs-tab", "obs tab", "a" * 64, "obs\n", "ｏbs",
    ],
)  # fmt: skip
def test_anything_else_is_refused(name: str) -> None:
    with pytest.raises(InvalidIdentifierError):
        quote_identifier(name)


def test_the_adapter_refuses_a_bad_table_name_before_any_connection() -> None:
    settings = Settings(observations_table='observations"; DROP TABLE events; --')
    with pytest.raises(InvalidIdentifierError):
        PostgresEvidence(pool=None, settings=settings)
