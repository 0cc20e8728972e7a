"""How the test bed chooses, records and reads its ports (the state directory is a temp dir)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from dev.testbed import ports


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(ports, "STATE", tmp_path)
    for variable in ports.PORT_ENV.values():
        monkeypatch.delenv(variable, raising=False)
    return tmp_path


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port another process (this test) listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_a_variable_wins_and_is_recorded(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TESTBED_MONGO_PORT", "31234")
    chosen = ports.choose_ports()
    assert chosen["mongo"] == 31234
    assert json.loads((state / "ports.json").read_text()) == chosen
    assert ports.ports() == chosen


def test_a_held_default_moves_up_in_steps_of_ten(
    state: Path, held_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(ports.DEFAULT_PORTS, "mongo", held_port)
    chosen = ports.choose_ports()["mongo"]
    assert chosen != held_port
    assert (chosen - held_port) % 10 == 0
    assert 0 < chosen - held_port < 500


def test_without_a_record_the_defaults_and_variables_are_reported(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TESTBED_POSTGRES_PORT", "15999")
    assert ports.ports() == {**ports.DEFAULT_PORTS, "postgres": 15999}
    assert not (state / "ports.json").exists()


def test_a_record_missing_a_port_gets_it_and_keeps_the_rest(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bed recorded before the SASL_SSL listener existed keeps its ports on the next run."""
    old = {"kafka": 29092, "kafka_controller": 29093, "postgres": 25432, "mongo": 37018}
    (state / "ports.json").write_text(json.dumps(old))
    monkeypatch.setenv("TESTBED_KAFKA_SECURE_PORT", "29094")
    monkeypatch.setenv("TESTBED_MONGO_MEMORY_PORT", "37038")
    added = {"kafka_secure": 29094, "mongo_memory": 37038}
    assert ports.ports() == {**old, **added}
    assert json.loads((state / "ports.json").read_text()) == {**old, **added}
