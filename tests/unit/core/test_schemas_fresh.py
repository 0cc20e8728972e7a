"""The committed JSON Schemas match the pydantic models."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_schemas_are_fresh() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_schemas", ROOT / "scripts" / "gen_schemas.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected: dict[str, str] = module.build_schemas()
    stale = [
        name
        for name, text in expected.items()
        if not (ROOT / "schemas" / "json" / name).is_file()
        or (ROOT / "schemas" / "json" / name).read_text(encoding="utf-8") != text
    ]
    assert not stale, f"stale JSON Schemas {stale}: run scripts/gen_schemas.py"
