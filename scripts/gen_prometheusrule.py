#!/usr/bin/env python3
"""Write ``deploy/k8s/monitoring/prometheusrule.yaml`` from ``deploy/prometheus/alerts.yaml``.

    .venv/bin/python scripts/gen_prometheusrule.py

The code: ``dev/generators/prometheusrule.py``; this file is only its entry point (it runs
the module from the checkout's root, where the development package ``dev`` is imported from).
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    os.execv(sys.executable, [sys.executable, "-m", "dev.generators.prometheusrule", *sys.argv[1:]])
