"""deploy/Dockerfile, checked statically (no Docker engine here to build it).

A small parser splits the file into instructions (continuations joined, comments dropped) and
stages; the tests assert the shape the issue asks for: a slim base, a builder stage that makes
the wheels, a final stage that installs them with no index and no build tools, a non-root user,
a HEALTHCHECK, the CLI as the entry point, and the OCI labels of the project.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass, field

import pytest
from deploy_files import ROOT, setting_env_names

from worker import __version__
from worker.settings import Settings

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
BUILD_TOOLS = re.compile(r"\b(build-essential|gcc|g\+\+|make|python3-dev|libpq-dev|cc)\b")


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]


def parse(text: str) -> tuple[dict[str, str], list[Stage]]:
    """(global ARG defaults, stages) of a Dockerfile."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        if raw.lstrip().startswith("#") and not pending:
            continue
        if raw.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line = (pending + raw).strip()
        pending = ""
        if line:
            lines.append(line)
    assert not pending, "the file ends inside a continued instruction"
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in lines:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            words = rest.split()
            base = words[0]
            for name, value in args.items():
                base = base.replace("${" + name + "}", value).replace("$" + name, value)
            alias = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append(Stage(base, alias))
        elif not stages:
            assert keyword == "ARG", f"only ARG may precede FROM, not {keyword}"
            name, _, default = rest.partition("=")
            args[name.strip()] = default.strip()
        else:
            stages[-1].instructions.append((keyword, rest.strip()))
    return args, stages


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse(DOCKERFILE.read_text(encoding="utf-8"))[1]


def test_the_parser_reads_stages_and_continuations() -> None:
    _, got = parse(
        "ARG IMG=python:3.11-slim\n# note\nFROM ${IMG} AS b\nRUN a \\\n  # inside\n  && b\n"
        "FROM $IMG\nUSER 1:1\n"
    )
    assert [(s.base, s.name) for s in got] == [
        ("python:3.11-slim", "b"),
        ("python:3.11-slim", None),
    ]
    assert got[0].all("RUN") == ["a    && b"]
    assert got[1].all("USER") == ["1:1"]


def test_two_stages_on_a_slim_python_base(stages: list[Stage]) -> None:
    assert len(stages) == 2
    assert stages[0].name == "builder"
    for stage in stages:
        assert re.fullmatch(r"python:3\.11-slim(-[a-z]+)?", stage.base), stage.base


def test_builder_makes_wheels_of_the_project(stages: list[Stage]) -> None:
    builder = stages[0]
    copied = [shlex.split(c) for c in builder.all("COPY")]
    sources = {s for c in copied for s in c[:-1]}
    assert sources == {"pyproject.toml", "README.md", "deploy/requirements/runtime.lock", "worker"}
    for src in sources:
        assert (ROOT / src).exists(), src
    (wheels,) = [r for r in builder.all("RUN") if "pip wheel" in r]
    # The dependencies from the lock, hash-checked; the project on top, without re-resolving.
    assert re.search(
        r"pip wheel --wheel-dir /wheels --require-hashes -r deploy/requirements/runtime\.lock",
        wheels,
    )
    assert re.search(r"pip wheel --wheel-dir /wheels --no-deps \.$", wheels)


def test_final_stage_installs_the_wheels_without_an_index_or_build_tools(
    stages: list[Stage],
) -> None:
    final = stages[1]
    runs = final.all("RUN")
    installs = [r for r in runs if "pip install" in r]
    assert len(installs) == 1
    (install,) = installs
    assert "--mount=type=bind,from=builder,source=/wheels,target=/wheels" in install
    assert "--no-index" in install
    assert "--find-links=/wheels" in install
    assert not final.all("COPY"), "nothing but the wheels (bind-mounted) comes into the image"
    assert not final.all("ADD")
    for run in runs:
        assert "apt-get install" not in run
        assert not BUILD_TOOLS.search(run), run
    assert BUILD_TOOLS.search(" ".join(stages[0].all("RUN"))), "the builder has the compiler"


def test_runs_as_a_non_root_user_created_in_the_image(stages: list[Stage]) -> None:
    final = stages[1]
    (user,) = final.all("USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit()
    assert gid.isdigit()
    assert int(uid) >= 1000
    assert int(gid) >= 1000
    setup = " ".join(final.all("RUN"))
    assert f"--uid {uid}" in setup
    assert f"--gid {gid}" in setup
    keywords = [kw for kw, _ in final.instructions]
    assert keywords.index("USER") < keywords.index("ENTRYPOINT")


def test_entrypoint_is_the_cli_and_the_default_command_runs_the_worker(
    stages: list[Stage],
) -> None:
    final = stages[1]
    assert [json.loads(e) for e in final.all("ENTRYPOINT")] == [["grounding-worker"]]
    assert [json.loads(c) for c in final.all("CMD")] == [["run"]]


def test_healthcheck_asks_the_worker_health_endpoint_on_its_port(stages: list[Stage]) -> None:
    final = stages[1]
    (check,) = final.all("HEALTHCHECK")
    options, _, command = check.partition(" CMD ")
    assert re.search(r"--interval=\d+s", options)
    assert re.search(r"--timeout=\d+s", options)
    argv = json.loads(command)
    assert argv[:2] == ["python", "-c"]
    assert "/health" in argv[2]
    assert "GW_WEB_PORT" in argv[2]
    env = " ".join(final.all("ENV"))
    port = re.search(r"GW_WEB_PORT=(\d+)", env)
    assert port is not None
    assert final.all("EXPOSE") == [port.group(1)]
    assert int(port.group(1)) == Settings.model_fields["web_port"].default


def test_env_lines_set_only_real_settings(stages: list[Stage]) -> None:
    env = " ".join(stages[1].all("ENV"))
    names = set(re.findall(r"\b(GW_[A-Z0-9_]+)=", env))
    assert names
    assert names <= setting_env_names()


def test_the_build_context_admits_what_the_builder_copies() -> None:
    ignore = (ROOT / "deploy" / "Dockerfile.dockerignore").read_text(encoding="utf-8").split("\n")
    rules = [r.strip() for r in ignore if r.strip() and not r.startswith("#")]
    assert rules[0] == "*"
    assert {"!pyproject.toml", "!README.md", "!worker/"} <= set(rules)


def labels(stage: Stage) -> dict[str, str]:
    out: dict[str, str] = {}
    for label in stage.all("LABEL"):
        for pair in shlex.split(label):
            key, sep, value = pair.partition("=")
            assert sep, f"LABEL without a value: {pair!r}"
            out[key] = value
    return out


def stage_args(stage: Stage) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for arg in stage.all("ARG"):
        name, sep, default = arg.partition("=")
        out[name] = shlex.split(default)[0] if sep and shlex.split(default) else None
    return out


def test_the_image_carries_the_oci_labels_of_the_project(stages: list[Stage]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    final = stages[1]
    got = labels(final)
    assert got == {
        "org.opencontainers.image.title": project["name"],
        "org.opencontainers.image.description": project["description"],
        "org.opencontainers.image.licenses": project["license"],
        "org.opencontainers.image.version": "${VERSION}",
        "org.opencontainers.image.source": "${SOURCE_URL}",
        "org.opencontainers.image.revision": "${REVISION}",
        "org.opencontainers.image.base.name": "${PYTHON_IMAGE}",
    }
    assert project["license"] == "Apache-2.0"
    # Each ${NAME} is an ARG of the final stage (an ARG before FROM is not visible after it).
    args = stage_args(final)
    for value in got.values():
        for name in re.findall(r"\$\{(\w+)\}", value):
            assert name in args, f"{name} is not an ARG of the final stage"
    assert args["VERSION"] == project["version"] == __version__
    # After the install, so a new REVISION or VERSION leaves the install layer cached.
    keywords = [kw for kw, _ in final.instructions]
    last_run = max(i for i, kw in enumerate(keywords) if kw == "RUN")
    assert min(i for i, kw in enumerate(keywords) if kw in ("ARG", "LABEL")) > last_run


def test_the_base_image_is_a_build_argument_pinned_only_by_a_real_digest() -> None:
    """No registry is reachable here to read a digest: the default is the tag, and the release
    pipeline passes PYTHON_IMAGE=<tag>@sha256:<digest> (docs/decisions.md, "Deployment")."""
    global_args, stages = parse(DOCKERFILE.read_text(encoding="utf-8"))
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert [s.base for s in stages] == [global_args["PYTHON_IMAGE"]] * 2
    assert "FROM ${PYTHON_IMAGE}" in text
    image, _, digest = global_args["PYTHON_IMAGE"].partition("@")
    assert re.fullmatch(r"python:3\.11-slim(-[a-z]+)?", image)
    assert not digest or re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    decisions = (ROOT / "docs" / "decisions.md").read_text(encoding="utf-8")
    assert "PYTHON_IMAGE" in decisions
