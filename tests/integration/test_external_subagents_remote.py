"""External ACP agents as sub-agents of SSH and Docker workspaces, run where xum's own children
of those parents run:

* an SSH parent (a real sshd on 127.0.0.1, tests/sshd.py): the child shares the remote
  checkout (`isolation: "none"`; fork is refused with the way out, as for xum's children) and
  the scripted fake agent starts on the host, in that checkout (the "host" is this machine, so
  the same python runs it; its `env` tells it where xum's sources are);
* a Docker parent (podman, the tests' own image): a fork child gets a container of its own,
  made from the parent container's HEAD, and the agent (a few lines of bash: the image has no
  python) runs in it, its own writes and those it asks xum for landing there, not in the
  parent's container;
* a Dev Container parent: the fork child gets a worktree and a container of its own, as xum's
  own fork children do, and the agent runs in that container.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import xum
from tests.gitrepo import make_repo
from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.support.bash_acp_agent import BASH_AGENT
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from tests.support.external_agents import configure, write_script
from tests.support.subagents import until
from xum.engine.agent import WorkspaceInfo
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.store import registry
from xum.testing.fake_acp_agent import SCRIPT_ENV
from xum.testing.fakellm import FakeLLM
from xum.tools.tasking import SubAgentError, TaskSpec
from xum.workspaces import lifecycle
from xum.workspaces.assembly import subagent_manager
from xum.workspaces.safety.trust import set_trusted
from xum.workspaces.subagents.manager import ScopedHost, TaskSettings

pytestmark = pytest.mark.slow

SOURCES = str(Path(xum.__file__).resolve().parents[1])


def make_project(path: Path, files: dict[str, str] | None = None) -> Path:
    repo = make_repo(path, {"a.txt": "committed\n", **(files or {})})
    for key, value in (("user.name", "Test"), ("user.email", "test@example.com")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    return repo


@contextlib.asynccontextmanager
async def parent_host(
    server: FakeLLM, repo: Path, runtime_spec: str
) -> AsyncIterator[tuple[Any, ScopedHost]]:
    """A workspace on `runtime_spec` and the sub-agent host of its session (xum's own agent is
    never asked here: the children are external)."""
    created = await lifecycle.create_workspace(
        repo, runtime_spec, name_hint="parent", run_init=False
    )
    record = created.record
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
    route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
    client = open_client(route.endpoint, retry=RetryPolicy(max_retries=0))
    manager = subagent_manager(settings=TaskSettings())
    kind = created.runtime.kind
    info = WorkspaceInfo(record.id, record.name, record.project_path, record.path, kind)
    host = manager.host_for(
        info, runtime=created.runtime, route=route, client=client, thinking="off"
    )
    try:
        yield record, host
    finally:
        await manager.aclose()
        await client.aclose()
        await created.runtime.close()
        if registry.get_workspace(record.id) is not None:
            await lifecycle.delete_workspace(record.id, force=True, branch="always")


async def test_an_external_child_of_an_ssh_workspace_runs_on_the_host(
    ssh_host: Sshd,  # noqa: F811
    fake_llm: FakeLLM,
    tmp_path: Path,
) -> None:
    steps: list[dict[str, Any]] = [
        {"ownWrite": {"path": "own.txt", "content": "by the agent\n"}},
        {"terminal": {"command": "pwd", "id": "t1"}},
    ]
    script = write_script(tmp_path / "s.json", [steps])
    # Nothing of the local environment crosses ssh: the host's python finds xum through `env`.
    configure(script, env={SCRIPT_ENV: str(script), "PYTHONPATH": SOURCES})
    repo = make_project(tmp_path / "proj")
    async with parent_host(fake_llm, repo, f"ssh {ssh_host.alias}") as (parent, host):
        with pytest.raises(SubAgentError, match='isolation: "none"'):
            await host.spawn(TaskSpec("fake", "Look", "look"))
        assert [r for r in registry.list_workspaces() if r.parent_id == parent.id] == []

        (task_id,) = await host.spawn(TaskSpec("fake", "Look", "look", isolation="none"))
        await until(lambda: not host.view(task_id).active, timeout=120)
        view = host.view(task_id)
        assert view.status == "reported", view.header
        # Its terminal (served by xum on the host; its final message) and its own write: in
        # the remote checkout.
        assert view.result == f"exit 0: {parent.path}\n"
        assert (Path(parent.path) / "own.txt").read_text() == "by the agent\n"
        child = registry.get_workspace(task_id)
        assert child is not None and child.external_agent == "fake"
        assert child.runtime == "ssh" and child.host == parent.host
        assert child.path == parent.path
    assert not fake_llm.requests  # xum's own model was never asked


async def test_an_external_fork_child_of_a_docker_workspace_gets_its_own_container(
    container_engine: Engine,  # noqa: F811
    fake_llm: FakeLLM,
    tmp_path: Path,
) -> None:
    configure(Path("/nowhere"), command="bash", args=["agent.sh"], env={"AGENT_KEY": "its-own"})
    repo = make_project(tmp_path / "proj", {"agent.sh": BASH_AGENT})
    async with parent_host(fake_llm, repo, f"docker {container_engine.image}") as (parent, host):
        (task_id,) = await host.spawn(TaskSpec("fake", "Writer", "write", isolation="fork"))
        await until(lambda: not host.view(task_id).active, timeout=120)
        view = host.view(task_id)
        assert view.status == "reported", view.header
        assert view.result == (
            "user=0 cwd=/src remote=none probed=none key=its-own terminal=/src terminal-user=0 "
            "read=#!/bin/bash"
        )
        child = registry.get_workspace(task_id)
        assert child is not None and child.external_agent == "fake"
        assert child.runtime == "docker"
        mine, theirs = str(child.extra["container"]), str(parent.extra["container"])
        assert mine != theirs
        for name in ("from-agent.txt", "served.txt"):
            assert container_engine.run("exec", mine, "test", "-f", f"/src/{name}").returncode == 0
            assert container_engine.run("exec", theirs, "test", "-e", f"/src/{name}").returncode
        # Removing the child removes its container.
        assert await host.remove([task_id]) == [task_id]
        assert container_engine.state(mine) is None
    assert not fake_llm.requests


async def test_an_external_fork_child_of_a_dev_container_gets_its_worktree_and_container(
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
    fake_llm: FakeLLM,
    tmp_path: Path,
) -> None:
    configure(Path("/nowhere"), command="bash", args=["agent.sh"])
    config = devcontainer_json(container_engine.image)
    repo = make_project(
        tmp_path / "proj", {"agent.sh": BASH_AGENT, ".devcontainer/devcontainer.json": config}
    )
    set_trusted(repo)
    async with parent_host(fake_llm, repo, "devcontainer") as (parent, host):
        (task_id,) = await host.spawn(TaskSpec("fake", "Writer", "write", isolation="fork"))
        await until(lambda: not host.view(task_id).active, timeout=120)
        view = host.view(task_id)
        assert view.status == "reported", view.header
        child = registry.get_workspace(task_id)
        assert child is not None and child.external_agent == "fake"
        assert child.runtime == "devcontainer" and child.path != parent.path
        assert child.extra["container"] != parent.extra["container"]
        folder = str(child.extra["devcontainer_folder"])
        assert view.result == (
            f"user=0 cwd={folder} remote=none probed=none key=none terminal={folder} "
            "terminal-user=0 read=#!/bin/bash"
        )
        for name in ("from-agent.txt", "served.txt"):
            assert (Path(child.path) / name).is_file()
            assert not (Path(parent.path) / name).exists()
    assert not fake_llm.requests
