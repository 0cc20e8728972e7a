#!/usr/bin/env python3
"""Write ``deploy/k8s/grafana/dashboard.yaml``: the dashboard as a sidecar ConfigMap and a
GrafanaDashboard.

    .venv/bin/python scripts/gen_dashboard_k8s.py

The code: ``dev/generators/dashboard_k8s.py``; this file is only its entry point (it runs
the module from the checkout's root, where the development package ``dev`` is imported from).
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    os.execv(sys.executable, [sys.executable, "-m", "dev.generators.dashboard_k8s", *sys.argv[1:]])
