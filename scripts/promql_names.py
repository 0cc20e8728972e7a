#!/usr/bin/env python3
"""The metric names and labels that the Grafana dashboard and the Prometheus rules read.

    .venv/bin/python scripts/promql_names.py            # one line per metric: name, labels used
    .venv/bin/python scripts/promql_names.py --exprs    # every PromQL expression, one per line

The code: ``generators/promql_names.py``; this file is only its entry point.
"""

import sys

from generators.promql_names import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
