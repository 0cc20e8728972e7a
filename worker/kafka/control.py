"""The worker's control records, for the tools and tests that append or read them.

They are the core's (``worker.core.control``): the core decides them in order with the drafts.
"""

from __future__ import annotations

from worker.core.control import (
    CONTROL_HEADER,
    Control,
    ControlKind,
    control_record,
    is_control,
    parse_control,
)

__all__ = [
    "CONTROL_HEADER",
    "Control",
    "ControlKind",
    "control_record",
    "is_control",
    "parse_control",
]
