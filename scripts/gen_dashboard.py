#!/usr/bin/env python3
"""Write the Grafana dashboard of the worker, ``deploy/grafana/grounding-worker.json``.

    .venv/bin/python scripts/gen_dashboard.py

The code: ``dev/generators/dashboard.py``; this file is only its entry point (it runs
the module from the checkout's root, where the development package ``dev`` is imported from).
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    os.execv(sys.executable, [sys.executable, "-m", "dev.generators.dashboard", *sys.argv[1:]])
