#!/usr/bin/env python3
"""Write one example of every message the worker publishes, made by the worker's own core.

    .venv/bin/python scripts/gen_message_examples.py

The code: ``generators/message_examples.py``; this file is only its entry point.
"""

from generators.message_examples import main

if __name__ == "__main__":
    main()
