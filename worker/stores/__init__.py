"""Store adapters: Postgres (OBS, EVT) and MongoDB (DOC) behind the core port, the ledger writer.

Each adapter is an async context manager, issues one batched query per (tenant, table or
collection) and translates its driver's errors into ``worker.faults`` in one place.
"""
