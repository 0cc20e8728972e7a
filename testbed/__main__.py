"""``python -m testbed COMMAND``: see ``testbed.cli``."""

import sys

from testbed.cli import run

sys.exit(run())
