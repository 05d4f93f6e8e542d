"""The workspace's port block published from its dev container, as on Docker: `xum run -r
devcontainer` with the real Dev Container CLI and podman gives the container the block on
127.0.0.1 at the same numbers (through an override config whose `runArgs` add `-p`; the
project's own `runArgs` are kept), and a block with a port taken here makes the workspace
without publishing."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import make_repo
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from tests.support.ports import free_block
from xum.store import registry
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.workspaces import lifecycle

pytestmark = pytest.mark.slow


def test_the_port_block_is_published_from_the_dev_container(
    fake_llm: FakeLLM,
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    base = free_block(3)
    update_config(lambda config: config.__setitem__("ports", {"base": base, "size": 3}))
    config = devcontainer_json(
        container_engine.image, runArgs=["--env", "FROM_RUN_ARGS=kept"]
    ).replace("{", "{\n  // a comment: devcontainer.json is JSONC\n", 1)
    project = make_repo(tmp_path / "proj", {".devcontainer/devcontainer.json": config})
    fake_llm.script(
        fakellm.tool_call(
            "bash",
            {
                "script": 'echo "port=$XUM_PORT"; echo "run_args=$FROM_RUN_ARGS"',
                "display_name": "ports",
            },
        ),
        fakellm.text("done"),
    )
    result = run_xum(
        "run", "--json", "-r", "devcontainer", "look at the ports",
        cwd=project, env=env_for(fake_llm), timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (out,) = [e["output"] for e in events(result.stdout) if e["type"] == "tool-result"]
    (record,) = registry.list_workspaces()
    try:
        assert record.ports is not None and record.ports.first == base
        assert f"port={base}" in out.splitlines()
        assert "run_args=kept" in out.splitlines()  # the project's runArgs still apply
        assert record.extra["container_ports_published"] is True
        container = str(record.extra["container"])
        for port in (base, base + 2):
            published = container_engine.run("port", container, f"{port}/tcp")
            assert published.stdout.strip() == f"127.0.0.1:{port}"
        # The override config lives outside the worktree: deleting without force finds the
        # worktree clean.
        asyncio.run(lifecycle.delete_workspace(record.id))
    finally:
        if registry.list_workspaces():
            asyncio.run(lifecycle.delete_workspace(record.id, force=True))
    assert container_engine.state(container) is None


def test_a_taken_port_makes_the_dev_container_without_publishing(
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    project = make_repo(
        tmp_path / "proj", {".devcontainer.json": devcontainer_json(container_engine.image)}
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        update_config(lambda config: config.__setitem__("ports", {"base": port, "size": 1}))
        created = asyncio.run(
            lifecycle.create_workspace(project, "devcontainer", name_hint="taken", run_init=False)
        )
    record = created.record
    try:
        assert record.ports is not None and record.ports.first == port
        assert record.extra["container_ports_published"] is False
        container = str(record.extra["container"])
        assert container_engine.state(container) == "running"
        assert container_engine.run("port", container).stdout.strip() == ""
        # One container for the workspace: the one that could not start was removed.
        assert len(container_engine.containers(project)) == 1
    finally:
        asyncio.run(created.runtime.close())
        asyncio.run(lifecycle.delete_workspace(record.id, force=True))
