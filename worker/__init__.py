"""grounding-worker: grounds AI agents' drafts against tenant evidence before anyone reads them."""

__version__ = "0.1.0"
