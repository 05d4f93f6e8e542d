"""The terminal UI's new-workspace dialog and the Docker runtime: the choice (with its image
field and "Share credentials") appears when a container engine answers and is absent when none
does; a Docker workspace made from it runs its turn's commands in the container."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Checkbox, RadioButton

from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.tui.support import model_app, on_screen, send, start_app, type_text, until
from xum.host.server_target import ServerTarget
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import make_repo, start_server
from xum.tui.app import XumApp
from xum.tui.attached_actions import attach_to
from xum.tui.dialogs import NewWorkspaceDialog
from xum.workspaces import lifecycle


async def test_no_container_engine_leaves_the_docker_choice_out(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XUM_CONTAINER_CLI", str(tmp_path / "no-such-cli"))
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("ctrl+n")
        await on_screen(pilot, "New workspace")
        dialog = app.screen
        assert isinstance(dialog, NewWorkspaceDialog)
        # The probe has answered (its worker is done) and offered nothing.
        await until(pilot, lambda: not dialog.workers, "the engine probe")
        assert [b.id for b in dialog.query(RadioButton)] == ["local", "worktree", "ssh", "scratch"]
        assert not dialog.query_one("#image").display
        assert not dialog.query_one("#share", Checkbox).display
        await on_screen(pilot, "docker: not offered (no container engine answers here)")


@pytest.mark.slow
async def test_create_a_docker_workspace_from_the_dialog_and_run_a_turn_in_it(
    fake_llm: FakeLLM,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    container_engine: Engine,  # noqa: F811
) -> None:
    fake_llm.script(
        fakellm.tool_call(
            "bash", {"script": ". /etc/os-release; echo id=$ID; pwd", "display_name": "where"}
        ),
        fakellm.text("ran in the container"),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("ctrl+n")
        await on_screen(pilot, "New workspace")
        await until(pilot, lambda: app.screen.query("#docker"), "the Docker choice")
        await on_screen(pilot, f"docker: in a container ({container_engine.cli}")
        await pilot.press("down", "down", "down", "down", "enter")  # the runtime list: docker, last
        assert app.screen.query_one("#docker", RadioButton).value
        await pilot.click("#share")
        await pilot.click("#image")
        await type_text(pilot, container_engine.image)
        await pilot.press("enter")
        await until(pilot, lambda: app.selected is not None, "the Docker workspace")
        ws = app.selected
        assert ws is not None
        record = ws.record
        assert record.runtime == "docker"
        assert record.extra["container_image"] == container_engine.image
        assert record.extra["container_credentials"] is True
        await send(pilot, "where are you")
        await until(pilot, lambda: not ws.running and len(fake_llm.requests) == 2, "the turn")
        await on_screen(pilot, "ran in the container")
        tool = next(e for e in ws.transcript.entries if e.__class__.__name__ == "ToolEntry")
        output = tool.output  # type: ignore[attr-defined]
        assert "id=xum-test" in output and "/src" in output
    await lifecycle.delete_workspace(record.id, force=True)
    assert container_engine.state(record.extra["container"]) is None


@pytest.mark.slow
async def test_attached_to_a_server_the_dialog_offers_its_engine_and_shares_credentials(
    fake_llm: FakeLLM,
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    token = "tui-docker-token"
    server = start_server(
        tmp_path / "srv", token, {**env, **container_engine.env}, repo=make_repo(tmp_path / "repo")
    )
    try:
        # What "Share credentials" copies in: the server's ~/.gitconfig (its HOME is its own).
        (server.home / ".gitconfig").write_text("[user]\n\tname = Shared Over The API\n")
        app = XumApp(server.repo, attach=attach_to(ServerTarget(server.url, token)))
        async with app.run_test(size=(110, 40)) as pilot:
            await start_app(pilot)
            await pilot.press("ctrl+n")
            await on_screen(pilot, "New workspace")
            await until(pilot, lambda: app.screen.query("#docker"), "the server's engine")
            # Laid out and shown before it is clicked, and its fields shown before theirs are.
            await on_screen(pilot, f"docker: in a container ({container_engine.cli}")
            await pilot.click("#docker")
            await until(pilot, lambda: app.screen.query_one("#share").display, "its fields")
            await pilot.click("#share")
            await pilot.click("#image")
            await type_text(pilot, container_engine.image)
            await pilot.press("enter")
            await until(pilot, lambda: app.selected is not None, "the Docker workspace")
            ws = app.selected
            assert ws is not None
        made = server.api("GET", f"/api/workspaces/{ws.id}")
        assert made["runtime"] == {
            "type": "docker", "host": None, "image": container_engine.image
        }  # fmt: skip
        shared = container_engine.run("exec", f"xum-{ws.id}", "cat", "/root/.gitconfig")
        assert "Shared Over The API" in shared.stdout, shared.stderr
        server.api("DELETE", f"/api/workspaces/{ws.id}", params={"force": "true"})
    finally:
        server.stop()
