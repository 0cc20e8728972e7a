"""The packaged migrations: rendering, idempotent DDL, metadata-only ledger, index definitions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from worker.settings import Settings
from worker.stores.identifiers import InvalidIdentifierError
from worker.stores.migrate import DOCUMENT_INDEXES, load_migrations, render

ROOT = Path(__file__).resolve().parents[3]


def test_migrations_are_ordered_and_fully_rendered() -> None:
    migrations = load_migrations(Settings())
    assert [m.version for m in migrations] == [
        "001_evidence",
        "002_citation_ledger",
        "003_ledger_support",
    ]
    for migration in migrations:
        assert "{{" not in migration.sql
        assert len(migration.checksum) == 64


def test_table_names_come_from_settings_quoted() -> None:
    settings = Settings(observations_table="obs_x", events_table="evt_x", ledger_table="led_x")
    sql = "\n".join(m.sql for m in load_migrations(settings))
    assert 'CREATE TABLE IF NOT EXISTS "obs_x"' in sql
    assert 'CREATE TABLE IF NOT EXISTS "evt_x"' in sql
    assert 'CREATE TABLE IF NOT EXISTS "led_x"' in sql
    assert '"obs_x_tenant_id_idx"' in sql
    assert "observations" not in sql.replace("-- ", "").split("CREATE", 1)[1]


def test_other_table_names_give_other_checksums() -> None:
    default = load_migrations(Settings())
    renamed = load_migrations(Settings(observations_table="obs_x"))
    assert default[0].checksum != renamed[0].checksum
    assert default[1].checksum == renamed[1].checksum


_IDEMPOTENT = (
    r"\s*(?:CREATE (?:TABLE|INDEX) IF NOT EXISTS|ALTER TABLE \S+\s+ADD COLUMN IF NOT EXISTS)"
)


def test_every_statement_is_idempotent() -> None:
    for migration in load_migrations(Settings()):
        statements = [s for s in _strip_comments(migration.sql).split(";") if s.strip()]
        for statement in statements:
            assert re.match(_IDEMPOTENT, statement), statement


def test_unknown_placeholders_and_bad_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown placeholder"):
        render("CREATE TABLE {{nope}} ()", Settings())
    with pytest.raises(InvalidIdentifierError):
        load_migrations(Settings(ledger_table="Ledger"))
    with pytest.raises(InvalidIdentifierError):  # derived index name past 63 characters
        load_migrations(Settings(events_table="e" * 60))


def test_ledger_has_no_content_columns() -> None:
    ledger = _strip_comments(load_migrations(Settings())[1].sql)
    body = ledger.split("(", 1)[1]
    columns = re.findall(r"^\s{4}([a-z_]+)\s", body, flags=re.MULTILINE)
    assert set(columns) == {
        "tenant_id", "turn_id", "draft_id", "attempt", "outcome", "kind", "source_id",
        "resolution", "quote_check", "paths", "policy_version", "recorded_at", "event_id",
    }  # fmt: skip
    assert re.search(r"source_id\s+numeric", ledger)


def test_evidence_columns_beyond_the_contracts_five_are_nullable() -> None:
    evidence = _strip_comments(load_migrations(Settings())[0].sql)
    for column in re.findall(r"^\s{4}([a-z_]+)\s+[a-z\[\]]+\s+(.*?),?$", evidence, re.MULTILINE):
        name, rest = column
        assert name in {"id", "tenant_id", "acl", "revoked_at", "summary"}
        if name not in {"id", "tenant_id"}:
            assert rest.startswith("NULL")


def test_mongo_index_file_mirrors_the_code() -> None:
    spec = json.loads((ROOT / "schemas/mongo/documents.indexes.json").read_text())
    assert spec["collection"] == Settings().documents_collection
    from_file = [(i["name"], tuple((k, d) for k, d in i["key"])) for i in spec["indexes"]]
    assert from_file == list(DOCUMENT_INDEXES)


def _strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*", "", sql)
