#!/usr/bin/env python3
"""Rewrite the settings table in README.md from worker/settings.py.

    .venv/bin/python scripts/gen_settings_doc.py

tests/unit/test_settings_doc.py fails when the README's table is stale.
The code: ``generators/settings_doc.py``; this file is only its entry point.
"""

from generators.settings_doc import main

if __name__ == "__main__":
    main()
