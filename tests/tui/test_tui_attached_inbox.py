"""The terminal UI's inbox while attached to a running `xum server` (a real subprocess on its
own root): Ctrl+L lists the server's inbox, followed live over its WebSocket; `y` and `x` answer
through the server's inbox routes, so the item leaves the server's list (and every client's);
Ctrl+F opens the workspace something waits in on the server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tui.support import on_screen, start_app, until
from xum.host.server_target import attach_target
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import XumServer, make_repo, start_server
from xum.tui.app import XumApp
from xum.tui.attached import AttachedRunner
from xum.tui.attached_actions import attach_to
from xum.tui.inbox import InboxScreen

TOKEN = "tui-inbox-test-token"


@pytest.fixture
def server(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[XumServer]:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    running = start_server(tmp_path / "srv", TOKEN, env, repo=make_repo(tmp_path / "repo"))
    try:
        yield running
    finally:
        running.stop()


def attached_app(monkeypatch: pytest.MonkeyPatch, server: XumServer) -> XumApp:
    """The UI on the server's root, attached to it, with the draft row on screen (so it reads
    no workspace itself)."""
    monkeypatch.setenv("XUM_ROOT", str(server.root))
    monkeypatch.setenv("HOME", str(server.home))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    target = attach_target(None, None, env={})
    assert target is not None
    return XumApp(server.repo, attach=attach_to(target))


def server_items(server: XumServer) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = server.api("GET", "/api/inbox")["items"]
    return items


def force_push(server: XumServer, fake_llm: FakeLLM, marker: Path) -> dict[str, Any]:
    """A workspace whose server turn waits for an approval (a force push is critical)."""
    script = f"git push --force nowhere main 2>/dev/null; touch {marker}"
    fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "push"}))
    fake_llm.set_default(fakellm.text("done"))
    ws: dict[str, Any] = server.create_workspace("shared", runtime="local")
    server.api("POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "push it"})
    return ws


async def test_the_servers_inbox_is_listed_and_answered_here(
    fake_llm: FakeLLM, server: XumServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "pushed.marker"
    app = attached_app(monkeypatch, server)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        assert isinstance(app.runner, AttachedRunner)
        inbox = app.runner.remote.inbox
        await until(pilot, lambda: inbox.snapshots >= 1, "the server's inbox followed")
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen), "the inbox")
        await on_screen(pilot, "Nothing waits for you.")

        # The server's turn asks while the list is open: it arrives live.
        ws = force_push(server, fake_llm, marker)
        await on_screen(pilot, "approve bash: git push --force")
        (item,) = server_items(server)
        assert item["kind"] == "approval" and item["workspaceId"] == ws["id"]
        await pilot.press("y")  # approved once, through POST /api/inbox/{id}/approve
        server.wait_idle(ws["id"])
        assert marker.exists()

        # The turn ended with nobody reading it: a notice, which `x` takes off the list.
        await until(
            pilot, lambda: [i.kind for i in inbox.items()] == ["turn-ended"], "the turn's notice"
        )
        await on_screen(pilot, "the turn is done")
        await pilot.press("x")
        await until(pilot, lambda: not inbox.items(), "the notice dismissed")
        assert server_items(server) == []
        await on_screen(pilot, "Nothing waits for you.")


async def test_ctrl_f_opens_the_servers_waiting_workspace(
    fake_llm: FakeLLM, server: XumServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = force_push(server, fake_llm, tmp_path / "pushed.marker")
    app = attached_app(monkeypatch, server)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        assert isinstance(app.runner, AttachedRunner)
        inbox = app.runner.remote.inbox
        await until(pilot, lambda: len(inbox.items()) == 1, "the server's approval listed")
        assert app.selected is None
        await pilot.press("ctrl+f")
        await until(
            pilot, lambda: app.selected is not None and app.selected.id == ws["id"], "opened"
        )
        # Its approval is answered in the workspace's own panel, as any server request is.
        await until(pilot, lambda: app.query("ApprovalPanel Input:focus"), "the request")
        await pilot.press("ctrl+y")
        server.wait_idle(ws["id"])
        await until(pilot, lambda: not inbox.items(), "the approval gone from the list")
