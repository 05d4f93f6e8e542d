"""A terminal UI running its own sessions, and a `xum server` started on the same root after it
(the UI attaches only when it starts): a turn the server runs shows as working here, followed
from its log, and a message to it says to start the UI again to attach, instead of a second
writer or a silent queue."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import held_command, on_screen, send, start_app, until
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import make_repo, start_server
from xum.tui.app import XumApp

TOKEN = "tui-server-later-token"


async def test_a_message_to_the_servers_turn_says_to_attach(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    server = start_server(tmp_path / "srv", TOKEN, env, repo=make_repo(tmp_path / "repo"))
    try:
        script, started, release = held_command(tmp_path, "held")
        fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "held"}))
        fake_llm.set_default(fakellm.text("done"))
        ws = server.create_workspace("shared", runtime="local")
        server.api("POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "start"})
        monkeypatch.setenv("XUM_ROOT", str(server.root))
        monkeypatch.setenv("HOME", str(server.home))
        app = XumApp(server.repo, workspace=ws["id"])  # not attached: its own sessions
        async with app.run_test(size=(110, 40)) as pilot:
            await start_app(pilot)
            await until(pilot, started.exists, "the server's command to start")
            selected = app.selected
            assert selected is not None
            await until(pilot, lambda: selected.busy_elsewhere, "the turn elsewhere")
            assert selected.status == "working"
            await send(pilot, "also this")
            await on_screen(pilot, "xum server is running a turn in this workspace")
            await on_screen(pilot, "attaches to the running server")
            release.touch()
        server.wait_idle(ws["id"])
        # Nothing of the refused message reached the server's session.
        assert all("also this" not in str(r.json) for r in fake_llm.requests)
    finally:
        server.stop()
