"""What a one-shot front-end (`xum run`) asks of the host beyond a message: open a workspace with
settings of its own (model, agent) in place of the record's, see each turn's result before the
goal decides what follows (and keep a goal from continuing), and wait for the drive to end."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from xum.engine.records import TurnResult
from xum.engine.route import resolve_route
from xum.host.hosts import Hosts
from xum.host.listener import NullListener
from xum.host.workspace_host import OpenSettings
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

MODEL = "anthropic:claude-sonnet-5-5"


def _env(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)


async def test_open_settings_replace_the_records_model_and_agent(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _env(fake_llm, monkeypatch)
    fake_llm.script(fakellm.text("planned"))
    hosts = Hosts(NullListener())
    seen: list[TurnResult] = []

    async def turn_ended(result: TurnResult) -> bool:
        seen.append(result)
        return True

    try:
        record = await hosts.create(repo, "local", name_hint="settings", model=MODEL)
        route = resolve_route("anthropic:claude-opus-5-5")
        # `explore`, not `plan`: plan mode adds a forced step when the reply lacks `propose_plan`,
        # which this script does not answer (the retries of that step cost ~15 s).
        settings = OpenSettings(route=route, thinking="off", agent="explore", budget_usd=5.0)
        host = await hosts.open(record, settings=settings)
        assert await hosts.open(record) is host  # an open host is reused
        host.turn_ended = turn_ended
        assert await hosts.send(record, "look around") == "started"
        await asyncio.wait_for(host.wait_done(), 60)
        assert len(fake_llm.requests) == 1
        assert fake_llm.requests[0].json["model"] == "claude-opus-5-5"
        assert [r.agent for r in seen] == ["explore"] and seen[0].text == "planned"
        assert host.decision is not None and host.decision.kind == "none"
    finally:
        await hosts.shutdown()


async def test_a_turn_hook_can_keep_a_goal_from_continuing(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _env(fake_llm, monkeypatch)
    fake_llm.script(fakellm.text("Looking."), fakellm.text("Working."))
    hosts = Hosts(NullListener())
    calls: list[str] = []

    async def stop_here(result: TurnResult) -> bool:
        calls.append(result.reason)
        return False

    try:
        record = await hosts.create(repo, "local", name_hint="goal", model=MODEL)
        host = await hosts.open(record)
        host.turn_ended = stop_here
        await hosts.send(record, "/goal --turns 5 tidy the module")
        await asyncio.wait_for(host.wait_done(), 60)
        # Without the hook's veto the goal would go on (tests/integration/test_host.py).
        assert calls == ["completed"] and len(fake_llm.requests) == 1
        assert host.decision is None
        goal = host.session.agent.goals.current
        assert goal is not None and goal.live  # left for whoever continues the workspace
    finally:
        await hosts.shutdown()
