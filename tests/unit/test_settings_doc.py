"""The README's settings table is the settings object's, and names every variable."""

from __future__ import annotations

from pathlib import Path

from dev.generators.settings_doc import BEGIN, END, render, rows
from worker.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_readme_settings_table_is_current() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index(BEGIN)
    stop = readme.index(END) + len(END)
    assert readme[start:stop] == render(), "stale: run scripts/gen_settings_doc.py"


def test_every_setting_has_a_row_and_a_meaning() -> None:
    table = render()
    for name, info in Settings.model_fields.items():
        assert f"GW_{name.upper()}" in table, name
        assert info.description, f"{name} has no description"
    assert all(meaning for _, _, meaning in rows())
