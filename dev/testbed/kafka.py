"""Apache Kafka 4.1 in KRaft mode: one combined broker and controller, jars from Maven Central.

Besides the plaintext listener it serves SASL_SSL (PLAIN, SCRAM-SHA-256/512) with a CA, broker
and client certificates made here with openssl and a SCRAM user made with Kafka's own
ConfigCommand (kafka-configs).
"""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import struct
import subprocess
from pathlib import Path

from dev.testbed.layout import ROOT, STATE
from dev.testbed.maven import class_path
from dev.testbed.net import recv_exact
from dev.testbed.ports import Ports
from dev.testbed.process import (
    await_daemon,
    kill_group,
    require_tool,
    run,
    running_daemon,
    spawn,
    stop_daemon,
)

SASL_USER = "gw-test"
HOME = STATE / "kafka"
LOG4J = ROOT / "dev/testbed/services/kafka/log4j2.properties"


def metadata_ok(port: int) -> bool:
    """Send a Metadata v0 request (all topics) and check the broker lists itself."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.settimeout(2)
            client_id = b"testbed"
            req = struct.pack(">hhih", 3, 0, 7, len(client_id)) + client_id + struct.pack(">i", 0)
            s.sendall(struct.pack(">i", len(req)) + req)
            size = struct.unpack(">i", recv_exact(s, 4))[0]
            body = recv_exact(s, size)
    except (OSError, struct.error):
        return False
    correlation, brokers = struct.unpack(">ii", body[:8])
    return bool(correlation == 7 and brokers >= 1)


def jars() -> Path:
    """The broker's class path, copied from Maven Central once per version of the pom."""
    return class_path("kafka", ROOT / "dev/testbed/services/kafka/pom.xml", "kafka")


def bed_secrets(home: Path) -> dict[str, str]:
    """The bed's SASL password and keystore password, made once per state directory."""
    path = home / "secrets.json"
    if path.exists():
        return dict(json.loads(path.read_text()))
    found = {"sasl_password": secrets.token_urlsafe(18), "keystore_password": secrets.token_hex(12)}
    path.write_text(json.dumps(found) + "\n")
    path.chmod(0o600)
    return found


def tls_files(home: Path, keystore_password: str) -> Path:
    """A self-signed CA, a broker certificate for 127.0.0.1 (PKCS12 keystore) and a client
    certificate, made with openssl once per state directory."""
    tls = home / "tls"
    if (tls / ".complete").exists():
        return tls
    require_tool("openssl", "openssl")
    shutil.rmtree(tls, ignore_errors=True)
    tls.mkdir(parents=True)

    def openssl(*args: str) -> None:
        run(["openssl", *args], cwd=tls)

    openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650",
        "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=grounding-worker test bed CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-addext", "subjectKeyIdentifier=hash",
    )  # fmt: skip
    for name, usage, san in (
        ("broker", "serverAuth", "IP:127.0.0.1,DNS:localhost"),
        ("client", "clientAuth", "DNS:grounding-worker"),
    ):
        (tls / f"{name}.ext").write_text(
            "basicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
            f"extendedKeyUsage={usage}\n"
            f"subjectAltName={san}\n"
            "subjectKeyIdentifier=hash\n"
            "authorityKeyIdentifier=keyid,issuer\n"
        )
        openssl(
            "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", "-subj", f"/CN={name}",
        )  # fmt: skip
        openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "3650", "-out", f"{name}.pem",
            "-extfile", f"{name}.ext",
        )  # fmt: skip
    openssl(
        "pkcs12", "-export", "-in", "broker.pem", "-inkey", "broker.key", "-certfile", "ca.pem",
        "-name", "broker", "-out", "broker.p12", "-passout", f"pass:{keystore_password}",
    )  # fmt: skip
    for key in tls.glob("*.key"):
        key.chmod(0o600)
    (tls / ".complete").touch()
    return tls


def java() -> list[str]:
    """`java` with the broker's logging configuration and class path."""
    return ["java", "-Dlog4j2.configurationFile=" + str(LOG4J), "-cp", str(jars() / "*")]


def add_scram_user(p: Ports) -> None:
    """Create the SCRAM-SHA-256/512 user with Kafka's ConfigCommand (kafka-configs), once per
    data directory (a broker started before this step existed gets it on the next `up`)."""
    marker = HOME / "data" / ".scram-user"
    if marker.exists() or not (HOME / "data").exists():
        return
    password = bed_secrets(HOME)["sasl_password"]
    for bits in (256, 512):  # one mechanism per request: Kafka refuses two for one user at once
        credential = f"SCRAM-SHA-{bits}=[iterations=4096,password={password}]"
        run(
            [
                *java(), "kafka.admin.ConfigCommand",
                "--bootstrap-server", f"127.0.0.1:{p['kafka']}",
                "--alter", "--add-config", credential,
                "--entity-type", "users", "--entity-name", SASL_USER,
            ]
        )  # fmt: skip
    marker.touch()


def secure_env(p: Ports) -> list[str]:
    """`export` lines for the SASL_SSL listener, once the bed has made its credentials."""
    tls = HOME / "tls"
    if not (tls / ".complete").exists() or not (HOME / "secrets.json").exists():
        return []
    password = bed_secrets(HOME)["sasl_password"]
    return [
        f"export TESTBED_KAFKA_SASL_SSL_SERVERS=127.0.0.1:{p['kafka_secure']}",
        f"export TESTBED_KAFKA_SASL_USERNAME={SASL_USER}",
        f"export TESTBED_KAFKA_SASL_PASSWORD={password}",
        f"export TESTBED_KAFKA_CA_FILE={tls / 'ca.pem'}",
        f"export TESTBED_KAFKA_CLIENT_CERT={tls / 'client.pem'}",
        f"export TESTBED_KAFKA_CLIENT_KEY={tls / 'client.key'}",
    ]


def server_properties(p: Ports, tls: Path, secret: dict[str, str]) -> str:
    """dev/testbed/services/kafka/server.properties.in with this bed's ports, paths and secrets."""
    template = (ROOT / "dev/testbed/services/kafka/server.properties.in").read_text()
    return (
        template.replace("@KAFKA_PORT@", str(p["kafka"]))
        .replace("@CONTROLLER_PORT@", str(p["kafka_controller"]))
        .replace("@SECURE_PORT@", str(p["kafka_secure"]))
        .replace("@TLS_DIR@", str(tls))
        .replace("@KEYSTORE_PASSWORD@", secret["keystore_password"])
        .replace("@SASL_USER@", SASL_USER)
        .replace("@SASL_PASSWORD@", secret["sasl_password"])
        .replace("@DATA_DIR@", str(HOME / "data"))
    )


def start(p: Ports) -> None:
    data = HOME / "data"
    HOME.mkdir(parents=True, exist_ok=True)
    cmd = java()
    secret = bed_secrets(HOME)
    tls = tls_files(HOME, secret["keystore_password"])
    (HOME / "server.properties").write_text(server_properties(p, tls, secret))
    if not (data / "meta.properties").exists():
        shutil.rmtree(data, ignore_errors=True)
        cluster_id = run([*cmd, "kafka.tools.StorageTool", "random-uuid"]).strip()
        run(
            [
                *cmd, "kafka.tools.StorageTool", "format",
                "-t", cluster_id, "-c", str(HOME / "server.properties"),
            ]
        )  # fmt: skip
    log = HOME / "kafka.log"
    jvm = ["-Xms256m", "-Xmx768m", "-XX:+UseG1GC", "-Djava.awt.headless=true"]
    pid = spawn(
        [*cmd[:2], *jvm, *cmd[2:], "kafka.Kafka", str(HOME / "server.properties")],
        log,
        cwd=HOME,
    )
    await_daemon("kafka", pid, HOME, log, lambda: metadata_ok(p["kafka"]))


def running(p: Ports) -> int | None:
    return running_daemon(HOME, lambda: metadata_ok(p["kafka"]))


def stop(p: Ports) -> None:
    stop_daemon(HOME)


class PrivateBroker:
    """A throwaway plaintext broker of its own (own directory, own ports), for a test that stops
    Kafka: the shared bed's broker is never touched. ``stop`` and ``start`` keep the data, so a
    restart is the same cluster, as after an outage."""

    def __init__(self, home: Path, port: int, controller_port: int) -> None:
        self.home = home
        self.port = port
        self.controller_port = controller_port
        self.bootstrap = f"127.0.0.1:{port}"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The broker's pid (also its process group), while it runs."""
        return None if self._proc is None else self._proc.pid

    def _properties(self) -> str:
        return "\n".join(
            [
                "process.roles=broker,controller",
                "node.id=1",
                f"controller.quorum.voters=1@127.0.0.1:{self.controller_port}",
                f"listeners=PLAINTEXT://127.0.0.1:{self.port},"
                f"CONTROLLER://127.0.0.1:{self.controller_port}",
                f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                f"log.dirs={self.home / 'data'}",
                "num.partitions=1",
                "default.replication.factor=1",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "min.insync.replicas=1",
                "group.initial.rebalance.delay.ms=0",
                "auto.create.topics.enable=true",
                "num.network.threads=1",
                "num.io.threads=2",
                "",
            ]
        )

    def start(self) -> None:
        """Start the broker (formatting its data directory the first time); return when it
        answers a metadata request."""
        self.home.mkdir(parents=True, exist_ok=True)
        props = self.home / "server.properties"
        props.write_text(self._properties())
        cmd = java()
        if not (self.home / "data" / "meta.properties").exists():
            cluster_id = run([*cmd, "kafka.tools.StorageTool", "random-uuid"]).strip()
            run([*cmd, "kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(props)])
        log = self.home / "kafka.log"
        jvm = ["-Xms128m", "-Xmx384m", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]
        with log.open("ab") as out:  # kept, not spawn()ed: the test process reaps it
            self._proc = subprocess.Popen(
                [*cmd[:2], *jvm, *cmd[2:], "kafka.Kafka", str(props)],
                cwd=self.home,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        ready = lambda: metadata_ok(self.port)  # noqa: E731 - one readiness check
        await_daemon("private kafka", self._proc.pid, self.home, log, ready)

    def stop(self) -> None:
        """Stop the broker (SIGTERM to its process group; SIGKILL what is left)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            kill_group(proc.pid)
            proc.wait(timeout=30)
        (self.home / "pid").unlink(missing_ok=True)
