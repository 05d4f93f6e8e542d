"""A scratch chat from the terminal UI attached to a running `xum server` (a real subprocess):
Ctrl+Shift+N's draft makes the chat on the server with its first message (`POST /api/chats`),
and the server's chats are listed beside the project's workspaces."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.support import notified, on_screen, send, start_app, until
from xum.host.server_target import ServerTarget
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import XumServer, make_repo, start_server
from xum.tui.app import XumApp
from xum.tui.attached_actions import attach_to

TOKEN = "tui-attached-scratch-token"


@pytest.fixture
def server(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[XumServer]:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    running = start_server(tmp_path / "srv", TOKEN, env, repo=make_repo(tmp_path / "repo"))
    try:
        yield running
    finally:
        running.stop()


async def test_an_attached_ui_makes_and_lists_scratch_chats(
    fake_llm: FakeLLM, server: XumServer
) -> None:
    fake_llm.set_default(fakellm.text("a chat answer"))
    elsewhere = server.api("POST", "/api/chats", json={"title": "from the browser"})
    app = XumApp(server.repo, attach=attach_to(ServerTarget(server.url, TOKEN)))
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await until(pilot, lambda: elsewhere["id"] in app.runner.workspaces, "the listed chat")
        await pilot.press("ctrl+shift+n")
        await on_screen(pilot, "new scratch chat")
        await send(pilot, "hello from the terminal")
        await on_screen(pilot, "a chat answer")
        chat = app.selected
        assert chat is not None and chat.id != elsewhere["id"]
        made = server.api("GET", f"/api/workspaces/{chat.id}")
        assert made["scratch"] is True
        assert made["path"] == str(server.root / "chats" / chat.id)


async def test_an_attached_ui_shows_the_servers_notifications(
    fake_llm: FakeLLM, server: XumServer
) -> None:
    ws = server.create_workspace("notifying", runtime="local")
    fake_llm.script(
        fakellm.tool_call("notify", {"title": "Server says", "message": "deploy finished"}),
        fakellm.text("Done."),
    )
    target = ServerTarget(server.url, TOKEN)
    app = XumApp(server.repo, workspace=ws["id"], attach=attach_to(target))
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        # Followed: the server has the UI's notifications-subscribe (sent before any subscribe).
        await until(pilot, lambda: app.selected is not None and app.selected.loaded, "followed")
        # Sent by another client of the server: the notice still reaches this UI.
        server.api("POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "deploy"})
        await until(
            pilot, lambda: notified(app, "notifying: deploy finished"), "the notification's toast"
        )
