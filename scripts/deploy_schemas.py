#!/usr/bin/env python3
"""Write the JSON Schemas kubeconform needs, offline, for the kinds found in some manifests.

usage: deploy_schemas.py --k8s-wheel WHEEL --k8s-version 1.33.0 --crd CRD.yaml... \\
           --out DIR MANIFEST.yaml...

The code: ``generators/deploy_schemas.py``; this file is only its entry point.
"""

import sys

from generators.deploy_schemas import main

if __name__ == "__main__":
    sys.exit(main())
