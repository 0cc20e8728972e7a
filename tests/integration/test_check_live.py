"""``check`` against the live stores gives the very verdicts it gives with the corpus fixture.

The packaged demo corpus is seeded (idempotently, like ``grounding-worker seed-demo``) and every
example of ``schemas/examples/`` is checked without ``--evidence``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pymongo.asynchronous.database import AsyncDatabase
from typer.testing import CliRunner

from worker.cli import app
from worker.settings import Settings
from worker.stores.demo import load_corpus, seed_corpus

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "schemas" / "examples"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text(encoding="utf-8"))
POLICY = ROOT / "deploy" / "demo-policies.json"


@pytest.fixture(scope="module")
async def demo_seeded(migrated: Settings, pg_pool: Any, mongo_db: AsyncDatabase[Any]) -> Settings:
    await seed_corpus(pg_pool, mongo_db, migrated, load_corpus())
    return migrated


@pytest.fixture
def env(demo_seeded: Settings) -> dict[str, str]:
    return {
        "GW_POSTGRES_DSN": demo_seeded.postgres_dsn.get_secret_value(),
        "GW_MONGO_URL": demo_seeded.mongo_url.get_secret_value(),
    }


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_live_verdict_equals_the_fixture_verdict(env: dict[str, str], name: str) -> None:
    result = CliRunner().invoke(
        app, ["check", "--json", "--policy", str(POLICY), str(EXAMPLES / name)], env=env
    )
    assert json.loads(result.stdout) == EXPECTED[name], result.stderr
    assert result.exit_code == EXPECTED[name]["exit_code"]


def test_unreachable_stores_exit_3(unused_port: int, mongo_url: str) -> None:
    env = {
        "GW_POSTGRES_DSN": f"postgresql://postgres@127.0.0.1:{unused_port}/grounding",
        "GW_MONGO_URL": mongo_url,
        "GW_STORE_TIMEOUT_S": "2",
    }
    path = str(EXAMPLES / "answer_grounded.json")
    result = CliRunner().invoke(app, ["check", path], env=env)
    assert result.exit_code == 3, result.output
    assert "evidence stores unavailable" in result.stderr
