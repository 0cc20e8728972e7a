#!/usr/bin/env python3
"""Write the Grafana dashboard of the worker, ``deploy/grafana/grounding-worker.json``.

    .venv/bin/python scripts/gen_dashboard.py

The code: ``generators/dashboard.py``; this file is only its entry point.
"""

import sys

from generators.dashboard import main

if __name__ == "__main__":
    sys.exit(main())
