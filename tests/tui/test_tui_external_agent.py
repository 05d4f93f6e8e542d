"""The terminal UI's new-workspace dialog and external ACP agents: the agent choice appears only
when config.json defines one (read here, or by the server the UI is attached to:
`GET /api/external-agents`), a workspace made with it runs its turns with that agent (the
scripted fake, a real subprocess), and every runtime is accepted with it (a Dev Container
too)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Select

from tests.support.external_agents import configure, write_script
from tests.tui.support import (
    model_app,
    notified,
    on_screen,
    screen_text,
    send,
    start_app,
    until,
)
from xum.host.server_target import ServerTarget
from xum.testing.fake_acp_agent import SCRIPT_ENV
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import make_repo, start_server
from xum.tui.app import XumApp
from xum.tui.attached_actions import attach_to
from xum.tui.dialogs import NewWorkspaceDialog

REPLY = "Hello from the fake agent."


async def open_dialog(pilot: Pilot[None]) -> NewWorkspaceDialog:
    await pilot.press("ctrl+n")
    await on_screen(pilot, "New workspace")
    dialog = pilot.app.screen
    assert isinstance(dialog, NewWorkspaceDialog)
    await until(pilot, lambda: not dialog.workers, "the dialog's probes")
    return dialog


async def pick_agent(pilot: Pilot[None], dialog: NewWorkspaceDialog) -> None:
    """Open the agent picker and take its first external agent (after "agent: xum")."""
    picker = dialog.query_one("#agent", Select)
    assert picker.display and picker.value == Select.NULL
    await pilot.click("#agent")
    # Nothing is highlighted while the value is blank: the first down is the blank line.
    await pilot.press("down", "down", "enter")
    await until(pilot, lambda: picker.value == "fake", "the fake agent picked")


async def create_and_run(pilot: Pilot[None], app: XumApp) -> None:
    dialog = await open_dialog(pilot)
    await pick_agent(pilot, dialog)
    await pilot.click("#title")
    await pilot.press("enter")  # local, the first runtime
    await until(pilot, lambda: app.selected is not None, "the new workspace")
    ws = app.selected
    assert ws is not None and ws.record.external_agent == "fake"
    await send(pilot, "say hello")
    await until(pilot, lambda: any(REPLY in e.text for e in texts(app)), "the agent's reply")
    await on_screen(pilot, REPLY)
    await on_screen(pilot, "fake (external agent)")  # the bar: none of xum's own settings
    assert "thinking medium" not in screen_text(app)


def texts(app: XumApp) -> list[object]:
    ws = app.selected
    if ws is None:
        return []
    return [e for e in ws.transcript.entries if isinstance(getattr(e, "text", None), str)]


async def test_no_external_agent_configured_leaves_the_choice_out(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 44)) as pilot:
        await start_app(pilot)
        dialog = await open_dialog(pilot)
        assert not dialog.query_one("#agent").display


async def test_a_workspace_of_an_external_agent_runs_a_turn(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(write_script(tmp_path / "s.json", [[{"message": REPLY}]]))
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 44)) as pilot:
        await start_app(pilot)
        await create_and_run(pilot, app)
    assert fake_llm.requests == []  # xum's own model was never asked


async def test_a_dev_container_is_accepted_for_an_external_agent(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(write_script(tmp_path / "s.json", []))
    app = model_app(monkeypatch, fake_llm, tmp_path)
    # Every runtime runs an external agent; the Dev Container was the last one refused (the
    # choice is offered for a project with a devcontainer.json). The container itself:
    # tests/integration/test_external_agent_devcontainer.py.
    config = tmp_path / "repo" / ".devcontainer" / "devcontainer.json"
    config.parent.mkdir()
    config.write_text('{"image": "debian"}\n')
    async with app.run_test(size=(100, 44)) as pilot:
        await start_app(pilot)
        dialog = await open_dialog(pilot)
        await pick_agent(pilot, dialog)
        chosen: list[object] = []
        dialog.dismiss = chosen.append  # type: ignore[method-assign,assignment]
        await pilot.click("#devcontainer")
        await pilot.click("#title")
        await pilot.press("enter")
        await until(pilot, lambda: chosen, "the dialog's choice")
        (choice,) = chosen
        assert getattr(choice, "runtime", None) == "devcontainer"
        assert getattr(choice, "external_agent", None) == "fake"
        assert not notified(app, "not supported")


async def test_attached_the_servers_agents_are_offered_and_run(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "s.json", [[{"message": REPLY}]])
    base = tmp_path / "srv"
    root = base / "home" / ".xum"
    root.mkdir(parents=True, mode=0o700)
    agent = {
        "command": sys.executable,
        "args": ["-m", "xum.testing.fake_acp_agent"],
        "env": {SCRIPT_ENV: str(script)},
    }
    (root / "config.json").write_text(json.dumps({"externalAgents": {"fake": agent}}))
    token = "tui-external-token"
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    server = start_server(base, token, env, repo=make_repo(tmp_path / "repo"))
    try:
        app = XumApp(server.repo, attach=attach_to(ServerTarget(server.url, token)))
        async with app.run_test(size=(110, 44)) as pilot:
            await start_app(pilot)
            await create_and_run(pilot, app)
    finally:
        server.stop()
    assert fake_llm.requests == []
