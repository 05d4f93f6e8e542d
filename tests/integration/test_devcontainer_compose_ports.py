"""A Docker Compose dev container gets the workspace's port block published, as an image-based
one does: the override config lists one more compose file that gives the config's service the
ports. Real Dev Container CLI, `docker-compose` (v1, Debian's) against podman's API service
(`DOCKER_HOST` at its socket, the way podman users run Compose), podman for the rest.
Skipped without docker-compose (failed under CI: `make deps-system` installs it)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_tool  # noqa: F401
from tests.support.podman_service import podman_api_service
from tests.support.ports import free_block
from xum.store.config import update_config
from xum.workspaces import lifecycle

pytestmark = pytest.mark.slow

CONFIG = """{
  // a Compose dev container: the workspace mount is the compose file's
  "name": "compose test",
  "dockerComposeFile": "docker-compose.yml",
  "service": "app",
  "workspaceFolder": "/workspace"
}
"""
COMPOSE = """version: "3"
services:
  app:
    image: {image}
    command: ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1000 & wait $$!; done"]
    volumes:
      - ..:/workspace
"""


def test_a_compose_dev_container_publishes_the_port_block(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    if container_engine.cli != "podman" or shutil.which("docker-compose") is None:
        if os.environ.get("CI"):
            pytest.fail("docker-compose and podman are needed: `make deps-system` installs them")
        pytest.skip("needs podman and docker-compose (make deps-system)")
    base = free_block(2)
    update_config(lambda config: config.__setitem__("ports", {"base": base, "size": 2}))
    project = make_repo(
        tmp_path / "proj",
        {
            ".devcontainer/devcontainer.json": CONFIG,
            ".devcontainer/docker-compose.yml": COMPOSE.format(image=container_engine.image),
        },
    )
    socket_path = tmp_path / "podman.sock"
    with podman_api_service(socket_path, container_engine.env):
        monkeypatch.setenv("DOCKER_HOST", f"unix://{socket_path}")
        created = asyncio.run(
            lifecycle.create_workspace(project, "devcontainer", name_hint="cmp", run_init=False)
        )
        record = created.record
        container = str(record.extra["container"])
        network = f"{Path(record.path).name}_devcontainer_default"
        try:
            assert record.extra["container_ports_published"] is True
            for port in (base, base + 1):
                published = container_engine.run("port", container, f"{port}/tcp")
                assert published.stdout.strip() == f"127.0.0.1:{port}", published.stderr
            out = bytearray()
            done = asyncio.run(created.runtime.exec("pwd; ls -A", env={}, on_output=out.extend))
            lines = out.decode(errors="replace").splitlines()
            assert done.exit_code == 0, lines
            assert "/workspace" in lines, lines
            assert ".devcontainer" in lines  # the worktree, mounted by the compose file
        finally:
            asyncio.run(created.runtime.close())
            asyncio.run(lifecycle.delete_workspace(record.id, force=True, branch="always"))
            container_engine.run("network", "rm", network)
    assert container_engine.state(container) is None


def test_a_taken_port_makes_the_compose_dev_container_without_publishing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    if container_engine.cli != "podman" or shutil.which("docker-compose") is None:
        if os.environ.get("CI"):
            pytest.fail("docker-compose and podman are needed: `make deps-system` installs them")
        pytest.skip("needs podman and docker-compose (make deps-system)")
    project = make_repo(
        tmp_path / "proj",
        {
            ".devcontainer/devcontainer.json": CONFIG,
            ".devcontainer/docker-compose.yml": COMPOSE.format(image=container_engine.image),
        },
    )
    socket_path = tmp_path / "podman.sock"
    with podman_api_service(socket_path, container_engine.env), socket.socket() as taken:
        monkeypatch.setenv("DOCKER_HOST", f"unix://{socket_path}")
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        update_config(lambda config: config.__setitem__("ports", {"base": port, "size": 1}))
        created = asyncio.run(
            lifecycle.create_workspace(project, "devcontainer", name_hint="cmp", run_init=False)
        )
        record = created.record
        container = str(record.extra["container"])
        network = f"{Path(record.path).name}_devcontainer_default"
        try:
            assert record.extra["container_ports_published"] is False
            assert container_engine.state(container) == "running"
            assert container_engine.run("port", container).stdout.strip() == ""
        finally:
            asyncio.run(created.runtime.close())
            asyncio.run(lifecycle.delete_workspace(record.id, force=True, branch="always"))
            container_engine.run("network", "rm", network)
