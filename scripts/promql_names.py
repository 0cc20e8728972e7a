#!/usr/bin/env python3
"""The metric names and labels that the Grafana dashboard and the Prometheus rules read.

    .venv/bin/python scripts/promql_names.py            # one line per metric: name, labels used
    .venv/bin/python scripts/promql_names.py --exprs    # every PromQL expression, one per line

The code: ``dev/generators/promql_names.py``; this file is only its entry point (it runs
the module from the checkout's root, where the development package ``dev`` is imported from).
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    os.execv(sys.executable, [sys.executable, "-m", "dev.generators.promql_names", *sys.argv[1:]])
