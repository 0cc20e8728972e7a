"""End-to-end benchmark of the grounding worker: ``python -m dev.bench``, or ``scripts/bench``.

A package at the checkout's root, not installed (the wheel carries ``worker`` only): run it from
the root; the processes it starts run from there too (``python -m dev.bench.floor``). Every
figure is measured against the floor (``dev.bench.floor``: the worker's records on its transport,
and nothing else) in the same run on the same broker, because the machine is shared and noisy: the
ratios and the latency against the floor's are the figures to compare across runs, not the
absolute drafts/s. See docs/benchmarks.md.

The focused benchmarks are modules of it, each run as ``python -m dev.bench.<name>`` from the root:
``core`` (the pure core), ``extract`` (extraction is linear), ``route`` (the batch around the
core, in one process), ``produce`` (the two produce paths), ``edges`` (ledger and store edges),
``recovery`` (restart recovery and RSS) and ``memory`` (peak RSS for memory sizing); the last
two start workers through the e2e harness, the package ``harness``.
"""
