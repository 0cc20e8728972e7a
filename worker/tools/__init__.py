"""Operators' and producers' command-line tools: ``replay`` (dead letters) and ``check`` (drafts).

Each tool is a thin shell over pure parts (selection, header rewrite, the verdict core), so the
rules can be read and unit-tested without a broker or a store.
"""
