#!/usr/bin/env python3
"""Write the language-neutral topic declarations and the AsyncAPI document from topic_specs.

    .venv/bin/python scripts/gen_topics.py

The code: ``generators/topics.py``; this file is only its entry point.
"""

from generators.topics import main

if __name__ == "__main__":
    main()
