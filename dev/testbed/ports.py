"""The ports of this checkout's services, chosen once and recorded in ``.services/ports.json``.

Ports are chosen when nothing of this checkout runs: the variable's value when set, else the
default, or the next free one in steps of 10 when another process holds it (another checkout's
test bed, say), so two checkouts can run their test beds side by side.
"""

from __future__ import annotations

import json
import os

from dev.testbed.layout import STATE, say
from dev.testbed.net import port_free

#: Port of each listener, by key: a service's own name for its main port.
Ports = dict[str, int]

DEFAULT_PORTS: Ports = {
    "kafka": 19092,
    "kafka_controller": 19093,
    "kafka_secure": 19094,
    "postgres": 15432,
    "mongo": 27018,
    "mongo_memory": 27038,
}
PORT_ENV = {
    "kafka": "TESTBED_KAFKA_PORT",
    "kafka_controller": "TESTBED_KAFKA_CONTROLLER_PORT",
    "kafka_secure": "TESTBED_KAFKA_SECURE_PORT",
    "postgres": "TESTBED_POSTGRES_PORT",
    "mongo": "TESTBED_MONGO_PORT",
    "mongo_memory": "TESTBED_MONGO_MEMORY_PORT",
}
_STEPS = 50


def ports() -> Ports:
    """The ports this checkout's services use: recorded when they were chosen, so that stop, start
    and env agree with the running servers."""
    recorded = STATE / "ports.json"
    if recorded.exists():
        found = {k: int(v) for k, v in json.loads(recorded.read_text()).items()}
        missing = [k for k in DEFAULT_PORTS if k not in found]
        if missing:  # a bed recorded before a port was added: pick that one now, keep the rest
            for key in missing:
                found[key] = free_port_near(key, set(found.values()))
            recorded.write_text(json.dumps(found, indent=2) + "\n")
        return found
    return {k: int(os.environ.get(PORT_ENV[k], d)) for k, d in DEFAULT_PORTS.items()}


def free_port_near(key: str, taken: set[int]) -> int:
    """The port for `key`: its variable's value, else its default or the next free one (+10)."""
    if PORT_ENV[key] in os.environ:
        return int(os.environ[PORT_ENV[key]])
    default = DEFAULT_PORTS[key]
    candidates = [default + 10 * step for step in range(_STEPS)]
    return next((c for c in candidates if c not in taken and port_free(c)), default)


def choose_ports() -> Ports:
    """Pick ports afresh (nothing of this checkout runs) and record them: a port given by
    environment variable is used as is; a default that another process holds moves up in steps
    of 10."""
    chosen: Ports = {}
    for key, default in DEFAULT_PORTS.items():
        if PORT_ENV[key] in os.environ:
            chosen[key] = int(os.environ[PORT_ENV[key]])
            continue
        candidates = [default + 10 * step for step in range(_STEPS)]
        taken = set(chosen.values())
        chosen[key] = next((c for c in candidates if c not in taken and port_free(c)), default)
        if chosen[key] != default:
            say(f"port {default} is taken; {key} uses {chosen[key]}")
    STATE.mkdir(exist_ok=True)
    (STATE / "ports.json").write_text(json.dumps(chosen, indent=2) + "\n")
    return chosen
