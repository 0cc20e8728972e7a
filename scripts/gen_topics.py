#!/usr/bin/env python3
"""Write the language-neutral topic declarations and the AsyncAPI document from topic_specs.

    .venv/bin/python scripts/gen_topics.py

The code: ``dev/generators/topics.py``; this file is only its entry point (it runs
the module from the checkout's root, where the development package ``dev`` is imported from).
"""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    os.execv(sys.executable, [sys.executable, "-m", "dev.generators.topics", *sys.argv[1:]])
