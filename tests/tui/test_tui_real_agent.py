"""A real third-party agent (Claude Code through claude-code-acp, installed by `make
external-agents`) in a workspace made in the terminal UI's new-workspace dialog: a turn whose
shell command runs through a terminal xum serves, its output and the agent's reply on screen.
The agent talks to a fake model of its own on loopback; xum's own model is never asked."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Select

from tests.support.real_agents import configure, shell_call, skip_without_agents
from tests.tui.support import model_app, on_screen, screen_text, send, start_app, until
from xum.testing import external_agents as agents
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.dialogs import NewWorkspaceDialog

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

REPLY = "The marker was printed."
TURN_S = 60.0  # a real agent's turn on a loaded 2-core machine: a few seconds, bounded here


async def patiently(pilot: Pilot[None], check: Callable[[], object], what: str) -> None:
    """`until` with a real agent's turn as the bound (`until` allows a fake's)."""
    deadline = time.monotonic() + TURN_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{screen_text(pilot.app)}")  # type: ignore[arg-type]
        await pilot.pause(0.05)


async def test_claude_code_runs_a_turn_in_a_workspace_made_in_the_dialog(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skip_without_agents()
    model = agents.AgentModel()
    with fakellm.FakeLLM(responder=model) as llm:
        configure("claude-code", llm, tmp_path / "agent")
        app = model_app(monkeypatch, fake_llm, tmp_path)
        async with app.run_test(size=(110, 44)) as pilot:
            await start_app(pilot)
            await pilot.press("ctrl+n")
            await on_screen(pilot, "New workspace")
            dialog = app.screen
            assert isinstance(dialog, NewWorkspaceDialog)
            await until(pilot, lambda: not dialog.workers, "the dialog's probes")
            picker = dialog.query_one("#agent", Select)
            await pilot.click("#agent")
            await pilot.press("down", "down", "enter")  # the first external agent
            await until(pilot, lambda: picker.value == "claude-code", "Claude Code picked")
            await pilot.click("#title")
            await pilot.press("enter")  # local, the first runtime
            await until(pilot, lambda: app.selected is not None, "the new workspace")
            ws = app.selected
            assert ws is not None and ws.record.external_agent == "claude-code"

            model.script(shell_call("claude-code", "echo marker-$((6 * 7))"), fakellm.reply(REPLY))
            await send(pilot, "print the marker")
            await patiently(pilot, lambda: REPLY in screen_text(app), "the agent's reply")
            # The command's output, from the terminal xum ran for the agent (the command line
            # itself reads `marker-$((6 * 7))`).
            assert "marker-42" in screen_text(app), screen_text(app)
            assert "marker-42" in model.turn_requests[-1].body.decode("utf-8", "replace")
        assert not llm.errors, llm.errors
    assert fake_llm.requests == []  # xum's own model was never asked
