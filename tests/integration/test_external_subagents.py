"""Sub-agents and best of N with external ACP agents: a parent xum turn (xum's fake model) calls
`task` with `agents` naming xum's exec agent and the scripted fake ACP agent; both children run
in worktrees of their own, both results come back, and the external child's commit is a patch
like an xum child's. Refusals (an unknown id, a model for an external agent, n with agents) are
clear and create nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.engine import engine_session
from tests.support.external_agents import configure, write_script
from tests.support.subagents import Agents, bash, call, until
from xum.engine.agent import SessionSettings, WorkspaceInfo
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.runtime.local import LocalRuntime
from xum.store import registry
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tools.tasking import TASK_TOOL_NAMES, SubAgentError, TaskSpec
from xum.workspaces.assembly import subagent_manager
from xum.workspaces.subagents.manager import ScopedHost, TaskSettings

pytestmark = pytest.mark.repo(
    name="project", files={"README.md": "hello\n"}, message="initial", identity=True
)

PARENT_ID = "parentws01"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


class Parent:
    """A parent xum session on `repo` whose children the manager hosts (as the host's assembly
    wires them), with every event it and its children emit."""

    def __init__(self, server: FakeLLM, repo: Path) -> None:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
        self.client = open_client(route.endpoint, retry=RetryPolicy(max_retries=0))
        self.events: list[dict[str, Any]] = []
        self.child_events: list[tuple[str, dict[str, Any]]] = []
        self.manager = subagent_manager(
            settings=TaskSettings(),
            listener=lambda ws, e: self.child_events.append((ws, e.to_dict())),
        )
        info = WorkspaceInfo(PARENT_ID, "parent", str(repo), str(repo), "local")
        runtime = LocalRuntime(str(repo), str(repo.parent))
        self.host: ScopedHost = self.manager.host_for(
            info, runtime=runtime, route=route, client=self.client, thinking="medium"
        )
        self.session = engine_session(
            repo,
            route,
            self.client,
            ws_id=info.id,
            name=info.name,
            runtime=runtime,
            settings=SessionSettings(
                system_prompt="You are the parent.", tools=["bash", *TASK_TOOL_NAMES]
            ),
            scratch_dir=repo.parent / "scratch",
            events=self.events,
            subagents=self.host,
        )

    def results(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "tool-result" and e["name"] == name]

    async def close(self) -> None:
        await self.session.aclose()
        await self.manager.aclose()
        await self.client.aclose()


@pytest.fixture
def agents(fake_llm: FakeLLM) -> Agents:
    routes = Agents()
    fake_llm.set_responder(routes)
    return routes


def external_commit_script(tmp_path: Path) -> Path:
    """The fake ACP agent's one prompt: write ext.txt and commit it through xum's terminal."""
    commit = "echo ext > ext.txt && git add ext.txt && git commit -qm 'external: ext.txt'"
    steps: list[dict[str, Any]] = [
        {"terminal": {"command": "sh", "args": ["-c", commit], "id": "t1"}},
        {"message": "EXT: committed ext.txt"},
    ]
    return write_script(tmp_path / "ext.json", [steps])


async def test_best_of_n_across_xum_and_an_external_agent(
    fake_llm: FakeLLM, agents: Agents, repo: Path, tmp_path: Path
) -> None:
    configure(external_commit_script(tmp_path))
    agents.add(
        "ROLE:parent",
        fakellm.reply(
            call("task", agents=["exec", "fake"], title="Fixer", prompt="ROLE:child: fix it")
        ),
        fakellm.text("compared both"),
    )
    agents.add(
        "ROLE:child",
        fakellm.reply(bash("echo xum > xum.txt && git add xum.txt && git commit -qm 'xum'")),
        fakellm.text("XUM: committed xum.txt"),
    )
    head = git(repo, "rev-parse", "HEAD")
    parent = Parent(fake_llm, repo)
    try:
        result = await parent.session.run_turn("ROLE:parent: best of two agents")
        assert result.reason == "completed", result
        assert result.text == "compared both"
        (task_result,) = parent.results("task")
        assert not task_result["is_error"], task_result["output"]
        metas = task_result["meta"]["tasks"]
        assert [m["title"] for m in metas] == ["Fixer (1/2, exec)", "Fixer (2/2, fake)"]
        assert [m["status"] for m in metas] == ["reported", "reported"]
        assert len({m["group"] for m in metas}) == 1 and metas[0]["group"]
        assert "XUM: committed xum.txt" in task_result["output"]
        assert "EXT: committed ext.txt" in task_result["output"]

        records = {r.id: r for r in registry.list_workspaces() if r.parent_id == PARENT_ID}
        xum_id, ext_id = (m["task_id"] for m in metas)
        assert records[xum_id].external_agent is None
        assert records[ext_id].external_agent == "fake"
        # Each child works in a worktree of its own, branched from the parent's HEAD.
        ext_path = Path(records[ext_id].path)
        assert records[ext_id].runtime == "worktree" and ext_path != repo
        assert (ext_path / "ext.txt").read_text() == "ext\n"
        assert not (repo / "ext.txt").exists() and not (ext_path / "xum.txt").exists()
        assert git(repo, "rev-parse", "HEAD") == head

        # The external child's commit is a patch like the xum child's: listed, then applied.
        dry = await parent.host.apply_patch(
            ext_id, dry_run=True, expected_head_sha=None, three_way=False, force=False
        )
        assert dry.ok, dry.message
        assert "external: ext.txt" in dry.message + str(dry.meta)
        applied = await parent.host.apply_patch(
            ext_id, dry_run=False, expected_head_sha=head, three_way=False, force=False
        )
        assert applied.ok, applied.message
        assert git(repo, "log", "-1", "--format=%s") == "external: ext.txt"
        assert (repo / "ext.txt").read_text() == "ext\n"
    finally:
        await parent.close()
    assert not fake_llm.errors


async def test_an_external_child_with_isolation_none_works_in_the_parents_checkout(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    steps: list[dict[str, Any]] = [{"message": "looked around"}]
    configure(write_script(tmp_path / "s.json", [steps]))
    parent = Parent(fake_llm, repo)
    try:
        (task_id,) = await parent.host.spawn(TaskSpec("fake", "Looker", "look", isolation="none"))
        await until(lambda: not parent.host.view(task_id).active, timeout=60)
        view = parent.host.view(task_id)
        assert view.status == "reported" and view.result == "looked around"
        assert view.agent_id == "fake" and view.path == str(repo)
    finally:
        await parent.close()


async def test_refusals_are_clear_and_create_nothing(
    fake_llm: FakeLLM, agents: Agents, repo: Path, tmp_path: Path
) -> None:
    configure(write_script(tmp_path / "s.json", [[{"message": "hi"}]]))
    agents.add(
        "ROLE:parent",
        fakellm.reply(call("task", agents=["exec", "fake"], n=2, title="T", prompt="p")),
        fakellm.reply(call("task", agentId="exec", agents=["exec", "fake"], title="T", prompt="p")),
        fakellm.text("gave up"),
    )
    parent = Parent(fake_llm, repo)
    try:
        with pytest.raises(SubAgentError) as unknown:
            await parent.host.spawn(TaskSpec("nosuch", "T", "p", n=2, agents=("exec", "nosuch")))
        message = str(unknown.value)
        assert "nosuch" in message and "exec" in message and "fake (external)" in message
        with pytest.raises(SubAgentError) as model:
            await parent.host.spawn(TaskSpec("fake", "T", "p", model="anthropic:claude-x"))
        assert "model" in str(model.value) and "external agent 'fake'" in str(model.value)
        with pytest.raises(SubAgentError) as thinking:
            await parent.host.spawn(
                TaskSpec("x", "T", "p", n=2, agents=("exec", "fake"), thinking="high")
            )
        assert "thinking" in str(thinking.value)

        await parent.session.run_turn("ROLE:parent: try")
        both_n, both_id = parent.results("task")
        assert both_n["is_error"] and "either n or agents" in both_n["output"]
        assert both_id["is_error"] and "either agentId or agents" in both_id["output"]
    finally:
        await parent.close()
    assert not [r for r in registry.list_workspaces() if r.parent_id == PARENT_ID]


async def test_stopping_an_external_child_cancels_its_prompt(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    steps: list[dict[str, Any]] = [{"message": "working"}, {"waitCancel": True}]
    configure(write_script(tmp_path / "s.json", [steps]))
    parent = Parent(fake_llm, repo)
    try:
        (task_id,) = await parent.host.spawn(TaskSpec("fake", "Waiter", "wait"))
        await until(lambda: parent.host.view(task_id).status == "running", timeout=60)
        (view,) = await parent.host.stop([task_id])
        assert view.status == "interrupted"
        assert view.header is not None and view.header["end_reason"] == "interrupted"
    finally:
        await parent.close()


async def test_a_crashing_external_child_fails_with_the_reason(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    configure(write_script(tmp_path / "s.json", [[{"crash": 3}]]))
    parent = Parent(fake_llm, repo)
    try:
        (task_id,) = await parent.host.spawn(TaskSpec("fake", "Crasher", "go"))
        await until(lambda: not parent.host.view(task_id).active, timeout=60)
        view = parent.host.view(task_id)
        assert view.status == "failed"
        assert view.header is not None and view.header["end_reason"] == "error"
        assert view.header["error"]
    finally:
        await parent.close()
