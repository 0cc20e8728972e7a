#!/usr/bin/env python3
"""Write ``deploy/k8s/strimzi/kafkatopics.yaml``: one Strimzi KafkaTopic per topic of topic_specs.

    .venv/bin/python scripts/gen_kafkatopics.py

The code: ``generators/kafkatopics.py``; this file is only its entry point.
"""

import sys

from generators.kafkatopics import main

if __name__ == "__main__":
    sys.exit(main())
