"""The test bed's parts that need no server: settings lines, status lines, the probes' bytes,
the broker's properties, and process groups (with a real `sleep`)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import bson
import pytest

from dev.testbed import bed, kafka, mongo, process
from dev.testbed.layout import ServiceError

PORTS = {
    "kafka": 1,
    "kafka_controller": 2,
    "kafka_secure": 3,
    "postgres": 4,
    "mongo": 5,
    "mongo_memory": 6,
}


def test_env_lines_before_the_broker_made_its_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kafka, "HOME", tmp_path)
    assert bed.env_lines(PORTS) == [
        "export KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:1",
        "export POSTGRES_DSN=postgresql://postgres@127.0.0.1:4/grounding",
        "export MONGO_URL=mongodb://127.0.0.1:5/",
        "export MONGO_MEMORY_URL=mongodb://127.0.0.1:6/",
    ]


def test_env_lines_name_the_sasl_ssl_listener_once_it_has_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kafka, "HOME", tmp_path)
    (tmp_path / "tls").mkdir()
    (tmp_path / "tls" / ".complete").touch()
    (tmp_path / "secrets.json").write_text(json.dumps({"sasl_password": "pw"}))
    assert bed.env_lines(PORTS)[4:] == [
        "export TESTBED_KAFKA_SASL_SSL_SERVERS=127.0.0.1:3",
        "export TESTBED_KAFKA_SASL_USERNAME=gw-test",
        "export TESTBED_KAFKA_SASL_PASSWORD=pw",
        f"export TESTBED_KAFKA_CA_FILE={tmp_path / 'tls' / 'ca.pem'}",
        f"export TESTBED_KAFKA_CLIENT_CERT={tmp_path / 'tls' / 'client.pem'}",
        f"export TESTBED_KAFKA_CLIENT_KEY={tmp_path / 'tls' / 'client.key'}",
    ]


def test_secrets_are_made_once_and_private(tmp_path: Path) -> None:
    first = kafka.bed_secrets(tmp_path)
    assert kafka.bed_secrets(tmp_path) == first
    assert set(first) == {"sasl_password", "keystore_password"}
    assert (tmp_path / "secrets.json").stat().st_mode & 0o777 == 0o600


def test_status_lines_keep_their_columns() -> None:
    assert bed.status_line("kafka", 42, 19092) == "kafka         running  127.0.0.1:19092  pid 42"
    assert bed.status_line("mongo", None, 27018) == "mongo         stopped  127.0.0.1:27018  pid -"
    wide = bed.status_line("mongo-memory", 7, 27038)
    assert wide == "mongo-memory  running  127.0.0.1:27038  pid 7"


def test_every_placeholder_of_the_broker_properties_is_filled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kafka, "HOME", tmp_path)
    props = kafka.server_properties(
        PORTS, tmp_path / "tls", {"keystore_password": "ks", "sasl_password": "pw"}
    )
    settings = [line for line in props.splitlines() if not line.startswith("#")]
    assert [line for line in settings if re.search("@[A-Z_]+@", line)] == []
    assert f"log.dirs={tmp_path / 'data'}" in props


def test_the_mongo_probe_is_an_op_msg_hello() -> None:
    request = mongo.hello_request()
    length, request_id, response_to, opcode = (
        int.from_bytes(request[i : i + 4], "little", signed=True) for i in range(0, 16, 4)
    )
    assert (length, request_id, response_to, opcode) == (len(request), 1, 0, 2013)
    assert request[16:21] == b"\x00\x00\x00\x00\x00"  # no flags, section kind 0 (body)
    assert bson.decode(request[21:]) == {"hello": 1, "$db": "admin"}


def test_a_failed_command_raises_with_its_output() -> None:
    with pytest.raises(ServiceError) as caught:
        process.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    command = "sh -c echo out; echo err >&2; exit 3"
    assert str(caught.value) == f"command failed (3): {command}\nout\nerr\n"


# spawn() lets go of its Popen while the daemon runs: that is the point, the bed outlives the call.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_spawned_daemon_and_its_children_are_one_group(tmp_path: Path) -> None:
    pid = process.spawn(["sh", "-c", "sleep 60 & sleep 60"], tmp_path / "log", cwd=tmp_path)
    try:
        assert process.pid_alive(pid)
        assert process.group_alive(pid)
        assert os.getpgid(pid) == pid
        process.kill_group(pid, timeout=5)
        assert not process.group_alive(pid)
    finally:
        if process.group_alive(pid):
            os.killpg(pid, 9)
        os.waitpid(pid, 0)
    assert not process.pid_alive(pid)


def test_children_are_found_through_proc(tmp_path: Path) -> None:
    parent = subprocess.Popen(["sh", "-c", "sleep 60 & wait"], start_new_session=True)
    try:
        for _ in range(100):
            found = process.children(parent.pid)
            if found:
                break
            subprocess.run(["sleep", "0.05"], check=True)
        assert len(found) == 1
        assert process.read_stat(Path(f"/proc/{found[0]}"))[1] == str(parent.pid)
    finally:
        os.killpg(parent.pid, 9)
        parent.wait()


def test_a_pid_file_that_holds_no_number_reads_as_none(tmp_path: Path) -> None:
    (tmp_path / "pid").write_text("not a pid\n")
    assert process.read_pid(tmp_path / "pid") is None
    assert process.read_pid(tmp_path / "absent") is None
    (tmp_path / "pid").write_text("123\n")
    assert process.read_pid(tmp_path / "pid") == 123
