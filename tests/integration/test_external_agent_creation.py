"""Creating a workspace whose agent is external, below every front-end
(`lifecycle.create_workspace`): an unknown name is refused before anything is made (every
runtime runs one); the host refuses model, thinking and agent changes for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.external_agents import configure, write_script
from tests.support.host_recorder import HostRecorder
from xum.core.errors import UsageError
from xum.host.hosts import Hosts
from xum.store import registry
from xum.workspaces.lifecycle import create_workspace


async def test_an_unknown_name_is_refused_before_anything_is_made(
    repo: Path, tmp_path: Path
) -> None:
    configure(write_script(tmp_path / "s.json", []))
    with pytest.raises(UsageError) as caught:
        await create_workspace(repo, "local", name_hint="x", external_agent="nope")
    assert "configured: fake" in caught.value.message
    assert registry.list_workspaces() == []


async def test_a_local_workspace_keeps_its_external_agent(repo: Path, tmp_path: Path) -> None:
    configure(write_script(tmp_path / "s.json", []))
    created = await create_workspace(repo, "local", name_hint="x", external_agent="fake")
    try:
        assert created.record.external_agent == "fake"
        stored = registry.get_workspace(created.record.id)
        assert stored is not None and stored.external_agent == "fake"
    finally:
        await created.runtime.close()
        if created.init is not None:
            created.init.cancel()


async def test_engine_settings_are_refused_by_the_host(repo: Path, tmp_path: Path) -> None:
    configure(write_script(tmp_path / "s.json", []))
    hosts = Hosts(HostRecorder())
    try:
        record = await hosts.create(repo, "local", name_hint="x", external_agent="fake")
        for change in ({"model": "anthropic:claude-sonnet-5-5"}, {"thinking": "high"}):
            with pytest.raises(UsageError, match='external agent "fake"'):
                await hosts.change_settings(record.id, **change)
        with pytest.raises(UsageError, match="agent: not available"):
            await hosts.configure(record.id, agent="plan")
        changed = await hosts.change_settings(record.id, permissions="ask", title="t")
        assert changed.permissions == "ask" and changed.model is None
    finally:
        await hosts.shutdown()
