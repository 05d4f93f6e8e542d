"""`Hosts.configure`: a new model, thinking level or agent reaches the open session for its next
turn, without closing or reopening it; the registry keeps the change. A real workspace in a real
git repository, the fake LLM server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from xum.host.hosts import Hosts
from xum.host.listener import NullListener
from xum.store import registry
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

MODEL = "anthropic:claude-sonnet-5-5"
HAIKU = "anthropic:claude-haiku-5-5"


async def _settled(hosts: Hosts, workspace_id: str) -> None:
    host = hosts.get(workspace_id)
    assert host is not None and host.task is not None
    await asyncio.wait_for(asyncio.shield(host.task), 60)


async def test_configure_changes_the_open_session_for_its_next_turn(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    fake_llm.set_default(fakellm.text("ok"))
    hosts = Hosts(NullListener())
    try:
        record = await hosts.create(
            make_repo(tmp_path / "project"), "local", name_hint="cfg", model=MODEL
        )
        await hosts.send(record, "first")
        await _settled(hosts, record.id)
        host = hosts.get(record.id)
        assert host is not None
        parts = host.session
        changed = await hosts.configure(record.id, model=HAIKU, agent="plan")
        assert changed.model == HAIKU and changed.agent == "plan"
        stored = registry.get_workspace(record.id)
        assert stored is not None and stored.model == HAIKU
        assert hosts.get(record.id) is host and host.session is parts  # not reopened
        await hosts.send(changed, "second")
        await _settled(hosts, record.id)
        models = [r.json["model"] for r in fake_llm.requests]
        assert models[0] == "claude-sonnet-5-5" and len(models) > 1
        assert set(models[1:]) == {"claude-haiku-5-5"}
        assert host.session is parts
        assert host.session.agent.context.selection.agent_id == "plan"
    finally:
        await hosts.shutdown()
