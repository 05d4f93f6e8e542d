"""The inbox in the terminal UI: Ctrl+L lists what waits (an approval, answered there with `y`,
leaves the list and the workspace's panel), a turn that ends while another workspace is on
screen waits as a notice, and Ctrl+F opens its workspace, which reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import (
    held_command,
    model_app,
    on_screen,
    send,
    start_app,
    until,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.inbox import InboxScreen


async def test_the_inbox_lists_answers_and_leads_to_what_waits(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "pushed.marker"
    # A force push is critical in every mode: it waits for a person.
    push = f"git push --force nowhere main 2>/dev/null; touch {marker}"
    script, started, release = held_command(tmp_path, "held")
    fake_llm.script(
        fakellm.tool_call("bash", {"script": push, "display_name": "force push"}),
        fakellm.text("pushed"),
        fakellm.tool_call("bash", {"script": script, "display_name": "held"}),
        fakellm.text("held and done"),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        await send(pilot, "force push it")
        await until(pilot, lambda: app.selected and app.selected.approval, "the approval")
        ws = app.selected
        assert ws is not None
        await pilot.press("ctrl+l")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen), "the inbox")
        await on_screen(pilot, "approval")
        await on_screen(pilot, "approve bash: git push --force")
        await pilot.press("y")
        await until(pilot, lambda: not ws.running, "the turn to end")
        assert marker.exists() and ws.approval is None
        # On screen as it ended: read, so nothing waits.
        await on_screen(pilot, "Nothing waits for you.")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, InboxScreen), "the inbox to close")

        # The next turn ends while the draft row is on screen: it waits as a notice.
        await send(pilot, "hold it")
        await until(pilot, started.exists, "the held command")
        await app.select(None)
        release.touch()
        await until(pilot, lambda: not ws.running, "the held turn to end")
        inbox = app.runner.hosts.inbox
        await until(pilot, lambda: [i.kind for i in inbox.items()] == ["turn-ended"], "a notice")
        await pilot.press("ctrl+f")
        await until(pilot, lambda: app.selected is ws, "the waiting workspace opened")
        assert inbox.items() == []
