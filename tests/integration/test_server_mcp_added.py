"""Through the server's API, the way the browser does it: a workspace that already talked to the
model gets an MCP server from Settings → MCP, and its very next message can call the server's
tool (the docs promise "changes apply on the next message")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.integration.server_support import (
    AUTH,
    create_workspace,
    idle,
    server_client,
    use_fake_llm,
    wait_for,
)
from tests.mcp.support import server_command
from xum.engine import events as E
from xum.engine.derive import replay_events
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def turns_ended(workspace_id: str) -> int:
    try:
        frames = SessionLog.open(workspace_id).frames
    except OSError:
        return 0
    return sum(1 for e in replay_events(frames) if e.type == "turn-end")


def test_a_server_added_in_settings_serves_the_next_message(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        ws = create_workspace(client, repo)
        wid = ws["id"]
        fake_llm.script(fakellm.text("hello"))
        client.post(f"/api/workspaces/{wid}/messages", json={"text": "first"}, headers=AUTH)
        wait_for(lambda: turns_ended(wid) == 1 and idle(client, wid), timeout=30)

        body = {"name": "t", "command": server_command(), "env": {"MCP_TEST_TOOLS": "echo"}}
        assert client.put("/api/settings/mcp/servers", json=body, headers=AUTH).status_code == 200
        off = {"enabled": False}
        assert (
            client.put("/api/settings/mcp/tool-search", json=off, headers=AUTH).status_code == 200
        )

        fake_llm.script(
            fakellm.tool_call("mcp__t__echo", {"text": "from settings"}), fakellm.text("done")
        )
        client.post(f"/api/workspaces/{wid}/messages", json={"text": "second"}, headers=AUTH)
        wait_for(lambda: turns_ended(wid) == 2 and idle(client, wid), timeout=60)

    first, second, _ = fake_llm.requests
    assert not any(t["name"].startswith("mcp__") for t in first.json["tools"])
    assert "mcp__t__echo" in [t["name"] for t in second.json["tools"]]
    results = [e for e in replay_events(SessionLog.open(wid).frames) if isinstance(e, E.ToolResult)]
    assert [(r.output, r.is_error) for r in results] == [("from settings", False)]
