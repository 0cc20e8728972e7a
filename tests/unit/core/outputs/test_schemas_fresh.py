"""The committed JSON Schemas match the pydantic models."""

from __future__ import annotations

from pathlib import Path

from dev.generators.schemas import build_schemas

ROOT = Path(__file__).resolve().parents[4]


def test_schemas_are_fresh() -> None:
    expected = build_schemas()
    stale = [
        name
        for name, text in expected.items()
        if not (ROOT / "schemas" / "json" / name).is_file()
        or (ROOT / "schemas" / "json" / name).read_text(encoding="utf-8") != text
    ]
    assert not stale, f"stale JSON Schemas {stale}: run scripts/gen_schemas.py"
