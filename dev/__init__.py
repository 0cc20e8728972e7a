"""The development wing: everything that builds, measures and exercises the worker, never shipped.

``pip install .`` installs ``worker`` alone; this package is reached from the checkout's root
(pytest's ``pythonpath``, ``python -m dev.bench``, the thin entry points under ``scripts/``):

- ``bench``: the benchmarks (``python -m dev.bench``; docs/benchmarks.md);
- ``harness``: the end-to-end harness (a worker process, its topics and consumers);
- ``testbed``: the test bed's servers (``scripts/services``), with their sources in
  ``dev/testbed/services``;
- ``generators``: the generated artefacts (schemas, topics, deploy files; ``scripts/gen_*.py``);
- ``contracts``: the AsyncAPI validator's Node package (``scripts/check-contracts``);
- ``demo_producer``, ``chaos_report``, ``real_prose_artefacts``, ``real_prose_build``: the
  long tools behind ``scripts/demo``, ``scripts/chaos`` and docs/real-prose.md.
"""
