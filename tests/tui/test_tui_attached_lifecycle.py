"""The terminal UI attached to a running `xum server` (a real subprocess): what it does to
workspaces goes through the server's API (fork, rename, archive, unarchive, delete with the
server's preview, settings, the review view, the `/` menu), and a workspace another client of
the server creates shows in the list without a poll."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tui.support import notified, on_screen, screen_text, start_app, type_text, until
from xum.host.server_target import ServerTarget
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import XumServer, make_repo, start_server
from xum.tui.app import XumApp
from xum.tui.attached_actions import attach_to

TOKEN = "tui-attached-lifecycle-token"
MODEL = "anthropic:claude-sonnet-5-5"


@pytest.fixture
def server(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[XumServer]:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    running = start_server(tmp_path / "srv", TOKEN, env, repo=make_repo(tmp_path / "repo"))
    try:
        yield running
    finally:
        running.stop()


def attached(server: XumServer, workspace: str | None = None) -> XumApp:
    """The UI attached by URL and token (as `--server-url` and `--auth-token` give them)."""
    target = ServerTarget(server.url, TOKEN)
    return XumApp(server.repo, workspace=workspace, attach=attach_to(target))


def record(server: XumServer, workspace_id: str) -> dict[str, Any]:
    found: dict[str, Any] = server.api("GET", f"/api/workspaces/{workspace_id}")
    return found


async def test_a_workspace_another_client_creates_shows_in_the_list(
    server: XumServer,
) -> None:
    app = attached(server)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        ws = server.create_workspace("from-the-browser", runtime="local")
        await until(pilot, lambda: ws["id"] in app.runner.workspaces, "the new workspace")
        await on_screen(pilot, "from-the-browser")


async def test_settings_and_lifecycle_go_through_the_server(
    fake_llm: FakeLLM, server: XumServer
) -> None:
    fake_llm.set_default(fakellm.text("hello back"))
    ws = server.create_workspace("shared", runtime="local")
    app = attached(server, ws["id"])
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        selected = app.selected
        assert selected is not None and selected.id == ws["id"]
        # Settings: the server validates and stores them.
        assert await app.actions.set_model(selected, "sonnet")
        assert record(server, ws["id"])["model"] == MODEL
        assert not await app.actions.set_model(selected, "nosuchalias")
        await until(pilot, lambda: notified(app, "nosuchalias"), "the refusal")
        assert record(server, ws["id"])["model"] == MODEL
        await pilot.press("f4")
        await until(pilot, lambda: record(server, ws["id"])["agent"] == "plan", "Plan")
        await pilot.press("f6")
        await until(pilot, lambda: record(server, ws["id"])["permissions"] == "ask", "ask")
        # The `/` menu is the server's list for the workspace.
        suggestions = await app.actions.slash_suggestions(selected)
        assert {"/compact ", "/model ", "/fork "} <= {s.insert for s in suggestions}
        # The review view reads git where the server's checkout is.
        (server.repo / "app.py").write_text("def greet():\n    return 'hello'\n")
        await pilot.press("ctrl+r")
        await on_screen(pilot, "1 files changed")
        await pilot.press("escape")
        # Rename, archive, unarchive.
        await pilot.press("ctrl+b", "r")
        await on_screen(pilot, "Rename workspace")
        await pilot.press("ctrl+a", "ctrl+k")
        await type_text(pilot, "renamed")
        await pilot.press("enter")
        await until(pilot, lambda: record(server, ws["id"])["name"] == "renamed", "the rename")
        await on_screen(pilot, "renamed")
        await pilot.press("ctrl+b", "a")
        await until(pilot, lambda: record(server, ws["id"])["archivedAt"], "the archive")
        await until(pilot, lambda: app.selected is None, "the row to go")
        await pilot.press("ctrl+b", "u")
        await on_screen(pilot, "Unarchive")
        await pilot.press("enter")
        await until(pilot, lambda: not record(server, ws["id"])["archivedAt"], "the unarchive")
        await until(pilot, lambda: app.selected is not None, "it selected again")
        # Fork (its conversation comes along), then delete the fork after the preview.
        await pilot.press("ctrl+b", "f")
        await until(pilot, lambda: app.selected and app.selected.id != ws["id"], "the fork")
        fork = app.selected
        assert fork is not None and fork.record.parent_id is None
        await pilot.press("ctrl+b", "d")
        await on_screen(pilot, f"Delete {fork.record.name}?")
        text = screen_text(app)
        assert "the registry entry" in text and "Keeps:" in text  # the server's preview
        await pilot.click("#delete")
        await until(pilot, lambda: fork.id not in app.runner.workspaces, "the fork deleted")
        listed = server.api("GET", "/api/workspaces")["workspaces"]
        assert [w["id"] for w in listed] == [ws["id"]]


async def test_a_workspace_made_from_the_dialog_is_the_servers(server: XumServer) -> None:
    app = attached(server)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("ctrl+n")
        await on_screen(pilot, "New workspace")
        await pilot.press("down", "enter")  # the runtime list: worktree
        await pilot.click("#name")
        await type_text(pilot, "feature-x")
        await pilot.press("enter")
        await until(pilot, lambda: app.selected is not None, "the new workspace")
        ws = app.selected
        assert ws is not None
        made = record(server, ws.id)
        assert made["name"] == "feature-x" and made["runtime"]["type"] == "worktree"
        assert Path(made["path"]).is_dir() and made["path"] != str(server.repo)
        await on_screen(pilot, "feature-x worktree")
