"""Fork-isolated sub-agents of container workspaces, through the real engine (podman + runc):

* a Docker parent's child gets a container of its own, made from the parent container's HEAD;
  the parent's turn (a fake LLM script) starts it with `isolation: "fork"`, the child commits a
  file in its container, and `task_apply_git_patch` brings the commit into the parent's `/src`
  (the series made in the child's container, `git am` in the parent's); removing the child
  removes its container, and so does deleting the parent;
* a Dev Container parent's child gets its own worktree and container of the same config; its
  commit is applied to the parent's worktree, and deleting the parent removes the child's
  container and worktree.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import make_repo
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from tests.support.engine import as_dicts
from tests.support.subagents import Agents, bash, call, tool_results, until
from xum.engine.agent import AgentSession, SessionSettings, WorkspaceInfo
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.runtime.base import Runtime
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest
from xum.tools.tasking import TASK_TOOL_NAMES, TaskSpec
from xum.workspaces import lifecycle
from xum.workspaces.assembly import subagent_manager
from xum.workspaces.subagents.manager import ScopedHost, SubAgentManager, TaskSettings

pytestmark = pytest.mark.slow


def project(path: Path, files: dict[str, str] | None = None) -> Path:
    repo = make_repo(path, {"README.md": "hello\n", **(files or {})})
    for key, value in (("user.name", "Test"), ("user.email", "test@example.com")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    return repo


async def sh(runtime: Runtime, script: str) -> str:
    out = bytearray()
    done = await runtime.exec(script, env={}, on_output=out.extend)
    assert done.exit_code == 0, out.decode(errors="replace")
    return out.decode(errors="replace").strip()


def started_ids(req: RecordedRequest) -> list[str]:
    return re.findall(r"in the background: ([0-9a-f]{10})", tool_results(req))


@dataclass
class Parent:
    record: WorkspaceRecord
    runtime: Runtime
    manager: SubAgentManager
    host: ScopedHost
    session: AgentSession
    events: list[dict[str, Any]]

    def results(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "tool-result" and e["name"] == name]


@contextlib.asynccontextmanager
async def open_parent(server: FakeLLM, runtime_spec: str, repo: Path) -> AsyncIterator[Parent]:
    """A workspace on `runtime_spec` with a session whose tools include the task tools."""
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
    events: list[dict[str, Any]] = []
    session = AgentSession(
        workspace=info,
        log=SessionLog.open(record.id),
        runtime=created.runtime,
        route=route,
        client=client,
        settings=SessionSettings(
            system_prompt="You are the parent.", tools=["bash", *TASK_TOOL_NAMES]
        ),
        scratch_dir=repo.parent / "scratch",
        emit=as_dicts(events.append),
        subagents=host,
    )
    try:
        yield Parent(record, created.runtime, manager, host, session, events)
    finally:
        await session.aclose()
        await manager.aclose()
        await client.aclose()
        if registry.get_workspace(record.id) is not None:
            await lifecycle.delete_workspace(record.id, force=True, branch="always")


def parent_script(agents: Agents) -> None:
    """The parent starts a fork child, waits for it, applies its commits, and ends."""
    agents.add(
        "ROLE:parent",
        fakellm.reply(
            call(
                "task",
                title="Writer",
                prompt="ROLE:child: add child.txt",
                isolation="fork",
                run_in_background=True,
            )
        ),
        fakellm.reply(call("task_await", min_completed=1, timeout_secs=120)),
        lambda req: fakellm.reply(call("task_apply_git_patch", task_id=started_ids(req)[0])),
        fakellm.text("applied"),
    )
    agents.add(
        "ROLE:child",
        fakellm.reply(
            bash(
                "echo from-child > child.txt && git add child.txt && "
                "git commit -qm 'child: child.txt' && echo \"in=$XUM_RUNTIME:$(pwd)\""
            )
        ),
        lambda req: fakellm.text(tool_results(req)),
    )


async def test_a_docker_fork_child_commits_in_its_own_container_and_the_parent_applies_it(
    fake_llm: FakeLLM,
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    agents = Agents()
    fake_llm.set_responder(agents)
    parent_script(agents)
    repo = project(tmp_path / "proj")
    async with open_parent(fake_llm, f"docker {container_engine.image}", repo) as parent:
        head_before = await sh(parent.runtime, "git rev-parse HEAD")

        result = await parent.session.run_turn("ROLE:parent: delegate")

        assert result.reason == "completed" and result.text == "applied", result
        (applied,) = parent.results("task_apply_git_patch")
        assert not applied["is_error"], applied["output"]
        (child,) = [r for r in registry.list_workspaces() if r.parent_id == parent.record.id]
        assert child.runtime == "docker"
        assert child.extra["container"] != parent.record.extra["container"]
        assert container_engine.state(child.extra["container"]) == "running"
        awaited = parent.results("task_await")[0]["output"]
        assert "in=docker:/src" in awaited  # the child's bash ran in its container's checkout
        # The commit is in the parent's /src (its container), on top of where it was.
        assert await sh(parent.runtime, "git log -1 --format=%s") == "child: child.txt"
        assert await sh(parent.runtime, "git rev-parse HEAD~1") == head_before
        assert await sh(parent.runtime, "cat /src/child.txt") == "from-child"
        # Not on this machine: the project itself is untouched.
        assert not (repo / "child.txt").exists()

        # Applying again is refused (already in the history); a dry run of a forced apply
        # does not touch the checkout.
        again = await parent.host.apply_patch(
            child.id, dry_run=False, expected_head_sha=None, three_way=False, force=False
        )
        assert not again.ok and "already in your history" in again.message
        head = await sh(parent.runtime, "git rev-parse HEAD")
        dry = await parent.host.apply_patch(
            child.id, dry_run=True, expected_head_sha=None, three_way=True, force=True
        )
        assert "dry run" in dry.message
        assert await sh(parent.runtime, "git rev-parse HEAD") == head
        assert await sh(parent.runtime, "git worktree list | wc -l") == "1"

        # Removing the child removes its container.
        assert await parent.host.remove([child.id]) == [child.id]
        assert registry.get_workspace(child.id) is None
        assert container_engine.state(child.extra["container"]) is None
    assert not fake_llm.errors


async def test_deleting_a_docker_parent_removes_its_fork_childs_container(
    fake_llm: FakeLLM,
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    agents = Agents()
    fake_llm.set_responder(agents)
    agents.add("ROLE:idle", fakellm.text("nothing to do"))
    repo = project(tmp_path / "proj")
    async with open_parent(fake_llm, f"docker {container_engine.image}", repo) as parent:
        (task_id,) = await parent.host.spawn(
            TaskSpec("exec", "Idle", "ROLE:idle", isolation="fork")
        )
        await until(lambda: not parent.host.view(task_id).active, timeout=120)
        child = registry.get_workspace(task_id)
        assert child is not None and child.runtime == "docker"
        assert container_engine.state(child.extra["container"]) == "running"
        await parent.session.aclose()
        await parent.manager.aclose()

        await lifecycle.delete_workspace(parent.record.id, force=True)

        assert registry.get_workspace(task_id) is None
        assert container_engine.state(child.extra["container"]) is None
        assert container_engine.state(parent.record.extra["container"]) is None


async def test_a_dev_container_fork_child_gets_its_own_container_and_its_commit_is_applied(
    fake_llm: FakeLLM,
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    agents = Agents()
    fake_llm.set_responder(agents)
    parent_script(agents)
    config = {".devcontainer/devcontainer.json": devcontainer_json(container_engine.image)}
    repo = project(tmp_path / "proj", config)
    async with open_parent(fake_llm, "devcontainer", repo) as parent:
        result = await parent.session.run_turn("ROLE:parent: delegate")

        assert result.reason == "completed" and result.text == "applied", result
        (applied,) = parent.results("task_apply_git_patch")
        assert not applied["is_error"], applied["output"]
        (child,) = [r for r in registry.list_workspaces() if r.parent_id == parent.record.id]
        assert child.runtime == "devcontainer" and child.path != parent.record.path
        child_container = child.extra["container"]
        assert child_container != parent.record.extra["container"]
        assert container_engine.state(child_container) == "running"
        awaited = parent.results("task_await")[0]["output"]
        assert "in=devcontainer:/workspaces/" in awaited  # ran in the child's container
        worktree = Path(parent.record.path)
        assert (worktree / "child.txt").read_text() == "from-child\n"
        subject = subprocess.run(
            ["git", "log", "-1", "--format=%s"], cwd=worktree, capture_output=True, text=True
        ).stdout.strip()
        assert subject == "child: child.txt"

        await parent.session.aclose()
        await parent.manager.aclose()
        await lifecycle.delete_workspace(parent.record.id, force=True)

        assert registry.get_workspace(child.id) is None
        assert container_engine.state(child_container) is None
        assert not Path(child.path).exists()
    assert not fake_llm.errors
