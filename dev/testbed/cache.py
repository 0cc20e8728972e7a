"""What is downloaded or built once: keyed by a digest of the inputs that make it."""

from __future__ import annotations

import hashlib
from pathlib import Path


def digest(*paths: Path, extra: str = "") -> str:
    """A short key for a cache entry: the bytes of `paths` and `extra` (a tool's version, say)."""
    h = hashlib.sha256(extra.encode())
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:16]
