#!/usr/bin/env python3
"""Write one example of every message the worker publishes, made by the worker's own core.

    .venv/bin/python scripts/gen_message_examples.py

The code: ``dev/generators/message_examples.py``; this file is only its entry point (it runs
the module from the checkout's root, where the development package ``dev`` is imported from).
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    os.execv(
        sys.executable, [sys.executable, "-m", "dev.generators.message_examples", *sys.argv[1:]]
    )
