#!/usr/bin/env python3
"""Write the JSON Schemas of the wire formats to schemas/json/<name>.schema.json.

    .venv/bin/python scripts/gen_schemas.py

The code: ``generators/schemas.py``; this file is only its entry point.
"""

from generators.schemas import main

if __name__ == "__main__":
    main()
