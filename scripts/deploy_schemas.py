#!/usr/bin/env python3
"""Write the JSON Schemas kubeconform needs, offline, for the kinds found in some manifests.

usage: deploy_schemas.py --k8s-wheel WHEEL --k8s-version 1.33.0 --crd CRD.yaml... \\
           --out DIR MANIFEST.yaml...

The code: ``dev/generators/deploy_schemas.py``; this file is only its entry point (it runs
the module from the checkout's root, where the development package ``dev`` is imported from).
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    os.execv(sys.executable, [sys.executable, "-m", "dev.generators.deploy_schemas", *sys.argv[1:]])
