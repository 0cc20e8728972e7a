#!/usr/bin/env python3
"""Write ``deploy/k8s/monitoring/prometheusrule.yaml`` from ``deploy/prometheus/alerts.yaml``.

    .venv/bin/python scripts/gen_prometheusrule.py

The code: ``generators/prometheusrule.py``; this file is only its entry point.
"""

import sys

from generators.prometheusrule import main

if __name__ == "__main__":
    sys.exit(main())
