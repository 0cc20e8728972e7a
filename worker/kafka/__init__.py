"""Kafka plumbing without Faust: records, dead letters, control records, topic specs, clients.

Everything here is usable by the worker's Faust shell (``worker.stream``), the ledger sink and
the tools alike; nothing here imports Faust.
"""
