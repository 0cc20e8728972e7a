"""Defaults a newcomer meets first: the demo's traffic stays in topics of its own, the web port
is not Faust's, Faust's local state is not committed by accident."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from worker.settings import Settings, TopicNames

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_uses_a_group_and_topics_of_its_own() -> None:
    script = (ROOT / "scripts/demo").read_text()
    exported = dict(re.findall(r"^export (GW_\w+)=\$\{\1:-([^}]+)\}$", script, re.MULTILINE))
    defaults = TopicNames()
    for role in TopicNames.model_fields:
        name = exported[f"GW_TOPICS__{role.upper()}"]
        assert name == f"demo.{getattr(defaults, role)}"
    assert exported["GW_APP_ID"] == "grounding-demo"
    assert exported["GW_APP_ID"] != Settings.model_fields["app_id"].default


def test_the_default_web_port_is_not_fausts() -> None:
    assert Settings.model_fields["web_port"].default == 7066
    faust_default = 6066  # faust.types._env.WEB_PORT: what any other Faust worker on the host takes
    assert Settings.model_fields["web_port"].default != faust_default


def test_fausts_local_state_is_ignored_by_git() -> None:
    done = subprocess.run(
        ["git", "check-ignore", "-q", ".faust-data/grounding-worker/v1/tables/x.db"],
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0
