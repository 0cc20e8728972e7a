#!/usr/bin/env python3
"""Rewrite the settings table in README.md from worker/settings.py.

    .venv/bin/python scripts/gen_settings_doc.py

tests/unit/test_settings_doc.py fails when the README's table is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worker.settings_doc import replace_in  # noqa: E402

README = ROOT / "README.md"

if __name__ == "__main__":
    README.write_text(replace_in(README.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {README.relative_to(ROOT)}")
