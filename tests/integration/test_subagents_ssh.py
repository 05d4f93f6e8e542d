"""Sub-agents of a workspace on an SSH host (a real sshd on 127.0.0.1, see tests/sshd.py): a child
with `isolation: "none"` shares the remote checkout and its record can open it again later; the
default fork isolation is refused with the way out."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.support.subagents import Agents, bash, tool_results, until
from xum.engine.agent import WorkspaceInfo
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.store import registry
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tools.tasking import SubAgentError, TaskSpec
from xum.workspaces import lifecycle
from xum.workspaces.assembly import subagent_manager
from xum.workspaces.service import open_runtime
from xum.workspaces.subagents.manager import TaskSettings


def make_project(path: Path) -> Path:
    path.mkdir()
    sh = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*sh, "init", "-q", "-b", "main"], cwd=path, check=True)
    (path / "a.txt").write_text("committed\n")
    subprocess.run([*sh, "add", "."], cwd=path, check=True)
    subprocess.run([*sh, "commit", "-qm", "c"], cwd=path, check=True)
    return path


async def test_a_shared_checkout_child_of_an_ssh_workspace_keeps_the_host(
    ssh_host: Sshd,  # noqa: F811
    fake_llm: FakeLLM,
    tmp_path: Path,
) -> None:
    agents = Agents()
    fake_llm.set_responder(agents)
    agents.add("ROLE:look", fakellm.reply(bash("pwd")), lambda req: fakellm.text(tool_results(req)))
    created = await lifecycle.create_workspace(
        make_project(tmp_path / "proj"), f"ssh {ssh_host.alias}", name_hint="remote"
    )
    parent = created.record
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}
    route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
    client = open_client(route.endpoint, retry=RetryPolicy(max_retries=0))
    manager = subagent_manager(settings=TaskSettings())
    info = WorkspaceInfo(parent.id, parent.name, parent.project_path, parent.path, "ssh")
    host = manager.host_for(
        info, runtime=created.runtime, route=route, client=client, thinking="off"
    )
    try:
        with pytest.raises(SubAgentError, match='isolation: "none"'):
            await host.spawn(TaskSpec("explore", "Look", "ROLE:look"))
        (task_id,) = await host.spawn(TaskSpec("explore", "Look", "ROLE:look", isolation="none"))
        await until(lambda: not host.view(task_id).active)
        assert parent.path in (host.view(task_id).result or "")  # ran in the remote checkout

        child = registry.get_workspace(task_id)
        assert child is not None and child.runtime == "ssh" and child.path == parent.path
        assert child.host == parent.host
        assert child.extra["remote_home"] == parent.extra["remote_home"]
        assert child.extra["remote_git"] == parent.extra["remote_git"]
        # A later process (the server's lifecycle operations) can open the child's checkout.
        runtime = open_runtime(child)
        chunks: list[bytes] = []
        result = await runtime.exec("cat a.txt", env={}, on_output=chunks.append)
        assert result.exit_code == 0 and b"".join(chunks) == b"committed\n"

        assert await host.remove([task_id]) == [task_id]
        assert registry.get_workspace(task_id) is None
        assert (Path(parent.path) / "a.txt").exists()  # the shared checkout stays
    finally:
        await manager.aclose()
        await client.aclose()
        await lifecycle.delete_workspace(parent.id, force=True)
