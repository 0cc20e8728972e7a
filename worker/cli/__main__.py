"""``python -m worker.cli``: the same command as ``grounding-worker``."""

from worker.cli import main

main()
