#!/usr/bin/env python3
"""Rewrite the settings table in README.md from worker/settings/.

    .venv/bin/python scripts/gen_settings_doc.py

tests/unit/test_settings_doc.py fails when the README's table is stale.
The code: ``dev/generators/settings_doc.py``; this file is only its entry point (it runs
the module from the checkout's root, where the development package ``dev`` is imported from).
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    os.execv(sys.executable, [sys.executable, "-m", "dev.generators.settings_doc", *sys.argv[1:]])
