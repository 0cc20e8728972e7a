"""SQL identifiers taken from settings, validated and quoted before they reach any statement.

Table names are configurable (contract: nothing hard-coded at a call site) but can never be bound
as query parameters, so they are the one place where text from outside is spliced into SQL. A
strict allow-list pattern plus quoting makes that splice inert.
"""

from __future__ import annotations

import re

from worker.faults import UsageFault

#: Lower-case, unqualified, at most 63 bytes (Postgres' NAMEDATALEN - 1). Upper case is refused
#: because unquoted SQL folds it, so ``Observations`` would name a different table in psql.
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class InvalidIdentifierError(UsageFault, ValueError):
    """A configured table or index name is not a plain lower-case SQL identifier."""


def validate_identifier(name: str) -> str:
    """Return ``name`` unchanged if it is a plain lower-case identifier, else raise."""
    if not _IDENTIFIER.fullmatch(name):
        raise InvalidIdentifierError(
            f"{name!r} is not a plain SQL identifier (expected [a-z_][a-z0-9_]*, at most 63 chars)"
        )
    return name


def quote_identifier(name: str) -> str:
    """``observations`` -> ``"observations"``, after validation."""
    return f'"{validate_identifier(name)}"'
