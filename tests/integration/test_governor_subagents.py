"""The governor's cap on running sub-agents: across the process, beside each parent's own cap
(`tasks.maxRunningChildren`). A real manager and parent session, children in real worktrees,
answered by the fake LLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.engine import engine_session
from tests.support.subagents import Agents, bash, until
from xum.engine import events as E
from xum.engine.agent import SessionSettings, WorkspaceInfo
from xum.engine.route import resolve_route
from xum.host.governor import Governor
from xum.host.governor_config import GovernorSettings
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.runtime.local import LocalRuntime
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tools.tasking import TASK_TOOL_NAMES, TaskSpec
from xum.workspaces.assembly import subagent_manager
from xum.workspaces.subagents.manager import TaskSettings

pytestmark = pytest.mark.repo(
    name="project", files={"README.md": "hello\n"}, message="initial", identity=True
)


async def test_the_process_cap_on_sub_agents_queues_the_rest_and_says_why(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    agents = Agents()
    fake_llm.set_responder(agents)
    release = tmp_path / "release"
    for key in ("ROLE:one", "ROLE:two"):
        held = f"while [ ! -e {release} ]; do sleep 0.01; done"
        agents.add(key, fakellm.reply(bash(held)), fakellm.text(f"{key} done"))

    governor = Governor(GovernorSettings(max_subagents=1))
    told: list[E.Event] = []
    gate = governor.gate_for("parentws01", told.append)
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}
    route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
    client = open_client(route.endpoint, retry=RetryPolicy(max_retries=0))
    # The parent's own cap would let both run: only the governor holds the second back.
    manager = subagent_manager(settings=TaskSettings(max_running=4), gate=gate)
    info = WorkspaceInfo("parentws01", "parent", str(repo), str(repo), "local")
    runtime = LocalRuntime(str(repo), str(repo.parent))
    host = manager.host_for(info, runtime=runtime, route=route, client=client, thinking="medium")
    session = engine_session(
        repo,
        route,
        client,
        ws_id=info.id,
        name=info.name,
        runtime=runtime,
        settings=SessionSettings(system_prompt="parent", tools=["bash", *TASK_TOOL_NAMES]),
        scratch_dir=tmp_path / "scratch",
        events=[],
        subagents=host,
    )
    try:
        (first,) = await host.spawn(TaskSpec("exec", "One", "ROLE:one"))
        (second,) = await host.spawn(TaskSpec("exec", "Two", "ROLE:two"))
        await until(lambda: host.view(first).status == "running")
        await until(lambda: any(isinstance(e, E.GovernorWait) for e in told))
        assert host.view(second).status == "queued"
        wait = next(e for e in told if isinstance(e, E.GovernorWait))
        assert wait.reason == "subagents"
        assert "governor.maxConcurrentSubagents = 1" in wait.message
        release.touch()
        await until(lambda: not host.view(second).active)
        assert host.view(first).status == host.view(second).status == "reported"
        assert governor.subagents.active == 0
    finally:
        release.touch()
        await session.aclose()
        await manager.aclose()
        await client.aclose()
