#!/usr/bin/env python3
"""Write the JSON Schemas of the wire formats to schemas/json/<name>.schema.json.

    .venv/bin/python scripts/gen_schemas.py

The code: ``dev/generators/schemas.py``; this file is only its entry point (it runs
the module from the checkout's root, where the development package ``dev`` is imported from).
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    os.execv(sys.executable, [sys.executable, "-m", "dev.generators.schemas", *sys.argv[1:]])
