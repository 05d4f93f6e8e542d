"""`Hosts.open`, `Hosts.configure` and `Hosts.change_settings` in process: a host opened before
its first message holds no writer lock, and a model, thinking or agent change switches the open
session for the next turn (stored on the workspace too) without reopening it. A real workspace in
a real git repository, the fake LLM server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from xum.host.hosts import Hosts
from xum.host.listener import NullListener
from xum.store import registry
from xum.store import sessions as session_files
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)

SONNET = "anthropic:claude-sonnet-5-5"
HAIKU = "anthropic:claude-haiku-5-5"


@pytest.fixture
async def hosts(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Hosts]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    fake_llm.set_default(fakellm.text("ok"))
    hosts = Hosts(NullListener())
    try:
        yield hosts
    finally:
        await hosts.shutdown()


async def settled(hosts: Hosts, workspace_id: str) -> None:
    """Until the workspace's drive (its turn and what follows it) has ended."""
    host = hosts.get(workspace_id)
    assert host is not None and host.task is not None
    await asyncio.wait_for(asyncio.shield(host.task), 60)


async def test_configure_switches_the_open_session_for_its_next_turn(
    hosts: Hosts, fake_llm: FakeLLM, repo: Path
) -> None:
    record = await hosts.create(repo, "local", name_hint="host", model=SONNET)
    host = await hosts.open(record)
    assert await hosts.open(record) is host  # opened once
    assert not session_files.is_busy(record.id)  # no turn, no writer lock
    opened = host.session

    changed = await hosts.configure(record.id, model=HAIKU, thinking="off")
    assert changed.model == HAIKU and changed.thinking == "off"
    stored = registry.get_workspace(record.id)
    assert stored is not None and stored.model == HAIKU

    await hosts.send(changed, "hi")
    await settled(hosts, record.id)
    request = fake_llm.requests[-1].json
    assert request["model"] == "claude-haiku-5-5"
    assert request["thinking"] == {"type": "disabled"}
    assert hosts.get(record.id) is host and host.session is opened


async def test_configure_changes_model_and_agent_after_a_turn(
    hosts: Hosts, fake_llm: FakeLLM, repo: Path
) -> None:
    record = await hosts.create(repo, "local", name_hint="cfg", model=SONNET)
    await hosts.send(record, "first")
    await settled(hosts, record.id)
    host = hosts.get(record.id)
    assert host is not None
    parts = host.session
    changed = await hosts.configure(record.id, model=HAIKU, agent="plan")
    assert changed.model == HAIKU and changed.agent == "plan"
    stored = registry.get_workspace(record.id)
    assert stored is not None and stored.model == HAIKU
    assert hosts.get(record.id) is host and host.session is parts  # not reopened
    await hosts.send(changed, "second")
    await settled(hosts, record.id)
    models = [r.json["model"] for r in fake_llm.requests]
    assert models[0] == "claude-sonnet-5-5" and len(models) > 1
    assert set(models[1:]) == {"claude-haiku-5-5"}
    assert host.session is parts
    assert host.session.agent.context.selection.agent_id == "plan"


async def test_a_settings_change_from_the_server_switches_without_reopening(
    hosts: Hosts, fake_llm: FakeLLM, repo: Path
) -> None:
    """`change_settings` is what `PATCH /api/workspaces/{id}` and the browser's `/model` call."""
    record = await hosts.create(repo, "local", name_hint="server", model=SONNET)
    await hosts.send(record, "first")
    await settled(hosts, record.id)
    host = hosts.get(record.id)
    assert host is not None
    opened = host.session

    changed = await hosts.change_settings(record.id, model=HAIKU)
    assert not host.stale
    await hosts.send(changed, "second")
    await settled(hosts, record.id)
    assert fake_llm.requests[-1].json["model"] == "claude-haiku-5-5"
    assert hosts.get(record.id) is host and host.session is opened
