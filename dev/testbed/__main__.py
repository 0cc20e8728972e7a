"""``python -m dev.testbed COMMAND``: see ``dev.testbed.cli``."""

import sys

from dev.testbed.cli import run

sys.exit(run())
