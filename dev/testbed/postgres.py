"""PostgreSQL from Debian's packages: a throwaway cluster with trust auth on loopback, database
``grounding``.

Postgres refuses to run as root and its user cannot enter most checkouts, so the cluster lives in
a temp dir owned by it; ``.services/postgres`` links there.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from dev.testbed.layout import ROOT, START_TIMEOUT_S, STATE, ServiceError, say
from dev.testbed.net import port_open
from dev.testbed.ports import Ports
from dev.testbed.process import children, kill_group, pid_alive, read_pid, run, wait_until

LINK = STATE / "postgres"

#: Throwaway test data: speed over durability; loopback TCP only, no Unix socket.
CONF = (
    "\n# scripts/services\nlisten_addresses = '127.0.0.1'\n"
    "unix_socket_directories = ''\nfsync = off\nsynchronous_commit = off\n"
    "full_page_writes = off\nmax_connections = 200\n"
)


def bindir() -> Path:
    """Debian's server binaries (newest version), installing the package when they are missing."""
    found = debian_initdb()
    if not found and shutil.which("initdb"):
        return Path(shutil.which("initdb") or "").parent
    if not found:
        install()
        found = debian_initdb()
    if not found:
        raise ServiceError("PostgreSQL server binaries (initdb) not found after installing")
    return found[-1].parent


def debian_initdb() -> list[Path]:
    versions = Path("/usr/lib/postgresql").glob("*/bin/initdb")
    return sorted(versions, key=lambda x: [int(n) for n in x.parts[-3].split(".") if n.isdigit()])


def install() -> None:
    if os.geteuid() != 0:
        raise ServiceError("initdb not found: install Debian's `postgresql` package (as root)")
    say("postgres: installing Debian's postgresql package (no system cluster is created)")
    conf = Path("/etc/postgresql-common/createcluster.conf")
    if not conf.exists():
        # Only this throwaway cluster is wanted; stop the package from creating and starting one.
        conf.parent.mkdir(parents=True, exist_ok=True)
        conf.write_text("create_main_cluster = false\n")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "UCF_FORCE_CONFFOLD": "1"}
    run(["apt-get", "update", "-q"], env=env)
    run(
        [
            "apt-get", "install", "-y", "-q", "--no-install-recommends",
            "-o", "Dpkg::Options::=--force-confold", "postgresql",
        ],
        env=env,
    )  # fmt: skip


def home() -> Path:
    """The cluster's directory, made (owned by the postgres user) when the link leads nowhere."""
    if LINK.is_symlink() and LINK.resolve().is_dir():
        return LINK.resolve()
    if LINK.is_symlink():
        LINK.unlink()  # its temp dir is gone (e.g. /tmp was cleaned): start afresh
    elif LINK.exists():
        shutil.rmtree(LINK)
    tag = hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]
    made = Path(tempfile.gettempdir()) / f"grounding-worker-pg-{os.geteuid()}-{tag}"
    shutil.rmtree(made, ignore_errors=True)
    made.mkdir(mode=0o700)
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        os.chown(made, pw.pw_uid, pw.pw_gid)
    STATE.mkdir(exist_ok=True)
    LINK.symlink_to(made)
    return made


def as_pg(cmd: list[str]) -> list[str]:
    """`cmd` as the postgres user when we are root (the server refuses to run as root)."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def run_pg(cmd: list[str], cluster: Path) -> str:
    # cwd: the postgres user may not be allowed into the caller's directory.
    return run(as_pg(cmd), cwd=cluster)


def start(p: Ports) -> None:
    bins = bindir()
    cluster = home()
    data = cluster / "data"
    log = cluster / "postgres.log"
    if not (data / "PG_VERSION").exists():
        run_pg(
            [
                str(bins / "initdb"), "-D", str(data), "-U", "postgres", "-E", "UTF8",
                "--locale=C.UTF-8", "--auth-local=trust", "--auth-host=trust",
            ],
            cluster,
        )  # fmt: skip
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(CONF)
    run_pg(
        [
            str(bins / "pg_ctl"), "start", "-w", "-t", str(int(START_TIMEOUT_S)),
            "-D", str(data), "-l", str(log), "-o", f"-p {p['postgres']}",
        ],
        cluster,
    )  # fmt: skip
    wait_until("postgres", lambda: ready(bins, p["postgres"]), log, START_TIMEOUT_S)
    psql = [str(bins / "psql"), "-h", "127.0.0.1", "-p", str(p["postgres"]), "-U", "postgres"]
    exists = run([*psql, "-tAc", "SELECT 1 FROM pg_database WHERE datname = 'grounding'"])
    if exists.strip() != "1":
        run([*psql, "-qc", "CREATE DATABASE grounding"])


def ready(bins: Path, port: int) -> bool:
    cmd = [str(bins / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)]
    return subprocess.run(cmd, check=False).returncode == 0


def postmaster_pid() -> int | None:
    if not LINK.is_dir():
        return None
    return read_pid(LINK / "data/postmaster.pid")


def running(p: Ports) -> int | None:
    pid = postmaster_pid()
    if pid and pid_alive(pid) and port_open(p["postgres"]):
        return pid
    return None


def stop(p: Ports) -> None:
    pid = postmaster_pid()
    if not pid or not pid_alive(pid):
        return
    cluster = LINK.resolve()
    # Every backend is a child of the postmaster and leads a process group of its own.
    family = [pid, *children(pid)]
    try:
        pg_ctl = str(bindir() / "pg_ctl")
        run_pg([pg_ctl, "stop", "-w", "-m", "fast", "-D", str(cluster / "data")], cluster)
    except ServiceError as exc:
        say(f"postgres: pg_ctl stop failed, killing it: {exc}")
    for member in family:
        if pid_alive(member):
            kill_group(member, signal.SIGKILL, timeout=5)
