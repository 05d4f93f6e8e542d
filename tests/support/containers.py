"""Fixtures for the Docker runtime's tests: a container engine and a local test image.

`container_image` (session scope) finds podman (or a docker whose engine answers), builds the
test image once (`container_image.ensure_image`) and yields `Engine(cli, image, env)`;
`container_engine` (function scope) points xum at that engine for one test (`XUM_CONTAINER_CLI`,
and for podman `CONTAINERS_CONF` at the test's own containers.conf) and removes the containers
the test left behind (those of projects under its `tmp_path`, so parallel workers keep theirs). Import both into a test module to use them.

Without a container engine the tests skip, saying why, unless `CI` is set: `make deps-system`
installs podman.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.container_image import ensure_image, podman_conf

LABEL = "xum.workspace"
PROJECT_LABEL = "xum.project"


@dataclass(frozen=True)
class Engine:
    cli: str
    image: str
    env: dict[str, str]  # what the test's processes need to reach the engine

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.cli, *args],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def containers(self, project: Path) -> set[str]:
        """The names of the containers xum made for `project` (running or not)."""
        label = f"label={PROJECT_LABEL}={project}"
        done = self.run("ps", "-a", "--filter", label, "--format", "{{.Names}}")
        return set(done.stdout.split())

    def state(self, name: str) -> str | None:
        done = self.run("inspect", "--format", "{{.State.Status}}", name)
        return done.stdout.strip() if done.returncode == 0 else None


def _engine_cli() -> str | None:
    if shutil.which("podman"):
        return "podman"
    if shutil.which("docker"):
        done = subprocess.run(["docker", "version"], capture_output=True, check=False)
        return "docker" if done.returncode == 0 else None
    return None


@pytest.fixture(scope="session")
def container_image(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    cli = _engine_cli()
    if cli is None:
        if os.environ.get("CI"):
            pytest.fail("no container engine but CI is set: `make deps-system` installs podman")
        pytest.skip("no container engine: install podman (make deps-system) to run these")
    work = tmp_path_factory.mktemp("container-image")
    env = {"XUM_CONTAINER_CLI": cli}
    if cli == "podman":
        env["CONTAINERS_CONF"] = str(podman_conf(work))
    previous = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        image = ensure_image(cli, work)
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return Engine(cli, image, env)


@pytest.fixture
def container_engine(
    container_image: Engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Engine]:
    for key, value in container_image.env.items():
        monkeypatch.setenv(key, value)
    yield container_image
    # What this test left behind: the containers of projects under its own temporary directory
    # (labelled with their project), never another worker's.
    listed = container_image.run(
        "ps", "-a", "--filter", f"label={LABEL}",
        "--format", f'{{{{.Names}}}} {{{{index .Labels "{PROJECT_LABEL}"}}}}',
    )  # fmt: skip
    for line in listed.stdout.splitlines():
        name, _, project = line.partition(" ")
        if project.startswith(str(tmp_path) + os.sep):
            container_image.run("rm", "-f", name)
