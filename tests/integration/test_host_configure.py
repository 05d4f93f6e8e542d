"""`Hosts.open` and `Hosts.configure` in process: a host opened before its first message holds
no writer lock, and a model or thinking change switches the open session for the next turn
(stored on the workspace too) without reopening it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from xum.host.hosts import Hosts
from xum.host.listener import NullListener
from xum.store import registry
from xum.store import sessions as session_files
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)


async def test_configure_switches_the_open_session_for_its_next_turn(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    fake_llm.set_default(fakellm.text("ok"))
    hosts = Hosts(NullListener())
    try:
        record = await hosts.create(
            repo, "local", name_hint="host", model="anthropic:claude-sonnet-5-5"
        )
        host = await hosts.open(record)
        assert await hosts.open(record) is host  # opened once
        assert not session_files.is_busy(record.id)  # no turn, no writer lock
        opened = host.session

        changed = await hosts.configure(
            record.id, model="anthropic:claude-haiku-5-5", thinking="off"
        )
        assert changed.model == "anthropic:claude-haiku-5-5" and changed.thinking == "off"
        stored = registry.get_workspace(record.id)
        assert stored is not None and stored.model == "anthropic:claude-haiku-5-5"

        await hosts.send(changed, "hi")
        assert host.task is not None
        await asyncio.wait_for(asyncio.shield(host.task), 60)
        request = fake_llm.requests[-1].json
        assert request["model"] == "claude-haiku-5-5"
        assert request["thinking"] == {"type": "disabled"}
        assert hosts.get(record.id) is host and host.session is opened
    finally:
        await hosts.shutdown()


async def test_a_settings_change_from_the_server_switches_without_reopening(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`change_settings` is what `PATCH /api/workspaces/{id}` and the browser's `/model` call."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    fake_llm.set_default(fakellm.text("ok"))
    hosts = Hosts(NullListener())
    try:
        record = await hosts.create(
            repo, "local", name_hint="server", model="anthropic:claude-sonnet-5-5"
        )
        await hosts.send(record, "first")
        host = hosts.get(record.id)
        assert host is not None and host.task is not None
        await asyncio.wait_for(asyncio.shield(host.task), 60)
        opened = host.session

        changed = await hosts.change_settings(record.id, model="anthropic:claude-haiku-5-5")
        assert not host.stale
        await hosts.send(changed, "second")
        assert host.task is not None
        await asyncio.wait_for(asyncio.shield(host.task), 60)
        assert fake_llm.requests[-1].json["model"] == "claude-haiku-5-5"
        assert hosts.get(record.id) is host and host.session is opened
    finally:
        await hosts.shutdown()
