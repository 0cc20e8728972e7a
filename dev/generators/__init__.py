"""The tools that write (and read back) the checked-in artefacts made from the worker's code.

One module per artefact; each is run by a thin script of the same name under ``scripts/``
(``scripts/gen_<module>.py``, ``scripts/deploy_schemas.py``, ``scripts/promql_names.py``), whose
paths the generated files, the docs and ``scripts/check-contracts``/``check-deploy`` name. Tests
import the modules to check that what is committed is what they would write now.

- ``schemas``: JSON Schemas of the wire formats (``schemas/json/``).
- ``message_examples``: one example of every output message (``schemas/examples/messages/``).
- ``topics``: topic declarations and the AsyncAPI document (``topics/``).
- ``kafkatopics``: Strimzi KafkaTopic resources (``deploy/k8s/strimzi/kafkatopics.yaml``).
- ``dashboard``: the Grafana dashboard; ``prometheusrule``: the PrometheusRule of the alerts.
- ``settings_doc``: the README's settings table.
- ``deploy_schemas``: standalone strict JSON Schemas for kubeconform (``scripts/check-deploy``).
- ``promql_names``: the metric names and labels the dashboard and the rules read.

They run in ``.venv`` from the checkout's root (``dev`` is not installed: the scripts run
``python -m dev.generators.<module>`` from there); PyYAML comes from the dev extras, so the
worker's image, which ships ``worker`` only, never needs it.
"""

from __future__ import annotations

from pathlib import Path

#: The checkout: what the artefacts' paths are printed relative to.
ROOT = Path(__file__).resolve().parents[2]


def write_artefact(out: Path, text: str) -> int:
    """Write one generated file (its folder made if needed), say so, and return exit status 0."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0
