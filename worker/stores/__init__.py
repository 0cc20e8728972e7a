"""Evidence-store adapters: Postgres (OBS, EVT, ledger) and MongoDB (DOC) behind the core port.

Each adapter is an async context manager, issues one batched query per (tenant, table or
collection) and translates its driver's errors into ``worker.faults`` in one place.
"""
