#!/usr/bin/env python3
"""Write ``deploy/k8s/grafana/dashboard.yaml``: the dashboard as a sidecar ConfigMap and a
GrafanaDashboard.

    .venv/bin/python scripts/gen_dashboard_k8s.py

The code: ``generators/dashboard_k8s.py``; this file is only its entry point.
"""

import sys

from generators.dashboard_k8s import main

if __name__ == "__main__":
    sys.exit(main())
