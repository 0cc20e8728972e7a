#!/usr/bin/env python3
"""Write ``deploy/k8s/strimzi/kafkauser.yaml``: the Strimzi KafkaUser of the worker, its ACLs.

    .venv/bin/python scripts/gen_kafkauser.py

The code: ``generators/kafkauser.py``; this file is only its entry point.
"""

import sys

from generators.kafkauser import main

if __name__ == "__main__":
    sys.exit(main())
